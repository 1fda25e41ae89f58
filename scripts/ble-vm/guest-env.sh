#!/usr/bin/env bash
# Guest side of the BLE VM: BlueZ bring-up and helpers for guest tests.
#
# Two ways in:
#   bash guest-env.sh run GUEST_CONF   (called by vm-init.sh) sets the VM up once, then runs
#                                      each guest test script listed in GUEST_CONF.
#   source guest-env.sh                (first line of every guest test) gives the helpers
#                                      below; the environment is already up when run.sh
#                                      started the test, otherwise it is set up now.
#
# After setup these are exported:
#   PERIPHERAL_ADAPTER, CENTRAL_ADAPTER   e.g. hci0, hci1 (two btvirt LE-only controllers)
#   PERIPHERAL_ADDR,    CENTRAL_ADDR      their public addresses (00:AA:01:...)
#   SECOND_CENTRAL_ADAPTER                 a third controller (a second iPhone), if btvirt made one
#   NBVM_ADAPTERS                          all of them, space-separated
#   NBVM_REPO NBVM_BIN_DIR NBVM_LOG_DIR NBVM_RESULTS NBVM_SCRIPTS NBVM_RUN_DIR
#
# Helpers: nbvm_log, nbvm_pass, nbvm_fail, nbvm_skip, nbvm_test, nbvm_bg, nbvm_session,
#          nbvm_stop, nbvm_kill_bg, nbvm_wait_for, nbvm_adapter_prop, nbvm_no_connections,
#          nbvm_clean_adapters, nbvm_bin.
# Results are lines in $NBVM_RESULTS: "PASS name", "FAIL name reason", "SKIP name reason".

# ---------------------------------------------------------------- helpers

nbvm_log() { echo "[guest $(cut -d' ' -f1 /proc/uptime)] $*" >&2; }

nbvm__result() {
  local verdict=$1 name=$2; shift 2
  local line="$verdict $name${*:+ $*}"
  line=$(printf '%s' "$line" | tr '\n\r' '  ')
  printf '%s\n' "$line" >> "$NBVM_RESULTS"
  nbvm_log "$line"
}
nbvm_pass() { nbvm__result PASS "$@"; }
nbvm_fail() { nbvm__result FAIL "$@"; }
nbvm_skip() { nbvm__result SKIP "$@"; }

# nbvm_test NAME FUNCTION [ARGS...]
# Runs FUNCTION in a subshell with stdout+stderr in $NBVM_LOG_DIR/test-NAME.log.
# Exit 0 records PASS NAME; otherwise FAIL NAME with the log's last line as reason.
# A function that wants to skip prints "SKIP: reason" as its last line and returns 77.
# Whatever the test started in the background is stopped when it ends, pass or fail, so one
# test's leftovers (an accessory still advertising, a phone still connected) never reach the
# next; HCI commands that timed out meanwhile are noted in its log.
nbvm_test() {
  local name=$1 fn=$2; shift 2
  local logf=$NBVM_LOG_DIR/test-$name.log rc opts=$- hci_before
  nbvm_log "test $name: start"
  hci_before=$(nbvm__hci_timeouts | wc -l)
  set +e   # not `|| rc=$?`: that would disable errexit inside the subshell too
  ( set -euo pipefail; "$fn" "$@" ) > "$logf" 2>&1
  rc=$?
  nbvm_kill_bg
  nbvm__hci_timeouts | tail -n "+$((hci_before + 1))" | sed 's/^/note: kernel reported an HCI command timeout: /' >> "$logf"
  [[ $opts == *e* ]] && set -e
  local last
  # last non-empty line, without colour codes and the readline markers bluetoothctl prints
  last=$(sed $'s/\x1b\\[[0-9;]*m//g' "$logf" | tr -d '\001\002\r' | grep -v '^[[:space:]]*$' | grep -v '^note: ' | tail -n1 | cut -c1-300)
  if [ "$rc" = 0 ]; then
    nbvm_pass "$name"
  elif [ "$rc" = 77 ]; then
    nbvm_skip "$name" "${last#SKIP: }"
  else
    nbvm_fail "$name" "(rc=$rc, log test-$name.log) ${last:-no output}"
  fi
  return 0
}

# HCI commands the kernel gave up on (-110: no answer from the emulated controller in time).
nbvm__hci_timeouts() {
  dmesg | grep -E 'hci[0-9]+: Opcode 0x[0-9a-f]+ failed: -110' || true
}

