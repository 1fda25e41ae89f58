#!/usr/bin/env bash
# The Bluetooth side of ANCS over real BlueZ (runs inside the VM): the simulated iPhone serves
# the ANCS service on the central controller and connects to the accessory; the accessory's
# bluetoothd resolves that service over the incoming connection, and the accessory's ANCS
# client subscribes and logs what arrives (`ancs <kind> <device> <n> bytes` at debug, values at
# trace). The first checks drive the transport with raw bytes; the last ones play scenarios
# (Scenarios/ancs/) through the whole pipeline and check what the accessory stored and alerted.
# Started by run.sh through guest-env.sh.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=guest-env.sh
. "${NBVM_SCRIPTS:-$(dirname "${BASH_SOURCE[0]}")}/guest-env.sh"

BLE_TIMEOUT=90
ACC_LOG=$NBVM_LOG_DIR/accessory-ancs.log
PHONE_LOG=$NBVM_LOG_DIR/phone-ancs.log

NS_EVENT=0000000101000000
DS_SHORT=0001000000010548656c6c6f
DS_LONG=$(python3 -c 'print(bytes(i % 251 for i in range(600)).hex())')

start_accessory() {
  local log=$1 bin
  nbvm_clean_adapters
  bin=$(nbvm_bin notifbridge)
  nbvm_bg "$(basename "$log" .log)" "$bin" accessory --transport ble --adapter "$PERIPHERAL_ADAPTER" \
    --state "/tmp/nb-$(basename "$log" .log)" --log-level trace
  nbvm_wait_for 60 grep -q '^advertising "NotifBridge"' "$log" || { cat "$log"; echo "the accessory did not start advertising"; return 1; }
}

# The accessory's value lines for one source, concatenated.
received_hex() {
  grep -o "ancs $1 [^ ]* value [0-9a-f]*" "$ACC_LOG" | awk '{printf "%s", $5}'
}

# The accessory-side object path of the iPhone's characteristic with this UUID.
accessory_characteristic() {
  local path
  for path in $(busctl --system tree org.bluez --list | grep -E "^/org/bluez/$PERIPHERAL_ADAPTER/dev_[0-9A-F_]+/service[0-9a-f]+/char[0-9a-f]+$"); do
    [ "$(busctl --system get-property org.bluez "$path" org.bluez.GattCharacteristic1 UUID)" = "s \"$1\"" ] && { echo "$path"; return 0; }
  done
  return 1
}

# One session: NS, a short DS and a 600-byte DS, then a Control Point write from the
# accessory's side while the iPhone lingers. The checks after it read its logs.
ancs_session() {
  local bin raw=/tmp/ancs-session.txt cp
  start_accessory "$ACC_LOG"
  bin=$(nbvm_bin notifbridge)
  printf 'ns %s\nds %s\nsleep 200\nds %s\n' "$NS_EVENT" "$DS_SHORT" "$DS_LONG" > "$raw"
  nbvm_bg phone-ancs "$bin" phone ancs --adapter "$CENTRAL_ADAPTER" --raw-file "$raw" \
    --ble-timeout "$BLE_TIMEOUT" --subscribe-timeout 90 --linger 120 --log-level info
  if ! nbvm_wait_for 200 grep -q 'sent ds 600 bytes' "$PHONE_LOG"; then
    grep -E 'ServicesResolved|gatt|GATT|ancs' "$NBVM_LOG_DIR/bluetoothd.log" | tail -n 30 || true
    cat "$PHONE_LOG"; echo "--- accessory"; grep -i 'ancs\|central\|error' "$ACC_LOG" | tail -n 20
    echo "the iPhone did not get through its raw file"; return 1
  fi
  nbvm_wait_for 30 bash -c "[ \$(grep -o 'ancs data-source [^ ]* value [0-9a-f]*' '$ACC_LOG' | awk '{printf \"%s\", \$5}' | wc -c) -ge $(( ${#DS_SHORT} + ${#DS_LONG} )) ]" || true
  cp=$(accessory_characteristic 69d1d8f3-45e1-49a8-9821-9bbdfdaad9d9) || { busctl --system tree org.bluez --list; echo "no Control Point under $PERIPHERAL_ADAPTER"; return 1; }
  echo "Control Point at $cp"
  busctl --system call org.bluez "$cp" org.bluez.GattCharacteristic1 WriteValue 'aya{sv}' 3 0 1 2 1 type s request
  nbvm_wait_for 30 grep -q '^control-point 000102$' "$PHONE_LOG" || { cat "$PHONE_LOG"; echo "the Control Point write did not reach the iPhone"; return 1; }
  cat "$PHONE_LOG"
  grep 'ancs ' "$ACC_LOG" | grep -v ' value ' | sed 's/^.*ancs /ancs /'
}

