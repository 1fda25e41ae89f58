#!/usr/bin/env bash
# BLE VM smoke test (runs inside the VM; started by run.sh through guest-env.sh).
# Each check is a function run by nbvm_test, which records PASS/FAIL in the results
# file. Add checks as more functions here, or as more guest scripts passed to run.sh.
set -euo pipefail
# shellcheck source=guest-env.sh
. "$(dirname "${BASH_SOURCE[0]}")/guest-env.sh"

SMOKE_NAME=nbvm-smoke
SMOKE_UUID=0000feed-0000-1000-8000-00805f9b34fb

# Both btvirt controllers are on the kernel mgmt interface and distinct.
check_controllers_up() {
  btmgmt info
  [ -n "${PERIPHERAL_ADAPTER:-}" ] && [ -n "${CENTRAL_ADAPTER:-}" ] || { echo "adapter names not exported"; return 1; }
  [ "$PERIPHERAL_ADAPTER" != "$CENTRAL_ADAPTER" ] || { echo "both roles on $PERIPHERAL_ADAPTER"; return 1; }
  local a
  for a in "$PERIPHERAL_ADAPTER" "$CENTRAL_ADAPTER"; do
    btmgmt --index "$a" info | grep -q 'current settings:.*powered' || { echo "$a not powered per btmgmt"; return 1; }
    btmgmt --index "$a" info | grep -q 'current settings:.*le' || { echo "$a has no LE"; return 1; }
  done
  echo "peripheral $PERIPHERAL_ADAPTER $PERIPHERAL_ADDR, central $CENTRAL_ADAPTER $CENTRAL_ADDR"
}

# bluetoothd owns org.bluez on the system bus and exports both adapters with the
# interfaces a GATT peripheral needs.
check_bluez_on_dbus() {
  busctl --system status org.bluez | grep -E '^(PID|Comm)='
  local a xml iface
  for a in "$PERIPHERAL_ADAPTER" "$CENTRAL_ADAPTER"; do
    xml=$(dbus-send --system --print-reply --dest=org.bluez "/org/bluez/$a" org.freedesktop.DBus.Introspectable.Introspect)
    for iface in org.bluez.Adapter1 org.bluez.GattManager1 org.bluez.LEAdvertisingManager1; do
      grep -q "interface name=\"$iface\"" <<<"$xml" || { echo "/org/bluez/$a lacks $iface"; return 1; }
    done
    echo "/org/bluez/$a: Adapter1 GattManager1 LEAdvertisingManager1, Address $(nbvm_adapter_prop "$a" Address)"
  done
}

# The Swift debug build runs in the guest with the toolchain's runtime.
check_notifbridge_runs() {
  local bin out
  bin=$(nbvm_bin notifbridge)
  ldd "$bin" | grep -E 'not found|libswiftCore' || true
  if ldd "$bin" | grep -q 'not found'; then echo "unresolved shared libraries for $bin"; return 1; fi
  out=$(timeout 120 "$bin" --help 2>&1)
  echo "$out"
  grep -q 'USAGE' <<<"$out" || { echo "notifbridge --help printed no USAGE"; return 1; }
}

# A real LE advertisement from the peripheral controller, registered through bluetoothd's
# LEAdvertisingManager1 by bluetoothctl, is discovered by bluetoothd on the central controller.
check_advertise_discover() {
  local fifo=/tmp/adv.in dev
  dev=/org/bluez/$CENTRAL_ADAPTER/dev_${PERIPHERAL_ADDR//:/_}
  rm -f "$fifo"; mkfifo "$fifo"
  nbvm_bg bluetoothctl-advertise bluetoothctl < "$fifo"
  local adv_pid=$NBVM_BG_PID
  exec 3>"$fifo"
  {
    echo "select $PERIPHERAL_ADDR"
    echo "advertise.name $SMOKE_NAME"
    echo "advertise.uuids $SMOKE_UUID"
    echo "advertise on"
  } >&3
  nbvm_wait_for 30 grep -q 'Advertising object registered' "$NBVM_LOG_DIR/bluetoothctl-advertise.log" \
    || { cat "$NBVM_LOG_DIR/bluetoothctl-advertise.log"; echo "advertisement was not registered on $PERIPHERAL_ADAPTER"; return 1; }
  echo "advertising on $PERIPHERAL_ADAPTER"

  rm -f /tmp/scan.in; mkfifo /tmp/scan.in
  nbvm_bg bluetoothctl-scan bluetoothctl < /tmp/scan.in
  local scan_pid=$NBVM_BG_PID
  exec 4>/tmp/scan.in
  { echo "select $CENTRAL_ADDR"; echo "scan le"; } >&4
  if ! nbvm_wait_for 60 busctl --system get-property org.bluez "$dev" org.bluez.Device1 Name; then
    cat "$NBVM_LOG_DIR/bluetoothctl-scan.log"
    echo "$CENTRAL_ADAPTER did not discover $PERIPHERAL_ADDR within 60s"
    return 1
  fi
  local name uuids
  nbvm_wait_for 10 bash -c "busctl --system get-property org.bluez $dev org.bluez.Device1 Name | grep -q $SMOKE_NAME" || true
  name=$(busctl --system get-property org.bluez "$dev" org.bluez.Device1 Name)
  uuids=$(busctl --system get-property org.bluez "$dev" org.bluez.Device1 UUIDs || true)
  echo "scan on $CENTRAL_ADAPTER found $dev Name=$name UUIDs=$uuids"
  { echo "scan off"; echo quit; } >&4; exec 4>&-
  { echo "advertise off"; echo quit; } >&3; exec 3>&-
  nbvm_kill_bg "$scan_pid"; nbvm_kill_bg "$adv_pid"
  grep -q "$SMOKE_NAME" <<<"$name" || { echo "discovered device has Name $name, expected $SMOKE_NAME"; return 1; }
  grep -qi "$SMOKE_UUID" <<<"$uuids" || { echo "discovered device lacks service UUID $SMOKE_UUID (UUIDs=$uuids)"; return 1; }
}

nbvm_test controllers-up check_controllers_up
nbvm_test bluez-on-dbus check_bluez_on_dbus
nbvm_test notifbridge-help check_notifbridge_runs
nbvm_test le-advertise-discover check_advertise_discover
