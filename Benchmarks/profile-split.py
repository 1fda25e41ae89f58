#!/usr/bin/env python3
"""Splits a cpu-clock profile of the accessory into parts, in µs per notification.

    Benchmarks/profile-split.py SCRIPT_OUTPUT NOTIFICATIONS [FREQUENCY]

SCRIPT_OUTPUT is `perf script -F comm,tid,ip,sym` of a `perf record -e cpu-clock
--call-graph dwarf` (Benchmarks/profile.sh makes both). Each sample goes to the first part
whose pattern matches a frame of its call stack, so the order of PARTS matters: the commit's
system calls before the commit, the store's statements before the batch that holds them.
A sample is 1/FREQUENCY seconds (default 2999, profile.sh's -F).
"""
import collections
import re
import sys

PARTS = [
    ("commit: fdatasync", r"fdatasync"),
    ("commit: WAL writes", r"pwrite"),
    ("commit: SQLite", r"sqlite3PagerCommitPhaseOne|sqlite3VdbeHalt"),
    ("retention", r"RetentionV7enforce"),
    ("store: the event's statements", r"C5write33_"),
    ("store: reading the ledger state", r"ledgerState"),
    ("store: planning an event", r"C5apply33_"),
    ("store: the batch", r"applyBatch"),
    ("the terminal presenter", r"Presenter|present\(|LineWriter|terminalSafe"),
    ("sealing receipts", r"delivered|seal"),
    ("decrypting and decoding", r"ConnectionV8received"),
    ("writing to the link", r"ChunkLink.*write|writeAndFlush|flush"),
    ("the connection's commit step", r"ConnectionRunnerV6commit"),
    ("the connection's other steps", r"ConnectionRunnerV7perform|ConnectionRunnerV6handle"),
    ("waiting: epoll", r"epoll_wait"),
    ("socket reads", r"BaseSocketChannelC9readable"),
    ("futex", r"futex"),
    ("timers", r"timerfd|Timer|sleep"),
]


def stacks(path):
    """Yields each sample's frames (symbol names), innermost first."""
    frames = []
    with open(path, errors="replace") as lines:
        for line in lines:
            if line.startswith(("\t", " ")):
                text = line.strip()
                if text:
                    frames.append(text.split(" ", 1)[-1])
            else:
                if frames:
                    yield frames
                frames = []
    if frames:
        yield frames


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    path, notifications = sys.argv[1], int(sys.argv[2])
    frequency = float(sys.argv[3]) if len(sys.argv) == 4 else 2999.0
    if notifications <= 0 or frequency <= 0:
        sys.exit("NOTIFICATIONS and FREQUENCY must be positive")
    patterns = [(name, re.compile(pattern)) for name, pattern in PARTS]
    counts = collections.Counter()
    total = 0
    for frames in stacks(path):
        total += 1
        part = next((name for name, pattern in patterns if any(pattern.search(f) for f in frames)), "the rest")
        counts[part] += 1
    if total == 0:
        sys.exit(f"no samples in {path}")
    scale = 1e6 / frequency / notifications
    width = max(len(name) for name, _ in PARTS + [("the rest", "")])
    print(f"{'part':{width}}  µs per notification")
    for name in [name for name, _ in PARTS] + ["the rest"]:
        if counts[name]:
            print(f"{name:{width}}  {counts[name] * scale:7.1f}")
    print(f"{'total (perf unwinding included)':{width}}  {total * scale:7.1f}")


if __name__ == "__main__":
    main()
