#!/usr/bin/env bash
# End-to-end load over loopback TCP with the release build: starts an accessory on a fresh state
# directory, has the simulated iPhone forward COUNT notifications at RATE per second (0: unpaced),
# and prints the phone's summary beside the accessory's CPU time (user + system, from
# /proc/PID/stat) per acknowledged notification, its threads' wake-ups (voluntary context
# switches, from /proc/PID/task/*/status) per notification, and its peak and final RSS.
#
#   Benchmarks/load.sh [--count N] [--rate R] [--group N] [--retain N] [--commit-window MS] [--busy] [--restart] [--keep DIR]
#
# --group sends N notifications back to back at each due time, the groups spaced to keep the
# rate, so that one wake-up of the accessory carries N of them.
# --busy keeps every CPU busy with a `nice 19` loop during the run, so that no virtual CPU idles
# between notifications; the figure is still the accessory's own CPU time. Compare it with a run
# without --busy.
# --retain sets the store's retention count (the default policy keeps 2000, so a longer run
# prunes as it goes); --commit-window is the accessory's (default 3 ms).
# --restart also restarts the accessory on the filled store and reports its RSS once it listens
# and after one more notification (the "RSS after a restart with N stored" figure).
# The state directory goes under $TMPDIR (default /var/tmp, a real disk: tmpfs has no fsync cost).
# NB_BIN runs another build of notifbridge as it is, without building (a copy of an earlier one,
# to compare two builds run by run on the same machine state).
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/accessory.sh

count=20000 rate=3000 group=1 busy=0 restart=0 keep="" retain="" window=3
usage() { echo "usage: $0 [--count N] [--rate R] [--group N] [--retain N] [--commit-window MS] [--busy] [--restart] [--keep DIR]" >&2; exit 2; }
# Checks option $1's value $2 against $3: "positive" (a whole number above 0), "whole" (0 or
# above) or "decimal" (0 or above, with a fraction if need be).
number() {
    local pattern='^[0-9]+$'
    [[ $3 == decimal ]] && pattern='^[0-9]+([.][0-9]+)?$'
    if [[ $2 =~ $pattern ]] && { [[ $3 != positive ]] || (( 10#$2 > 0 )); }; then return 0; fi
    local wanted
    case $3 in positive) wanted="a whole number above 0" ;; whole) wanted="a whole number, 0 or above" ;; *) wanted="a number, 0 or above" ;; esac
    echo "$1 takes $wanted, not '$2'" >&2
    exit 2
}
while [[ $# -gt 0 ]]; do
    case "$1" in
        --count) number "$1" "${2:-}" positive; count=$2; shift 2 ;;
        --rate) number "$1" "${2:-}" decimal; rate=$2; shift 2 ;;
        --group) number "$1" "${2:-}" positive; group=$2; shift 2 ;;
        --busy) busy=1; shift ;;
        --retain) number "$1" "${2:-}" positive; retain=$2; shift 2 ;;
        --commit-window) number "$1" "${2:-}" whole; window=$2; shift 2 ;;
        --restart) restart=1; shift ;;
        --keep) [[ -n "${2:-}" ]] || { echo "--keep takes a directory" >&2; exit 2; }; keep=$2; shift 2 ;;
        *) usage ;;
    esac
done

# NB_BIN is taken as it is: no build.
[[ -n ${NB_BIN:-} ]] || swift build -c release --product notifbridge >/dev/null
bin=${NB_BIN:-.build/release/notifbridge}
state=${keep:-$(mktemp -d "${TMPDIR:-/var/tmp}/nb-load.XXXXXX")}
if [[ -n "$retain" ]]; then
    mkdir -p "$state" && chmod 700 "$state"
    echo "{\"retention\": {\"maxCount\": $retain}}" >"$state/policy.json"
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
accessory="" spinners=()
cleanup() {
    for spinner in "${spinners[@]}"; do kill "$spinner" 2>/dev/null; done
    [[ -n "$accessory" ]] && kill "$accessory" 2>/dev/null && wait "$accessory" 2>/dev/null
    [[ -z "$keep" ]] && rm -rf "$state" "$state.log"
    return 0
}
trap cleanup EXIT

