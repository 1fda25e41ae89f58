#!/usr/bin/env bash
# Builds the libFuzzer harnesses (AddressSanitizer on) and runs them one after another, each with
# a single worker, then prints a table: harness, executions, seconds, executions per second,
# crashes. Exits 1 if any harness crashed, hung or ran out of memory.
#
#   FuzzTesting/run.sh HARNESS|all [--runs N] [--seconds S] [--release] [--build-only | --skip-build] [-- LIBFUZZER_ARGS...]
#
# HARNESS is a target name (reassembler, stream-decoder, session, ledger, control, apns,
# scenario, policy, ancs, ratchet). --runs and --seconds bound each harness (whichever comes first); with
# neither, a harness runs until it finds something. --release builds with -c release;
# --build-only builds and stops (CI builds beside its VM step); --skip-build runs what such a build
# left (SwiftPM rebuilds most of this sanitizer build even when nothing changed, minutes on CI).
# FUZZ_BUILD_JOBS sets the build's -j (default: SwiftPM's). Each harness grows its corpus in
# .build/fuzz/<harness>/corpus, seeded from Corpus/<harness>; a crash input is written to
# .build/fuzz/<harness>/artifacts/ and belongs in Tests/Regressions/<harness>/ once fixed.
set -euo pipefail
cd "$(dirname "$0")"

all=(reassembler stream-decoder session ledger control apns scenario policy ancs ratchet)
usage() { echo "usage: $0 HARNESS|all [--runs N] [--seconds S] [--release] [--build-only | --skip-build] [-- LIBFUZZER_ARGS...]" >&2; exit 2; }

[[ $# -ge 1 ]] || usage
case "$1" in
    all) harnesses=("${all[@]}") ;;
    *) [[ " ${all[*]} " == *" $1 "* ]] || usage; harnesses=("$1") ;;
esac
shift
limits=() configuration=debug build_only=0 skip_build=0
while [[ $# -gt 0 ]]; do
    case "$1" in
        --runs) [[ $# -ge 2 ]] || usage; limits+=("-runs=$2"); shift 2 ;;
        --seconds) [[ $# -ge 2 ]] || usage; limits+=("-max_total_time=$2"); shift 2 ;;
        --release) configuration=release; shift ;;
        --build-only) build_only=1; shift ;;
        --skip-build) skip_build=1; shift ;;
        --) shift; break ;;
        *) usage ;;
    esac
done
extra=("$@")

# SwiftPM passes its sanitizers to swiftc as separate -sanitize= flags, and swiftc keeps only the
# last one: when that is address, Swift code gets no coverage and libFuzzer fuzzes blind. The
# combined flag, appended after SwiftPM's, gives every Swift module both.
build=(swift build -c "$configuration" --sanitize=fuzzer --sanitize=address -Xswiftc -sanitize=fuzzer,address)
[[ -n "${FUZZ_BUILD_JOBS:-}" ]] && build+=(-j "$FUZZ_BUILD_JOBS")
mkdir -p .build/fuzz
if [[ $skip_build == 0 ]]; then
    echo "== ${build[*]}"
    started=$(date +%s)
    # SwiftPM keeps the main package's file lists in this package's cached build plan: a file
    # added to (or moved between) the main package's targets is "not in scope" until it is
    # planned again. Planning again costs a few seconds.
    rm -f ".build/$configuration.yaml" ".build/$(uname -m)-unknown-linux-gnu/$configuration/description.json"
    "${build[@]}" >.build/fuzz/build.log 2>&1 || { tail -40 .build/fuzz/build.log; exit 1; }
    echo "   built in $(( $(date +%s) - started )) s"
fi
[[ $build_only == 1 ]] && exit 0
bin=$("${build[@]}" --show-bin-path)

# Harness name → executable (FuzzTesting/Package.swift) and the largest input worth trying.
executable() {
    case "$1" in
        reassembler) echo FuzzReassembler ;; stream-decoder) echo FuzzStreamDecoder ;;
        session) echo FuzzSession ;; ledger) echo FuzzLedger ;; control) echo FuzzControl ;;
        apns) echo FuzzAPNs ;; scenario) echo FuzzScenario ;; policy) echo FuzzPolicy ;;
        ancs) echo FuzzANCS ;; ratchet) echo FuzzRatchet ;;
    esac
}
max_len() {
    case "$1" in session | ledger) echo 8192 ;; *) echo 4096 ;; esac
}
for harness in "${harnesses[@]}"; do
    [[ -x $bin/$(executable "$harness") ]] || { echo "no $(executable "$harness") in $bin: build it (run.sh without --skip-build)" >&2; exit 1; }
done

# A clean exit for libFuzzer. Leak checking is off, per input and at exit: LeakSanitizer cannot
# follow references that Swift packs into enum payloads, so it reports globals (the golden keys)
# as leaked; unbounded growth is still caught by -rss_limit_mb and -malloc_limit_mb.
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
rows=() failed=0
for harness in "${harnesses[@]}"; do
    work=.build/fuzz/$harness
    mkdir -p "$work/corpus" "$work/artifacts"
    # crash-, timeout-, oom- and leak- inputs are failures; a slow-unit- file (an input that took
    # over 10 s but finished) is not: it can be a pause of the whole process.
    failures() { find "$work/artifacts" -type f \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'leak-*' \) | wc -l; }
    before=$(failures)
    dict=()
    [[ -f Dictionaries/$harness.dict ]] && dict=("-dict=Dictionaries/$harness.dict")
    echo "== $harness"
    t0=$(date +%s.%N)
    status=0
    "$bin/$(executable "$harness")" "$work/corpus" "Corpus/$harness" \
        -max_len="$(max_len "$harness")" -timeout=10 -rss_limit_mb=2048 -detect_leaks=0 -print_final_stats=1 \
        -artifact_prefix="$work/artifacts/" "${dict[@]}" "${limits[@]}" "${extra[@]}" \
        >"$work/log" 2>&1 || status=$?
    t1=$(date +%s.%N)
    crashes=$(( $(failures) - before ))
    executions=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -1)
    seconds=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", b - a }')
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/log" | tail -1)
    { grep -E "^(#[0-9]+[[:space:]]+DONE|==[0-9]+==ERROR|SUMMARY)|Test unit written|deadly signal|Fatal error|failed: " "$work/log" || true; } | tail -4 | sed 's/^/   /'
    if [[ $status -ne 0 || $crashes -gt 0 ]]; then
        failed=1
        echo "   FAILED (exit $status); log: FuzzTesting/$work/log; inputs: FuzzTesting/$work/artifacts/"
    fi
    rows+=("$(printf '%-15s %12s %8s %9s %8s' "$harness" "${executions:-?}" "$seconds" "${rate:-?}" "$crashes")")
done

printf '\n%-15s %12s %8s %9s %8s\n' harness executions seconds "exec/s" crashes
printf '%s\n' "${rows[@]}"
exit $failed
