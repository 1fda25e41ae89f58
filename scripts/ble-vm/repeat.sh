#!/usr/bin/env bash
# Run the BLE VM test several times in a row, exactly as .ci/run calls it, and count runs.
#
#   sudo scripts/ble-vm/repeat.sh [RUNS] [guest-test.sh ...]
#
# RUNS defaults to 10 and the guest test to guest-notifbridge.sh. The first run installs the
# packages like CI does; later runs skip apt. Each run's results and guest logs are kept in
# $NBVM_WORK_DIR/runs/N (default .build/ble-vm/runs/N). A run passes when run.sh exits 0, that
# is when every test in it passed. The last line is "N passed, N failed" over runs.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
RUNS=${1:-10}
shift || true
[ $# -gt 0 ] || set -- "$HERE/guest-notifbridge.sh"
case $RUNS in ''|*[!0-9]*) echo "repeat.sh: RUNS must be a whole number, not '$RUNS'" >&2; exit 2 ;; esac
[ "$RUNS" -ge 1 ] && [ "$RUNS" -le 1000 ] || { echo "repeat.sh: RUNS must be from 1 to 1000" >&2; exit 2; }

WORK=${NBVM_WORK_DIR:-$REPO/.build/ble-vm}
KEEP=$WORK/runs
rm -rf "$KEEP"; mkdir -p "$KEEP"

passed=0 failed=0
summary=()
for ((i = 1; i <= RUNS; i++)); do
  apt=()
  [ "$i" = 1 ] || apt=(--no-apt)
  t0=$(date +%s)
  if "$HERE/run.sh" "${apt[@]}" "$@" > "$KEEP/$i.log" 2>&1; then
    passed=$((passed + 1)); verdict=pass
  else
    failed=$((failed + 1)); verdict=FAIL
  fi
  cp -r "$WORK/run" "$KEEP/$i" 2>/dev/null || true
  tests=$(tail -n 1 "$KEEP/$i.log")
  line="run $i: $verdict ($tests) in $(( $(date +%s) - t0 ))s"
  summary+=("$line")
  echo "$line"
  if [ "$verdict" = FAIL ]; then
    grep '^FAIL ' "$KEEP/$i.log" | sed 's/^/    /' || true
  fi
done

echo
echo "==== $RUNS runs of run.sh $* (logs in $KEEP)"
printf '%s\n' "${summary[@]}"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