# nbvm_bg NAME CMD...: start CMD in the background, output in $NBVM_LOG_DIR/NAME.log.
# Sets NBVM_BG_PID. The runner kills every such process after each test script.
nbvm_bg() {
  local name=$1; shift
  "$@" > "$NBVM_LOG_DIR/$name.log" 2>&1 &
  NBVM_BG_PID=$!
  echo "$NBVM_BG_PID $name" >> /run/nbvm/bg-pids
}

# nbvm_session NAME CMD...: start an interactive CMD (e.g. bluetoothctl) in the background,
# reading its commands from a fifo; output in $NBVM_LOG_DIR/NAME.log. Sets NBVM_BG_PID and
# NBVM_SESSION_FD: send commands with  echo "scan le" >&"$NBVM_SESSION_FD".
nbvm_session() {
  local name=$1; shift
  local fifo=/run/nbvm/$name.in
  rm -f "$fifo"; mkfifo "$fifo"
  exec {NBVM_SESSION_FD}<>"$fifo"   # read-write open: neither side blocks, no EOF until killed
  "$@" < "$fifo" > "$NBVM_LOG_DIR/$name.log" 2>&1 {NBVM_SESSION_FD}>&- &
  NBVM_BG_PID=$!
  echo "$NBVM_BG_PID $name" >> /run/nbvm/bg-pids
}

