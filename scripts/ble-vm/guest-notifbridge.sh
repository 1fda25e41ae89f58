#!/usr/bin/env bash
# NotifBridge over real BlueZ (runs inside the VM): the accessory daemon as a GATT peripheral
# on one btvirt controller, the simulated iPhone as a GATT central on the other, and the
# accessory's store checked afterwards. Started by run.sh through guest-env.sh.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=guest-env.sh
. "${NBVM_SCRIPTS:-$(dirname "${BASH_SOURCE[0]}")}/guest-env.sh"

REPO=$NBVM_REPO
CORPUS=$REPO/Fixtures/corpus/messages-thread.json

# Timeouts for a TCG-emulated guest, where every step is several times slower than on
# hardware: finding and connecting, and then the key exchange and each wait for receipts.
BLE_TIMEOUT=90
PHONE_TIMEOUT=60

# start_accessory SUITE STATE: the daemon advertising on the peripheral controller; sets ACC_PID.
# Each test starts from clean adapters (guest-env.sh): no connection, no cached device, no
# scan or advertisement left from the test before.
start_accessory() {
  local bin
  nbvm_clean_adapters
  bin=$(nbvm_bin notifbridge)
  nbvm_bg "accessory-$1" "$bin" accessory --transport ble --adapter "$PERIPHERAL_ADAPTER" \
    --suite "$1" --state "$2" --log-level info
  ACC_PID=$NBVM_BG_PID
  if ! nbvm_wait_for 60 grep -q '^advertising "NotifBridge"' "$NBVM_LOG_DIR/accessory-$1.log"; then
    cat "$NBVM_LOG_DIR/accessory-$1.log"
    echo "the accessory did not start advertising on $PERIPHERAL_ADAPTER"
    return 1
  fi
}

# expected_ids FILE: source/id of every notification FILE leaves on the accessory.
expected_ids() {
  python3 - "$1" <<'PY'
import json, sys
shown = {}
for op in json.load(open(sys.argv[1])):
    kind = op["op"]
    if kind in ("add", "update"):
        n = op["notification"]; shown[(n["source"], n["id"])] = True
    elif kind == "remove":
        shown.pop((op["source"], op["id"]), None)
    elif kind == "removeAll":
        shown.clear()
print("\n".join(sorted(f"{s} {i}" for s, i in shown)))
PY
}

# forward_corpus SUITE: every notification of the corpus file, some larger than one write,
# is acknowledged over BLE and is on the accessory afterwards.
forward_corpus() {
  local suite=$1 state=/tmp/nb-forward-$1 bin
  bin=$(nbvm_bin notifbridge)
  start_accessory "$suite" "$state"
  timeout 240 "$bin" phone forward --transport ble --adapter "$CENTRAL_ADAPTER" --suite "$suite" --file "$CORPUS" \
    --ble-timeout "$BLE_TIMEOUT" --timeout "$PHONE_TIMEOUT"
  local listed expected
  listed=$("$bin" respond list --state "$state" | grep -v '^ ' | awk '{print $1, $2}' | sort)
  expected=$(expected_ids "$CORPUS")
  echo "accessory shows:"; echo "$listed"
  grep -E 'chunks of [0-9]+ bytes' "$NBVM_LOG_DIR/accessory-$suite.log" || true
  nbvm_stop "$ACC_PID"
  [ "$listed" = "$expected" ] || { echo "expected:"; echo "$expected"; echo "the accessory's store differs from what was forwarded"; return 1; }
  echo "all $(wc -l <<<"$expected") notifications stored with $suite"
}

# A link dropped in the middle of a multi-chunk message: no partial notification is stored,
# the next connection resumes and the message arrives once.
disconnect_mid_message() {
  local state=/tmp/nb-interrupted bin
  bin=$(nbvm_bin notifbridge)
  start_accessory xwing "$state"
  timeout 300 "$bin" phone play "$REPO/Scenarios/disconnect-mid-message.yaml" --transport ble \
    --adapter "$CENTRAL_ADAPTER" --state "$state" --ble-timeout "$BLE_TIMEOUT" --timeout "$PHONE_TIMEOUT"
  nbvm_stop "$ACC_PID"
}

# While one iPhone holds the link, a second central gets nothing stored and the first iPhone's
# link and notification are unaffected. (Under btvirt, bluetoothd's service discovery over the
# second connection fails, so the write refusal itself is covered by PeripheralBusTests.)
second_central_refused() {
  local state=/tmp/nb-two bin rc=0 out
  [ -n "${SECOND_CENTRAL_ADAPTER:-}" ] || { echo "SKIP: no third controller"; return 77; }
  bin=$(nbvm_bin notifbridge)
  start_accessory xwing "$state"
  nbvm_bg phone-first "$bin" phone forward --transport ble --adapter "$CENTRAL_ADAPTER" \
    --id first --title First --body "holds the link" --linger 150 --ble-timeout "$BLE_TIMEOUT" --timeout "$PHONE_TIMEOUT"
  local first=$NBVM_BG_PID
  if ! nbvm_wait_for 150 grep -q 'receipt #1: stored' "$NBVM_LOG_DIR/phone-first.log"; then
    cat "$NBVM_LOG_DIR/phone-first.log"; echo "the first iPhone did not deliver its notification"; return 1
  fi
  out=$(timeout 120 "$bin" phone forward --transport ble --adapter "$SECOND_CENTRAL_ADAPTER" \
    --id second --title Second --body "must be refused" --ble-timeout 60 2>&1) || rc=$?
  echo "$out"
  nbvm_stop "$first"
  local listed
  listed=$("$bin" respond list --state "$state" | grep -v '^ ' | awk '{print $2}' | sort | tr '\n' ' ')
  nbvm_stop "$ACC_PID"
  echo "accessory shows: $listed"
  [ "$rc" != 0 ] || { echo "the second central was served while the first held the link"; return 1; }
  [ "$listed" = "first " ] || { echo "expected only the first iPhone's notification"; return 1; }
}

nbvm_test ble-forward-xwing forward_corpus xwing
nbvm_test ble-forward-p256 forward_corpus p256
nbvm_test ble-disconnect-mid-message disconnect_mid_message
nbvm_test ble-second-central-refused second_central_refused
