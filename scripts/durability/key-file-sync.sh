#!/usr/bin/env bash
# Shows, with strace, that the accessory's key file reaches the disk before the daemon goes on:
# the new key is written to a temporary file and fsynced, renamed over the key file, and then the
# state directory is fsynced, so that a power cut cannot undo the rename. Exits 1 if any step is
# missing or out of order.
#
#   scripts/durability/key-file-sync.sh [NOTIFBRIDGE_BINARY]     (default: .build/debug/notifbridge)
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-.build/debug/notifbridge}
command -v strace >/dev/null || { echo "key-file-sync: strace is needed (apt-get install strace)" >&2; exit 2; }
[[ -x $bin ]] || { echo "key-file-sync: no $bin; run swift build first" >&2; exit 2; }
state=$(mktemp -d)
trace=$state.trace
trap 'rm -rf "$state" "$trace"' EXIT
# The accessory makes its key at its first start; it is interrupted once it listens.
timeout -s INT 5 strace -f -qq -e trace=openat,rename,fsync,close -o "$trace" \
    "$bin" accessory --state "$state" --port 0 >/dev/null 2>&1 || true
python3 - "$trace" "$state" <<'PY'
import re, sys
trace, state = sys.argv[1], sys.argv[2]
fds, events = {}, []
# With -f, a call that another thread interrupts is split in two lines: "fsync(7 <unfinished ...>"
# and later "<... fsync resumed>) = 0". Each is joined back into one line per thread.
unfinished = {}
def calls():
    for line in open(trace):
        pid, line = re.match(r'(\d*)\s*(.*)', line.rstrip("\n")).groups()
        if line.endswith("<unfinished ...>"):
            unfinished[pid] = line[: -len("<unfinished ...>")].rstrip()
        elif m := re.match(r'<\.\.\. \w+ resumed>\s?(.*)', line):
            yield unfinished.pop(pid, "") + m.group(1)
        else:
            yield line
for line in calls():
    if m := re.match(r'openat\(AT_FDCWD, "([^"]+)", ([^,)]+).*\) = (\d+)', line):
        fds[m.group(3)] = m.group(1)
    elif m := re.match(r'fsync\((\d+)\)\s+= 0', line):
        events.append(("fsync", fds.get(m.group(1), "?")))
    elif m := re.match(r'rename\("([^"]+)", "([^"]+)"\) = 0', line):
        events.append(("rename", m.group(2)))
key = next((path for kind, path in events if kind == "rename" and path.endswith(".key")), None)
if key is None:
    sys.exit("key-file-sync: no key file was renamed into place")
wanted = [("fsync", key + ".tmp"), ("rename", key), ("fsync", state)]
position = 0
for event in events:
    if position < len(wanted) and event == wanted[position]:
        position += 1
if position < len(wanted):
    sys.exit(f"key-file-sync: missing or out of order: {wanted[position]} (seen: {events})")
print(f"key-file-sync: {key.rsplit('/', 1)[1]}: temporary file fsynced, renamed, directory fsynced")
PY