# nbvm_stop PID: stop one background process (no error if it already exited).
nbvm_stop() {
  kill "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}

# nbvm_kill_bg: stop every process started by nbvm_bg/nbvm_session that still runs, and wait
# (up to 10 s, then SIGKILL) until each is gone.
nbvm_kill_bg() {
  local pid name pids=()
  [ -f /run/nbvm/bg-pids ] || return 0
  while read -r pid name; do
    if kill -0 "$pid" 2>/dev/null; then
      nbvm_log "stopping leftover background process $name ($pid)"
      kill "$pid" 2>/dev/null || true
      pids+=("$pid")
    fi
  done < /run/nbvm/bg-pids
  : > /run/nbvm/bg-pids
  local end=$(( $(date +%s) + 10 ))
  for pid in "${pids[@]}"; do
    while kill -0 "$pid" 2>/dev/null && [ "$(date +%s)" -lt "$end" ]; do sleep 0.2; done
    kill -9 "$pid" 2>/dev/null || true
  done
}

# nbvm_wait_for SECONDS CMD...: poll CMD every 0.5 s until it succeeds; 1 on timeout.
nbvm_wait_for() {
  local secs=$1; shift
  local end=$(( $(date +%s) + secs ))
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$end" ] || return 1
    sleep 0.5
  done
}

# nbvm_adapter_prop hciN PROP [INTERFACE]: read a property of an adapter through bluetoothd.
nbvm_adapter_prop() {
  busctl --system get-property org.bluez "/org/bluez/$1" "${3:-org.bluez.Adapter1}" "$2" 2>/dev/null
}

# Every device object bluetoothd has, on any adapter.
nbvm__devices() {
  busctl --system tree org.bluez --list 2>/dev/null | grep -E '^/org/bluez/hci[0-9]+/dev_[0-9A-F_]+$' || true
}

# True once no device is connected on any adapter.
nbvm_no_connections() {
  local d
  for d in $(nbvm__devices); do
    [ "$(busctl --system get-property org.bluez "$d" org.bluez.Device1 Connected 2>/dev/null)" != "b true" ] || return 1
  done
}

# True once the adapter neither scans nor advertises.
nbvm__adapter_idle() {
  [ "$(nbvm_adapter_prop "$1" Discovering)" = "b false" ] &&
    [ "$(nbvm_adapter_prop "$1" ActiveInstances org.bluez.LEAdvertisingManager1)" = "y 0" ]
}

# nbvm_clean_adapters: every adapter as a test expects to find it: no connection, no cached
# device (so no stale service list), and no scan or advertisement left running. An adapter
# still busy after its owners are gone is powered off and on, which resets the controller.
nbvm_clean_adapters() {
  local d a
  for d in $(nbvm__devices); do
    busctl --system call org.bluez "$d" org.bluez.Device1 Disconnect >/dev/null 2>&1 || true
  done
  nbvm_wait_for 30 nbvm_no_connections || { echo "a connection from the previous test would not close"; return 1; }
  for d in $(nbvm__devices); do
    busctl --system call org.bluez "${d%/dev_*}" org.bluez.Adapter1 RemoveDevice o "$d" >/dev/null 2>&1 || true
  done
  # shellcheck disable=SC2016 # expanded by the inner bash
  nbvm_wait_for 15 bash -c '[ -z "$(busctl --system tree org.bluez --list 2>/dev/null | grep /dev_)" ]' \
    || { echo "cached devices would not go: $(nbvm__devices | tr '\n' ' ')"; return 1; }
  for a in $NBVM_ADAPTERS; do
    nbvm_wait_for 10 nbvm__adapter_idle "$a" && continue
    nbvm_log "$a still scanning or advertising ($(nbvm_adapter_prop "$a" Discovering), $(nbvm_adapter_prop "$a" ActiveInstances org.bluez.LEAdvertisingManager1)); powering it off and on"
    busctl --system set-property org.bluez "/org/bluez/$a" org.bluez.Adapter1 Powered b false 2>/dev/null || true
    nbvm_wait_for 15 bash -c "[ \"\$(busctl --system get-property org.bluez /org/bluez/$a org.bluez.Adapter1 Powered)\" = 'b false' ]" || true
    busctl --system set-property org.bluez "/org/bluez/$a" org.bluez.Adapter1 Powered b true 2>/dev/null || true
    nbvm_wait_for 30 bash -c "[ \"\$(busctl --system get-property org.bluez /org/bluez/$a org.bluez.Adapter1 Powered)\" = 'b true' ]" \
      || { echo "$a did not power on again"; return 1; }
    nbvm_wait_for 10 nbvm__adapter_idle "$a" || { echo "$a still scans or advertises after a power cycle"; return 1; }
  done
}

# nbvm_bin NAME: path of a SwiftPM product (run.sh copies NBVM_PRODUCTS from the host's
# .build/debug into NBVM_BIN_DIR before boot), failing loudly if missing.
nbvm_bin() {
  local p=$NBVM_BIN_DIR/$1
  if [ ! -x "$p" ]; then
    echo "missing binary $p: is $1 in NBVM_PRODUCTS, and built in ${NBVM_HOST_BIN_DIR:-.build/debug}? (swift build --product $1, or run.sh --build)"
    return 1
  fi
  echo "$p"
}

# ---------------------------------------------------------------- setup

# btmgmt info -> "hciN ADDR" for each controller the kernel mgmt interface reports
nbvm__controllers() {
  timeout 10 btmgmt info 2>/dev/null | awk '
    /^hci[0-9]+:[ \t]+Primary controller/ { sub(":", "", $1); name = $1; next }
    name != "" && $1 == "addr" { print name, $2; name = "" }' | sort -V
}

nbvm__setup_fail() {
  nbvm_fail vm-setup "$*"
  nbvm_log "SETUP FAILED: $*"
  return 1
}

nbvm__start_btvirt() {
  local attempts=${NBVM_BTVIRT_ATTEMPTS:-5} wait_s=${NBVM_BTVIRT_WAIT:-20} want=${NBVM_CONTROLLERS:-3} i n t0 timeouts
  local reset_timeout='hci[0-9]+: Opcode 0x[0-9a-f]+ failed: -110'
  for ((i = 1; i <= attempts; i++)); do
    t0=$(date +%s)
    timeouts=$(dmesg | grep -Ec "$reset_timeout")
    stdbuf -oL -eL btvirt -L "-l$want" > "$NBVM_LOG_DIR/btvirt-$i.log" 2>&1 &
    NBVM_BTVIRT_PID=$!
    # Both controllers must reach the mgmt interface ("Primary controller" in btmgmt info).
    # A controller whose HCI_Reset timed out under TCG never does: restart btvirt then.
    local end=$((t0 + wait_s))
    while :; do
      n=$(nbvm__controllers | wc -l)
      [ "$n" -ge "$want" ] && break
      kill -0 "$NBVM_BTVIRT_PID" 2>/dev/null || { nbvm_log "btvirt attempt $i: btvirt exited"; break; }
      if [ "$(dmesg | grep -Ec "$reset_timeout")" -gt "$timeouts" ]; then
        nbvm_log "btvirt attempt $i: a controller's HCI_Reset timed out"
        break
      fi
      [ "$(date +%s)" -lt "$end" ] || break
      sleep 0.5
    done
    if [ "$n" -ge "$want" ]; then
      nbvm_log "btvirt attempt $i: $want controllers up after $(( $(date +%s) - t0 ))s"
      echo "$i" > /run/nbvm/btvirt-attempts
      return 0
    fi
    nbvm_log "btvirt attempt $i: only $n of $want controllers usable after $(( $(date +%s) - t0 ))s; restarting btvirt"
    kill "$NBVM_BTVIRT_PID" 2>/dev/null; wait "$NBVM_BTVIRT_PID" 2>/dev/null
    # wait for the kernel to drop the old hci devices before the next attempt
    # shellcheck disable=SC2016 # expanded by the inner bash
    nbvm_wait_for 10 bash -c '[ -z "$(ls /sys/class/bluetooth 2>/dev/null)" ]'
    sleep 1
  done
  nbvm__setup_fail "controllers never came up: btvirt -L -l$want did not give $want usable controllers after $attempts attempts (see btvirt-*.log, dmesg.log)"
}

nbvm_setup() {
  local opts=$- rc
  set +e
  nbvm__setup
  rc=$?
  [[ $opts == *e* ]] && set -e
  return "$rc"
}

nbvm__setup() {
  mkdir -p /run/nbvm "$NBVM_LOG_DIR"
  : > /run/nbvm/bg-pids
  nbvm_log "setup: kernel $(uname -r), $(nproc) cpus"

  mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug 2>/dev/null

  # bluetooth + vhci; LE SMP (pairing) needs AES/CMAC/ECB and ECDH P-256
  modprobe -a bluetooth hci_vhci || { nbvm__setup_fail "modprobe bluetooth hci_vhci failed"; return 1; }
  local m
  for m in aes_generic ecb cmac ecdh_generic; do
    modprobe "$m" 2>/dev/null || nbvm_log "warning: modprobe $m failed (LE pairing may not work)"
  done
  [ -c /dev/vhci ] || { nbvm__setup_fail "/dev/vhci missing after modprobe hci_vhci"; return 1; }
  nbvm_log "modules loaded: $(lsmod | awk 'NR > 1 {print $1}' | grep -E '^(bluetooth|hci_vhci|ecdh_generic|cmac|ecb|aes_generic)$' | sort | tr '\n' ' ')"

  # system bus (uses the host's /etc/dbus-1 policy, including bluetooth.conf)
  mkdir -p /run/dbus
  dbus-daemon --system --fork --nopidfile > "$NBVM_LOG_DIR/dbus-daemon.log" 2>&1 \
    || { nbvm__setup_fail "dbus-daemon --system failed to start"; return 1; }
  nbvm_wait_for 20 busctl --system status org.freedesktop.DBus \
    || { nbvm__setup_fail "system bus not answering"; return 1; }

  nbvm_log "system bus up"
  nbvm__start_btvirt || return 1
  local ctrls
  ctrls=$(nbvm__controllers)
  read -r PERIPHERAL_ADAPTER PERIPHERAL_ADDR <<<"$(sed -n 1p <<<"$ctrls")"
  read -r CENTRAL_ADAPTER CENTRAL_ADDR <<<"$(sed -n 2p <<<"$ctrls")"
  # A third controller plays a second iPhone (tests that the accessory serves one at a time).
  read -r SECOND_CENTRAL_ADAPTER SECOND_CENTRAL_ADDR <<<"$(sed -n 3p <<<"$ctrls")"
  NBVM_ADAPTERS="$PERIPHERAL_ADAPTER $CENTRAL_ADAPTER${SECOND_CENTRAL_ADAPTER:+ $SECOND_CENTRAL_ADAPTER}"
  export PERIPHERAL_ADAPTER PERIPHERAL_ADDR CENTRAL_ADAPTER CENTRAL_ADDR SECOND_CENTRAL_ADAPTER SECOND_CENTRAL_ADDR NBVM_ADAPTERS
  nbvm_log "controllers: peripheral $PERIPHERAL_ADAPTER $PERIPHERAL_ADDR, central $CENTRAL_ADAPTER $CENTRAL_ADDR"

  # One ATT bearer per link (no EATT): notifications sent on several EATT bearers can arrive
  # out of order, and NotifBridge chunks must arrive in order (docs/PROTOCOL.md §2.1). The
  # deployment README sets the same in /etc/bluetooth/main.conf.
  printf '[GATT]\nChannels = 1\n' > /run/nbvm/bluetoothd-main.conf
  # shellcheck disable=SC2086 # NBVM_BLUETOOTHD_ARGS is a word list
  /usr/sbin/bluetoothd -n -d -f /run/nbvm/bluetoothd-main.conf ${NBVM_BLUETOOTHD_ARGS:-} > "$NBVM_LOG_DIR/bluetoothd.log" 2>&1 &
  NBVM_BLUETOOTHD_PID=$!
  export NBVM_BLUETOOTHD_PID
  local a
  for a in "$PERIPHERAL_ADAPTER" "$CENTRAL_ADAPTER" ${SECOND_CENTRAL_ADAPTER:+"$SECOND_CENTRAL_ADAPTER"}; do
    nbvm_wait_for 60 busctl --system introspect org.bluez "/org/bluez/$a" org.bluez.Adapter1 \
      || { nbvm__setup_fail "bluetoothd did not export /org/bluez/$a within 60s (see bluetoothd.log)"; return 1; }
    busctl --system set-property org.bluez "/org/bluez/$a" org.bluez.Adapter1 Powered b true 2>/dev/null
    nbvm_wait_for 30 bash -c "[ \"\$(busctl --system get-property org.bluez /org/bluez/$a org.bluez.Adapter1 Powered)\" = 'b true' ]" \
      || { nbvm__setup_fail "adapter $a did not power on within 30s (see bluetoothd.log)"; return 1; }
  done
  nbvm_log "bluetoothd up, $PERIPHERAL_ADAPTER and $CENTRAL_ADAPTER powered"

  # Swift runtime for SwiftPM debug builds (RUNPATH normally points here already)
  if [ -d "$NBVM_SWIFT_TOOLCHAIN/usr/lib/swift/linux" ]; then
    export LD_LIBRARY_PATH="$NBVM_SWIFT_TOOLCHAIN/usr/lib/swift/linux${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
  export NBVM_ENV_READY=1
  return 0
}

nbvm__load_conf() {
  local conf=$1
  [ -f "$conf" ] || { echo "guest-env: config $conf not found" >&2; return 1; }
  # shellcheck disable=SC1090
  . "$conf"
  local v
  for v in $(compgen -v NBVM_); do
    [ "$v" = NBVM_TESTS ] || export "${v?}"
  done
  export PATH=/usr/sbin:/usr/bin:/sbin:/bin
}

# Runner (vm-init.sh): setup once, then each test script in turn, then collect dmesg.
nbvm__run() {
  nbvm__load_conf "$1" || return 1
  local t rc before after base status=0
  if ! nbvm_setup; then
    dmesg > "$NBVM_LOG_DIR/dmesg.log" 2>&1
    return 1
  fi
  for t in "${NBVM_TESTS[@]}"; do
    base=$(basename "$t" .sh)
    before=$(grep -c . "$NBVM_RESULTS")
    nbvm_log "=== $t (timeout ${NBVM_TEST_TIMEOUT}s)"
    timeout -k 10 "$NBVM_TEST_TIMEOUT" bash "$t" 2>&1 | tee "$NBVM_LOG_DIR/script-$base.log" >&2
    rc=${PIPESTATUS[0]}
    after=$(grep -c . "$NBVM_RESULTS")
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
      nbvm_fail "script:$base" "timed out after ${NBVM_TEST_TIMEOUT}s (NBVM_TEST_TIMEOUT)"
    elif [ "$rc" != 0 ] && ! tail -n "$((after - before))" "$NBVM_RESULTS" | grep -q '^FAIL'; then
      nbvm_fail "script:$base" "exited with status $rc (see script-$base.log)"
    elif [ "$after" = "$before" ]; then
      nbvm_fail "script:$base" "recorded no results"
    fi
    [ "$rc" = 0 ] || status=1
    nbvm_kill_bg
    if ! kill -0 "$NBVM_BLUETOOTHD_PID" 2>/dev/null; then
      nbvm_fail "bluetoothd-alive" "bluetoothd died during $base (see bluetoothd.log)"
      status=1
      break
    fi
  done
  dmesg > "$NBVM_LOG_DIR/dmesg.log" 2>&1
  return "$status"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  # executed
  if [ "${1:-}" = run ] && [ -n "${2:-}" ]; then
    nbvm__run "$2"
    exit $?
  fi
  echo "usage: guest-env.sh run GUEST_CONF   (or source it from a guest test)" >&2
  exit 2
elif [ "${NBVM_ENV_READY:-}" != 1 ]; then
  # sourced outside the runner (e.g. by hand inside the VM): set up now
  nbvm__load_conf "${NBVM_CONF:-$(cat /nbvm/run-dir 2>/dev/null)/guest.conf}" && nbvm_setup
fi
