#!/usr/bin/env bash
# Measures what this machine charges a thread to sleep and wake again, by a timer and by a socket,
# at the rates Benchmarks/load.sh uses (Benchmarks/WakeupFloor/main.swift says how). Read it
# beside load.sh's figures: at a given rate, a notification cannot cost the accessory less than
# its wake-ups per notification times this.
#
#   Benchmarks/floor.sh [--seconds S]
set -euo pipefail
cd "$(dirname "$0")"
out=$(mktemp -d "${TMPDIR:-/tmp}/nb-floor.XXXXXX")
trap 'rm -rf "$out"' EXIT
swiftc -O WakeupFloor/main.swift -o "$out/wakeup-floor"
"$out/wakeup-floor" "$@"
