#!/usr/bin/env bash
# The soak: runs each named harness to a total of 10 million executions (release build,
# AddressSanitizer on) in segments, so that a machine that goes away loses one segment, not
# hours. It builds once, then each segment is one `run.sh HARNESS --runs N --release
# --skip-build`; its row is appended to the log (FuzzTesting/soak.tsv, committed, so that a soak
# outlives the machine it ran on) with a hash of the code that harness runs (harness-code.py: its
# own sources and the targets it reaches, not the whole tree). Segments count toward the total
# only while that hash matches the checkout's, so a soak never mixes code versions, and a change
# elsewhere does not restart it.
#
#   FuzzTesting/soak.sh HARNESS... [--target N] [--segment N] [--log FILE]
#   FuzzTesting/soak.sh --report [HARNESS...] [--log FILE]
#
# --log names another log: a soak of an older commit, run in its own worktree, writes to the
# newer checkout's log, where the rows are committed.
#
# Two instances can share a checkout: a harness is soaked by one of them at a time (flock on
# .build/fuzz/<harness>/soak.lock) and the others move on to their next harness. Exits 1 at the
# first segment that finds something (its inputs are in .build/fuzz/<harness>/artifacts/; replay
# one as the README says for the stacks of the allocation and free behind it).
set -euo pipefail
caller=$PWD
cd "$(dirname "$0")"

target=10000000 segment=500000 report=0 harnesses=() log=$PWD/soak.tsv
usage() { echo "usage: $0 HARNESS... [--target N] [--segment N] [--log FILE] | --report [HARNESS...] [--log FILE]" >&2; exit 2; }
while [[ $# -gt 0 ]]; do
    case "$1" in
        --target) [[ $# -ge 2 && $2 =~ ^[1-9][0-9]*$ ]] || usage; target=$2; shift 2 ;;
        --segment) [[ $# -ge 2 && $2 =~ ^[1-9][0-9]*$ ]] || usage; segment=$2; shift 2 ;;
        --report) report=1; shift ;;
        --log) [[ $# -ge 2 ]] || usage; log=$(cd "$caller" && realpath -m "$2"); shift 2 ;;
        -*) usage ;;
        *) harnesses+=("$1"); shift ;;
    esac
done
all=(reassembler stream-decoder session ledger control apns scenario policy ancs ratchet)
[[ ${#harnesses[@]} -gt 0 ]] || { [[ $report -eq 1 ]] && harnesses=("${all[@]}"); } || usage
for harness in "${harnesses[@]}"; do [[ " ${all[*]} " == *" $harness "* ]] || usage; done

# The code each harness runs, by harness-code.py, which refuses uncommitted changes to it.
code_of() {
    local line
    line=$(python3 harness-code.py "$1") || exit 2
    echo "${line#* }"
}

# The log's columns: finished (UTC), harness, code hash, executions, seconds, commit, failed (0/1).
[[ -f $log ]] || printf 'finished\tharness\tcode\texecutions\tseconds\tcommit\tfailed\n' >"$log"

# No allocation and free stacks in ASan's records: unwinding and storing them for every
# allocation took about a sixth of each input (control: 1,500 → 1,760 inputs a second). Only the
# report of a crash loses them; finding it does not, and replaying its input (README) shows them.
export ASAN_OPTIONS="malloc_context_size=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"

# With autogroup scheduling (on by default in this kernel), nice ranks processes only within
# their session: a soak in a session of its own took as much CPU as a CI run beside it, however
# niced. Started as a session leader (setsid), the soak lowers its whole session as well.
if [[ $report -eq 0 && -w /proc/self/autogroup && "$(ps -o sid= -p $$ | tr -d ' ')" == "$$" ]]; then
    echo 19 >/proc/self/autogroup 2>/dev/null || true
fi

# Executions, seconds and segments so far of harness $1 against code $2: "executions seconds segments".
totals() {
    awk -F'\t' -v h="$1" -v code="$2" '$2 == h && $3 == code && $7 == 0 { e += $4; s += $5; n++ } END { printf "%d %d %d\n", e, s, n }' "$log"
}

if [[ $report -eq 1 ]]; then
    printf '%-15s %12s %8s %9s  %-12s %s\n' harness executions seconds segments code "since"
    for harness in "${harnesses[@]}"; do
        code=$(code_of "$harness") || exit 2
        read -r executions seconds segments < <(totals "$harness" "$code")
        # The first commit whose rows count for this code.
        since=$(awk -F'\t' -v h="$harness" -v code="$code" '$2 == h && $3 == code { print $6; exit }' "$log")
        printf '%-15s %12s %8s %9s  %-12s %s\n' "$harness" "$executions" "$seconds" "$segments" "${code:0:12}" "${since:--}"
    done
    exit 0
fi

# One build for the whole soak, before any segment, so that every segment runs the code its rows
# are hashed against. Instances sharing a checkout build in turn (two SwiftPM builds at once in
# one .build once left a module compiled without one of its files); a build that fails is not a
# finding and adds no row.
mkdir -p .build/fuzz
exec {build_lock}>.build/fuzz/build.lock
flock "$build_lock"
./run.sh "${harnesses[0]}" --release --build-only || { echo "== the build failed: no segment ran" >&2; exit 2; }
exec {build_lock}>&-

for harness in "${harnesses[@]}"; do
    code=$(code_of "$harness") || exit 2
    work=.build/fuzz/$harness
    mkdir -p "$work"
    exec {lock}>"$work/soak.lock"
    if ! flock -n "$lock"; then
        echo "== $harness: another soak holds it; next"
        exec {lock}>&-
        continue
    fi
    while :; do
        read -r executions seconds segments < <(totals "$harness" "$code")
        if (( executions >= target )); then
            echo "== $harness: $executions executions in $segments segments, $seconds s, 0 crashes"
            break
        fi
        runs=$(( target - executions < segment ? target - executions : segment ))
        status=0
        ./run.sh "$harness" --runs "$runs" --release --skip-build >"$work/segment.out" 2>&1 || status=$?
        row=$(awk -v h="$harness" '$1 == h && NF == 5 { r = $0 } END { print r }' "$work/segment.out")
        read -r _ done_runs took _ crashes <<<"${row:-x 0 0 0 1}"
        [[ $done_runs =~ ^[0-9]+$ ]] || done_runs=0
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$harness" "$code" "$done_runs" "$took" \
            "$(git rev-parse --short HEAD)" "$(( status == 0 && crashes == 0 ? 0 : 1 ))" >>"$log"
        if (( status != 0 || crashes != 0 )); then
            cat "$work/segment.out"
            echo "== $harness: a segment failed after $(( executions + done_runs )) executions" >&2
            exit 1
        fi
        echo "== $harness: $(( executions + done_runs )) of $target"
    done
    exec {lock}>&-
done
