#!/usr/bin/env python3
"""Memory and log volume of the accessory daemon under a hostile peer and under unpaced load.

    scripts/stress/hostile-peers.py [--binary .build/release/notifbridge] [--rounds 10]
                                    [--connections 2000] [--events 40000]

1. Attack: --rounds times, --connections TCP connections at once from loopback, each opening
   4 partial messages that declare 128 KiB (PROTOCOL.md 3.1) and sending 1 KiB of each, held
   for 2 s and then dropped.
2. Load: `notifbridge phone load --count --events --rate 0` against a fresh accessory.

For each it prints the accessory's resident memory before, at its peak (VmHWM from /proc) and
after, and how many lines the accessory wrote at the default log level (its log, and the
presenter's lines: three for each notification stored under load). Builds the release
binary first if it is missing. Talks only to 127.0.0.1. Exits non-zero if a target is missed
(--max-attack-mb, --max-load-mb).
"""
import argparse
import asyncio
import os
import resource
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DECLARED = 128 * 1024


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def status_kb(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


class Accessory:
    """The daemon as a child process, its output counted line by line."""

    def __init__(self, binary, state):
        self.port = free_port()
        self.lines = 0
        self.proc = subprocess.Popen(
            [binary, "accessory", "--state", state, "--port", str(self.port)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
        self.reader = threading.Thread(target=self._count, daemon=True)
        self.reader.start()
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if self.proc.poll() is not None:
                    sys.exit(f"the accessory exited with status {self.proc.returncode}")
                time.sleep(0.2)
        else:
            sys.exit("the accessory did not listen within 60 s")
        time.sleep(0.5)
        self.lines = 0  # count what peers cause, not start-up

    def _count(self):
        for _ in self.proc.stdout:
            self.lines += 1

    def rss_mb(self):
        return status_kb(self.proc.pid, "VmRSS") / 1024

    def peak_mb(self):
        return status_kb(self.proc.pid, "VmHWM") / 1024

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def frame(chunk):
    return struct.pack("<H", len(chunk)) + chunk


def attack_bytes():
    out = b""
    for message_id in range(4):
        out += frame(bytes([0x01, message_id]) + struct.pack("<I", DECLARED) + b"\xaa" * 1024)
    return out


async def one_peer(port, payload, hold):
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(payload)
        await writer.drain()
        await asyncio.sleep(hold)
        writer.close()
    except OSError:
        pass  # refused or reset: the accessory protecting itself


async def attack(port, connections, rounds):
    payload = attack_bytes()
    for _ in range(rounds):
        await asyncio.gather(*(one_peer(port, payload, 2.0) for _ in range(connections)))


def report(name, before, peak, after, lines, extra=""):
    print(f"{name}: RSS {before:.1f} MB before, peak {peak:.1f} MB, {after:.1f} MB after; "
          f"{lines} lines of output at the default log level (log and presenter){extra}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(REPO, ".build/release/notifbridge"))
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=2000)
    parser.add_argument("--events", type=int, default=40000)
    parser.add_argument("--max-attack-mb", type=float, default=64)
    parser.add_argument("--max-load-mb", type=float, default=60)
    args = parser.parse_args()
    if not os.path.exists(args.binary):
        print("building the release binary (swift build -c release --product notifbridge)")
        subprocess.run(["swift", "build", "-c", "release", "--product", "notifbridge"], cwd=REPO, check=True)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, args.connections + 512)), hard))

    failed = []
    with tempfile.TemporaryDirectory() as state:
        accessory = Accessory(args.binary, os.path.join(state, "attack"))
        before = accessory.rss_mb()
        started = time.time()
        asyncio.run(attack(accessory.port, args.connections, args.rounds))
        time.sleep(3)
        report(f"attack ({args.rounds} rounds of {args.connections} connections x 4 partial 128 KiB messages)",
               before, accessory.peak_mb(), accessory.rss_mb(), accessory.lines, f"; {time.time() - started:.0f} s")
        if accessory.peak_mb() > args.max_attack_mb:
            failed.append(f"attack peak {accessory.peak_mb():.1f} MB > {args.max_attack_mb} MB")
        accessory.stop()

        accessory = Accessory(args.binary, os.path.join(state, "load"))
        before = accessory.rss_mb()
        started = time.time()
        load = subprocess.run([args.binary, "phone", "load", "--port", str(accessory.port), "--count", str(args.events),
                               "--rate", "0", "--drain", "120"], capture_output=True, text=True)
        took = time.time() - started
        summary = (load.stdout.strip().splitlines() or ["(no output)"])[-1]
        report(f"load ({args.events} unpaced events)", before, accessory.peak_mb(), accessory.rss_mb(), accessory.lines,
               f"; {took:.0f} s; phone: {summary}")
        if load.returncode != 0:
            failed.append(f"phone load failed: {load.stderr.strip()[-300:]}")
        if accessory.peak_mb() > args.max_load_mb:
            failed.append(f"load peak {accessory.peak_mb():.1f} MB > {args.max_load_mb} MB")
        accessory.stop()

    for line in failed:
        print("MISSED: " + line)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
