#!/usr/bin/env bash
# Profiles the accessory (release build) under the simulated iPhone's load over loopback TCP and
# splits its CPU time into parts, in µs per notification (Benchmarks/profile-split.py). perf's
# DWARF unwinding costs CPU of its own, so the total is above load.sh's figure for the same load;
# compare parts and runs with each other, not with load.sh.
#
#   Benchmarks/profile.sh [--count N] [--rate R] [--keep FILE]
#
# Needs perf (linux-perf). This VM has no hardware counters: the profile samples cpu-clock.
# --keep writes perf's data to FILE (for `perf report -i FILE`) instead of a temporary file.
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/accessory.sh

count=20000 rate=3000 keep=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --count) [[ $# -ge 2 && $2 =~ ^[1-9][0-9]*$ ]] || { echo "--count takes a positive number" >&2; exit 2; }; count=$2; shift 2 ;;
        --rate) [[ $# -ge 2 && $2 =~ ^[0-9]+$ ]] || { echo "--rate takes a number (0: unpaced)" >&2; exit 2; }; rate=$2; shift 2 ;;
        --keep) [[ $# -ge 2 ]] || { echo "--keep takes a file" >&2; exit 2; }; keep=$2; shift 2 ;;
        *) echo "usage: $0 [--count N] [--rate R] [--keep FILE]" >&2; exit 2 ;;
    esac
done
command -v perf >/dev/null || { echo "perf is not installed (apt-get install linux-perf)" >&2; exit 1; }

# NB_BIN is taken as it is: no build.
[[ -n ${NB_BIN:-} ]] || swift build -c release --product notifbridge >/dev/null
bin=${NB_BIN:-.build/release/notifbridge}
state=$(mktemp -d "${TMPDIR:-/var/tmp}/nb-profile.XXXXXX")
data=${keep:-$state.perf}
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
frequency=2999
accessory="" recorder=""
cleanup() {
    [[ -n "$recorder" ]] && kill -INT "$recorder" 2>/dev/null && wait "$recorder" 2>/dev/null
    [[ -n "$accessory" ]] && kill "$accessory" 2>/dev/null && wait "$accessory" 2>/dev/null
    rm -rf "$state" "$state.log" "$state.txt"
    [[ -z "$keep" ]] && rm -f "$state.perf"
    return 0
}
trap cleanup EXIT

"$bin" accessory --state "$state" --port "$port" >"$state.log" 2>&1 &
accessory=$!
wait_listening "$port" "$state.log"
perf record -q -F "$frequency" -e cpu-clock --call-graph dwarf,16384 -p "$accessory" -o "$data" 2>/dev/null &
recorder=$!
sleep 0.5
summary=$("$bin" phone load --port "$port" --count "$count" --rate "$rate" | tail -2)
kill -INT "$recorder"; wait "$recorder" 2>/dev/null || true
recorder=""
echo "$summary"
acknowledged=$(sed -n 's/.* \([0-9]*\) acknowledged.*/\1/p' <<<"$summary" | head -1)
[[ ${acknowledged:-0} -gt 0 ]] || { echo "nothing was acknowledged" >&2; exit 1; }
perf script -i "$data" -F comm,tid,ip,sym 2>/dev/null >"$state.txt"
python3 Benchmarks/profile-split.py "$state.txt" "$acknowledged" "$frequency"