subscription_order() {
  grep -E '^(un)?subscribed ' "$PHONE_LOG"
  [ "$(grep -E '^subscribed ' "$PHONE_LOG" | head -n 2 | tr '\n' ' ')" = "subscribed data-source subscribed notification-source " ] \
    || { echo "expected Data Source, then Notification Source"; return 1; }
  grep -q 'ancs ready /org/bluez/' "$ACC_LOG" || { echo "the accessory never reported ready"; return 1; }
}

source_bytes() {
  local ns ds
  ns=$(received_hex notification-source)
  ds=$(received_hex data-source)
  echo "notification source: $ns"
  [ "$ns" = "$NS_EVENT" ] || { echo "expected Notification Source $NS_EVENT"; return 1; }
  [ "${ds:0:${#DS_SHORT}}" = "$DS_SHORT" ] || { echo "data source began ${ds:0:40}, expected $DS_SHORT"; return 1; }
}

long_data_source() {
  local ds pieces
  ds=$(received_hex data-source)
  pieces=$(grep -c 'ancs data-source .* bytes$' "$ACC_LOG")
  echo "$pieces Data Source notifications, $(( ${#ds} / 2 )) bytes in all"
  grep 'ancs data-source .* bytes$' "$ACC_LOG" | sed 's/^.*ancs /ancs /'
  [ "$ds" = "$DS_SHORT$DS_LONG" ] || { echo "the 600-byte reply did not arrive whole and in order"; return 1; }
  [ "$pieces" -ge 3 ] || { echo "expected the 600 bytes split across notifications"; return 1; }
}

control_point() {
  grep -q '^control-point 000102$' "$PHONE_LOG" || { echo "no control-point line in the iPhone's log"; return 1; }
  echo "the iPhone received control-point 000102"
}

# The iPhone refuses a Control Point write with ANCS error 0xA1: BlueZ 5.66 can only send it
# to the accessory as ATT error 0x80 (org.bluez.Error.Failed, see ANCSServerApplication).
control_point_rejected() {
  local bin raw=/tmp/ancs-reject.txt log=$NBVM_LOG_DIR/accessory-ancs-reject.log phone=$NBVM_LOG_DIR/phone-ancs-reject.log cp out rc=0
  ACC_LOG=$log
  start_accessory "$log"
  bin=$(nbvm_bin notifbridge)
  printf 'ns %s\n' "$NS_EVENT" > "$raw"
  nbvm_bg phone-ancs-reject "$bin" phone ancs --adapter "$CENTRAL_ADAPTER" --raw-file "$raw" \
    --ble-timeout "$BLE_TIMEOUT" --subscribe-timeout 90 --linger 120 --control-point-error A1
  nbvm_wait_for 200 grep -q 'sent ns 8 bytes' "$phone" || { cat "$phone"; echo "the iPhone did not get through its raw file"; return 1; }
  cp=$(accessory_characteristic 69d1d8f3-45e1-49a8-9821-9bbdfdaad9d9) || { echo "no Control Point under $PERIPHERAL_ADAPTER"; return 1; }
  out=$(busctl --system call org.bluez "$cp" org.bluez.GattCharacteristic1 WriteValue 'aya{sv}' 2 9 9 1 type s request 2>&1) || rc=$?
  echo "WriteValue: rc=$rc $out"
  grep -q '^control-point 0909$' "$phone" || { cat "$phone"; echo "the refused write did not reach the iPhone"; return 1; }
  [ "$rc" != 0 ] || { echo "the write was accepted"; return 1; }
  grep -q 'ATT error: 0x80' <<<"$out" || { echo "expected ATT error 0x80"; return 1; }
}

# The iPhone disconnects in the middle of a Data Source reply: the accessory reports it gone.
disconnect_gone() {
  local bin raw=/tmp/ancs-disconnect.txt log=$NBVM_LOG_DIR/accessory-ancs-disconnect.log
  ACC_LOG=$log
  start_accessory "$log"
  bin=$(nbvm_bin notifbridge)
  printf 'ns %s\nds %s\ndisconnect\n' "$NS_EVENT" "$DS_LONG$DS_LONG" > "$raw"
  timeout 240 "$bin" phone ancs --adapter "$CENTRAL_ADAPTER" --raw-file "$raw" --ble-timeout "$BLE_TIMEOUT" --subscribe-timeout 90
  nbvm_wait_for 30 grep -q 'ancs gone /org/bluez/' "$log" || { grep 'ancs ' "$log"; echo "the accessory did not report the iPhone gone"; return 1; }
  grep 'ancs ' "$log" | grep -v ' value ' | sed 's/^.*ancs /ancs /'
}

REPO=$NBVM_REPO

