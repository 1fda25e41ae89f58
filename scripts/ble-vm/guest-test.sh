#!/usr/bin/env bash
# BLE VM smoke test (runs inside the VM; started by run.sh through guest-env.sh).
# Each check is a function run by nbvm_test, which records PASS/FAIL in the results
# file. Add checks as more functions here, or as more guest scripts passed to run.sh.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=guest-env.sh
. "${NBVM_SCRIPTS:-$(dirname "${BASH_SOURCE[0]}")}/guest-env.sh"

SMOKE_NAME=nbvm-smoke
SMOKE_UUID=0000feed-0000-1000-8000-00805f9b34fb

# Both btvirt controllers are on the kernel mgmt interface and distinct.
check_controllers_up() {
  btmgmt info
  if [ -z "${PERIPHERAL_ADAPTER:-}" ] || [ -z "${CENTRAL_ADAPTER:-}" ]; then echo "adapter names not exported"; return 1; fi
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
  local owner pid
  owner=$(dbus-send --system --print-reply=literal --dest=org.freedesktop.DBus /org/freedesktop/DBus \
            org.freedesktop.DBus.GetNameOwner string:org.bluez | tr -d ' ')
  pid=$(dbus-send --system --print-reply=literal --dest=org.freedesktop.DBus /org/freedesktop/DBus \
            org.freedesktop.DBus.GetConnectionUnixProcessID "string:$owner" | awk '{print $NF}')
  echo "org.bluez owned by $owner, pid $pid ($(cat "/proc/$pid/comm"))"
  [ "$(cat "/proc/$pid/comm")" = bluetoothd ] || { echo "org.bluez is not owned by bluetoothd"; return 1; }
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
  local rc=0
  out=$(timeout 120 "$bin" --help 2>&1) || rc=$?
  echo "$out"
  [ "$rc" = 0 ] || { echo "notifbridge --help exited with status $rc"; return 1; }
  grep -q 'USAGE' <<<"$out" || { echo "notifbridge --help printed no USAGE"; return 1; }
}

# btctl_wait_controller FD LOG ADDR: ask a bluetoothctl session to `list` controllers until
# ADDR shows up (it has then connected to bluetoothd and built its adapter proxies).
btctl_wait_controller() {
  local _
  for _ in $(seq 30); do
    echo list >&"$1"
    sleep 1
    grep -aq "Controller $3 " "$2" && return 0
  done
  return 1
}

# A real LE advertisement from the peripheral controller, registered through bluetoothd's
# LEAdvertisingManager1 by bluetoothctl, is discovered by bluetoothd on the central controller.
check_advertise_discover() {
  local dev=/org/bluez/$CENTRAL_ADAPTER/dev_${PERIPHERAL_ADDR//:/_}
  local adv_log=$NBVM_LOG_DIR/bluetoothctl-advertise.log scan_log=$NBVM_LOG_DIR/bluetoothctl-scan.log

  nbvm_session bluetoothctl-advertise bluetoothctl
  local adv_pid=$NBVM_BG_PID adv=$NBVM_SESSION_FD
  btctl_wait_controller "$adv" "$adv_log" "$PERIPHERAL_ADDR" \
    || { cat "$adv_log"; echo "bluetoothctl (advertiser) did not list $PERIPHERAL_ADDR"; return 1; }
  printf '%s\n' "select $PERIPHERAL_ADDR" "advertise.name $SMOKE_NAME" "advertise.uuids $SMOKE_UUID" "advertise on" >&"$adv"
  nbvm_wait_for 30 grep -aq 'Advertising object registered' "$adv_log" \
    || { cat "$adv_log"; echo "advertisement was not registered on $PERIPHERAL_ADAPTER"; return 1; }
  nbvm_log "advertising on $PERIPHERAL_ADAPTER"

  nbvm_session bluetoothctl-scan bluetoothctl
  local scan_pid=$NBVM_BG_PID scan=$NBVM_SESSION_FD
  btctl_wait_controller "$scan" "$scan_log" "$CENTRAL_ADDR" \
    || { cat "$scan_log"; echo "bluetoothctl (scanner) did not list $CENTRAL_ADDR"; return 1; }
  printf '%s\n' "select $CENTRAL_ADDR" "scan le" >&"$scan"
  nbvm_log "scanning on $CENTRAL_ADAPTER"
  if ! nbvm_wait_for 60 busctl --system get-property org.bluez "$dev" org.bluez.Device1 Address; then
    cat "$scan_log"
    echo "$CENTRAL_ADAPTER did not discover $PERIPHERAL_ADDR within 60s"
    return 1
  fi
  # name and UUIDs may arrive with a later report (scan response) than the first one
  nbvm_wait_for 20 bash -c "busctl --system get-property org.bluez $dev org.bluez.Device1 UUIDs | grep -qi $SMOKE_UUID" || true
  local name uuids
  name=$(busctl --system get-property org.bluez "$dev" org.bluez.Device1 Name || true)
  uuids=$(busctl --system get-property org.bluez "$dev" org.bluez.Device1 UUIDs || true)
  nbvm_log "central $CENTRAL_ADAPTER found $dev Name=$name UUIDs=$uuids"
  printf '%s\n' "scan off" quit >&"$scan"
  printf '%s\n' "advertise off" quit >&"$adv"
  sleep 1
  nbvm_stop "$scan_pid"; nbvm_stop "$adv_pid"
  grep -q "$SMOKE_NAME" <<<"$name" || { echo "discovered device has Name '$name', expected $SMOKE_NAME"; return 1; }
  grep -qi "$SMOKE_UUID" <<<"$uuids" || { echo "discovered device lacks service UUID $SMOKE_UUID (UUIDs=$uuids)"; return 1; }
}

nbvm_test controllers-up check_controllers_up
nbvm_test bluez-on-dbus check_bluez_on_dbus
nbvm_test notifbridge-help check_notifbridge_runs
nbvm_test le-advertise-discover check_advertise_discover
