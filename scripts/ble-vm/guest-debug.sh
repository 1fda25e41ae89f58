#!/usr/bin/env bash
set -euo pipefail
. "${NBVM_SCRIPTS}/guest-env.sh"
REPO=$NBVM_REPO
bin=$(nbvm_bin notifbridge)
one() {
  nbvm_bg acc "$bin" accessory --transport ble --adapter "$PERIPHERAL_ADAPTER" --state /tmp/s1 --log-level trace
  nbvm_wait_for 60 grep -q '^advertising' "$NBVM_LOG_DIR/acc.log"
  timeout 120 "$bin" phone forward --transport ble --adapter "$CENTRAL_ADAPTER" --title hi --body there --log-level trace
}
nbvm_test one one