# stored_summary STATE: one line per stored notification, `id removed alerted app | title | body`.
stored_summary() {
  "$(nbvm_bin notifbridge)" respond list --state "$1" --all --json | python3 -c '
import json, sys
for line in sys.stdin:
    n = json.loads(line)
    print(n["id"], "removed" if n.get("removed") else "live", "alerted" if n.get("alerted") else "quiet", n.get("app", ""), "|", n.get("title", ""), "|", (n.get("body") or "")[:60])
' | sort
}

# expect_stored STATE ID STATE ALERTED: one stored notification as expected.
expect_stored() {
  grep -q "^$2 $3 $4 " <<<"$(stored_summary "$1")" || { echo "expected $2 $3 $4"; return 1; }
}

# Pre-existing notifications, new ones of several kinds, a modification, a removal, a reply
# that spans Data Source notifications, and an action from `respond` reaching the iPhone.
scenario_live() {
  local bin state=/tmp/nb-accessory-ancs-live phone=$NBVM_LOG_DIR/phone-ancs-live.log body
  start_accessory "$NBVM_LOG_DIR/accessory-ancs-live.log"
  bin=$(nbvm_bin notifbridge)
  nbvm_bg phone-ancs-live "$bin" phone ancs --adapter "$CENTRAL_ADAPTER" --file "$REPO/Scenarios/ancs/live.yaml" \
    --ble-timeout "$BLE_TIMEOUT" --subscribe-timeout 90 --action-timeout 120
  local phone_pid=$NBVM_BG_PID
  nbvm_wait_for 240 grep -q '^waiting for positive action on 3' "$phone" || { cat "$phone"; echo "the iPhone did not reach its expect-action step"; return 1; }
  nbvm_wait_for 60 bash -c "'$bin' respond list --state '$state' | grep -q 'ancs:6'" || { stored_summary "$state"; echo "ancs:6 was not stored"; return 1; }
  "$bin" respond action --state "$state" com.apple.MobileSMS ancs:3 ancs.positive
  wait "$phone_pid" || { cat "$phone"; echo "the iPhone's scenario failed"; return 1; }
  cat "$phone"
  stored_summary "$state"
  grep -q '^performed positive action on 3$' "$phone" || { echo "the action did not reach the Control Point"; return 1; }
  expect_stored "$state" ancs:1 live quiet && expect_stored "$state" ancs:2 live quiet \
    && expect_stored "$state" ancs:3 live alerted && expect_stored "$state" ancs:4 removed alerted \
    && expect_stored "$state" ancs:5 live quiet && expect_stored "$state" ancs:6 live alerted || return 1
  grep -q '^ancs:3 live alerted Messages | Ben | Are you coming? (edited)' <<<"$(stored_summary "$state")" || { echo "ancs:3 is not the modified text from Messages"; return 1; }
  body=$("$bin" respond list --state "$state" --json | python3 -c 'import json,sys; print(next(len(json.loads(l)["body"]) for l in sys.stdin if json.loads(l)["id"] == "ancs:6"))')
  echo "ancs:6 body: $body characters"
  [ "$body" -gt 600 ] || { echo "the long message arrived cut"; return 1; }
}

# The iPhone drops the link in the middle of a Data Source reply and comes back with one
# notification removed and one posted while away: nothing partial, the removed one withdrawn,
# the ones not seen before stored without alerting.
scenario_reconnect() {
  local bin state=/tmp/nb-accessory-ancs-reconnect phone=$NBVM_LOG_DIR/phone-ancs-reconnect.log
  start_accessory "$NBVM_LOG_DIR/accessory-ancs-reconnect.log"
  bin=$(nbvm_bin notifbridge)
  timeout 400 "$bin" phone ancs --adapter "$CENTRAL_ADAPTER" --file "$REPO/Scenarios/ancs/reconnect.yaml" \
    --ble-timeout "$BLE_TIMEOUT" --subscribe-timeout 90 > "$phone" 2>&1 || { cat "$phone"; echo "the iPhone's scenario failed"; return 1; }
  cat "$phone"
  stored_summary "$state"
  grep -q '^disconnected in the middle of a Data Source reply' "$phone" || { echo "the reply was not cut"; return 1; }
  expect_stored "$state" ancs:10 live alerted && expect_stored "$state" ancs:11 removed alerted \
    && expect_stored "$state" ancs:12 live quiet && expect_stored "$state" ancs:13 live quiet || return 1
  [ "$(stored_summary "$state" | wc -l)" = 4 ] || { echo "expected exactly four notifications"; return 1; }
}

nbvm_test ancs-session ancs_session
nbvm_test ancs-subscription-order subscription_order
nbvm_test ancs-source-bytes source_bytes
nbvm_test ancs-data-source-600 long_data_source
nbvm_test ancs-control-point control_point
nbvm_test ancs-control-point-rejected control_point_rejected
nbvm_test ancs-disconnect-gone disconnect_gone
nbvm_test ancs-scenario-live scenario_live
nbvm_test ancs-scenario-reconnect scenario_reconnect