clock_ticks=$(getconf CLK_TCK)
# utime and stime of a process, in clock ticks (fields 14 and 15 of /proc/PID/stat).
cpu_ticks() { awk '{ print $14, $15 }' "/proc/$1/stat"; }
rss_kb() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }
peak_kb() { awk '/^VmHWM/ { print $2 }' "/proc/$1/status"; }
# RSS split: private (anonymous, including copied-on-write pages) and mapped from files (the
# binary's and the libraries' code and read-only data: clean, dropped and read again under
# memory pressure).
rss_parts() { awk '/^RssAnon/ { anon = $2 } /^RssFile/ { file = $2 } END { printf "%.1f MiB private, %.1f MiB mapped from files", anon / 1024, file / 1024 }' "/proc/$1/status"; }
# kB as MiB to a tenth, so that a figure near a line (issue 10's 40 MB) is not rounded down to it.
mib() { awk -v kb="$1" 'BEGIN { printf "%.1f MiB", kb / 1024 }'; }
# Each thread of process $1 with its voluntary context switches (each one a sleep and a wake-up
# again): "tid name count" lines. The name's spaces become underscores.
switches() {
    local task
    for task in /proc/"$1"/task/*; do
        echo "${task##*/} $(tr ' ' _ <"$task/comm" 2>/dev/null) $(awk '/^voluntary_ctxt_switches/ { print $2 }' "$task/status" 2>/dev/null)"
    done
}

start_accessory() {
    "$bin" accessory --state "$state" --port "$port" --commit-window "$window" >"$state.log" 2>&1 &
    accessory=$!
    wait_listening "$port" "$state.log"
}

start_accessory
if [[ $busy == 1 ]]; then
    for _ in $(seq "$(nproc)"); do
        nice -n 19 sh -c 'while :; do :; done' &
        spinners+=($!)
    done
fi
read -r user_before system_before < <(cpu_ticks "$accessory")
switches_before=$(switches "$accessory")
# --group only when asked for, so that NB_BIN can be a build from before the option.
grouping=(); [[ $group != 1 ]] && grouping=(--group "$group")
summary=$("$bin" phone load --port "$port" --count "$count" --rate "$rate" "${grouping[@]}" | tail -2)
read -r user_after system_after < <(cpu_ticks "$accessory")
switches_after=$(switches "$accessory")
for spinner in "${spinners[@]}"; do kill "$spinner" 2>/dev/null; done
spinners=()
echo "$summary"
acknowledged=$(sed -n 's/.* \([0-9]*\) acknowledged.*/\1/p' <<<"$summary" | head -1)
awk -v u=$((user_after - user_before)) -v s=$((system_after - system_before)) -v hz="$clock_ticks" -v n="${acknowledged:-0}" 'BEGIN {
    if (n > 0) printf "accessory CPU: %.2f s for %d notifications = %.1f µs per notification (user %.1f, system %.1f)\n", (u + s) / hz, n, (u + s) / hz / n * 1e6, u / hz / n * 1e6, s / hz / n * 1e6
}'
# A thread that started during the run counts from 0; one that ended is not counted.
awk -v n="${acknowledged:-0}" 'NR == FNR { before[$1] = $3; next }
    { woken[$2] += $3 - before[$1]; total += $3 - before[$1] }
    END {
        if (n == 0) exit
        for (name in woken) if (woken[name] > 0) parts = parts sprintf("%s%s %.2f", parts == "" ? "" : ", ", name, woken[name] / n)
        printf "accessory thread wake-ups: %.2f per notification (%s)\n", total / n, parts
    }' <(echo "$switches_before") <(echo "$switches_after")
echo "accessory RSS: $(mib "$(rss_kb "$accessory")") now ($(rss_parts "$accessory")), $(mib "$(peak_kb "$accessory")") peak"

if [[ $restart == 1 ]]; then
    kill "$accessory"; wait "$accessory" 2>/dev/null || true
    start_accessory
    echo "after a restart with $acknowledged stored: RSS $(mib "$(rss_kb "$accessory")") listening ($(rss_parts "$accessory"))"
    "$bin" phone load --port "$port" --count 1 >/dev/null
    echo "after a restart with $acknowledged stored: RSS $(mib "$(rss_kb "$accessory")") after one more ($(rss_parts "$accessory")), $(mib "$(peak_kb "$accessory")") peak"
fi
