#!/usr/bin/env bash
# The local-network transport across a real network boundary: two network namespaces joined
# by a veth pair, each with its own system bus and avahi-daemon. The accessory listens on its
# namespace's address and announces itself with DNS-SD; the simulated iPhone in the other
# namespace browses, resolves, connects and forwards a notification corpus; the accessory's
# store is checked afterwards. Root only (namespaces); about 30 s.
#
#   scripts/lan-netns/run.sh [--no-apt]      # NB_BIN overrides .build/debug/notifbridge
set -euo pipefail
cd "$(dirname "$0")/../.."
REPO=$PWD
BIN=${NB_BIN:-$REPO/.build/debug/notifbridge}
CORPUS=$REPO/Fixtures/corpus/messages-thread.json
APT=1
[[ ${1:-} == --no-apt ]] && APT=0
log() { echo "[lan-netns +$SECONDS s] $*"; }
fail() { log "FAIL: $*"; exit 1; }

[[ $(id -u) == 0 ]] || fail "must run as root (network namespaces)"
[[ -x $BIN ]] || fail "$BIN is not built (swift build --product notifbridge)"
if ! command -v avahi-daemon >/dev/null || ! command -v dbus-daemon >/dev/null || ! command -v dbus-send >/dev/null; then
  [[ $APT == 1 ]] || fail "avahi-daemon, dbus-daemon and dbus-send are needed (apt-get install avahi-daemon dbus)"
  log "apt-get install avahi-daemon dbus"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends avahi-daemon dbus >/dev/null
fi

WORK=$(mktemp -d /tmp/nb-lan-netns.XXXXXX)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  sleep 0.3
  for pid in "${PIDS[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  ip netns del nb-acc 2>/dev/null || true
  ip netns del nb-phone 2>/dev/null || true
  if [[ ${KEEP:-0} == 0 ]]; then rm -rf "$WORK"; else log "kept $WORK"; fi
}
trap cleanup EXIT

# Two namespaces, one link between them.
ip netns del nb-acc 2>/dev/null || true
ip netns del nb-phone 2>/dev/null || true
ip netns add nb-acc
ip netns add nb-phone
ip link add nb-veth0 type veth peer name nb-veth1
ip link set nb-veth0 netns nb-acc
ip link set nb-veth1 netns nb-phone
ip -n nb-acc addr add 10.77.0.1/24 dev nb-veth0
ip -n nb-phone addr add 10.77.0.2/24 dev nb-veth1
for pair in acc:nb-veth0 phone:nb-veth1; do
  ns=nb-${pair%%:*} dev=${pair#*:}
  ip -n "$ns" link set lo up
  ip -n "$ns" link set "$dev" up multicast on
done
log "namespaces nb-acc (10.77.0.1) and nb-phone (10.77.0.2) joined by a veth pair"

# Each namespace: a system bus of its own and an avahi-daemon on it, with a private
# /run/avahi-daemon (its pid file and socket) from a mount namespace of its own.
mkdir -p /run/avahi-daemon
start_host() {
  local name=$1 dev=$2 dir=$WORK/$1
  mkdir -p "$dir"
  cat >"$dir/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$dir/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
CONF
  cat >"$dir/avahi.conf" <<CONF
[server]
host-name=nb-$name
use-ipv4=yes
use-ipv6=no
allow-interfaces=$dev
enable-dbus=yes
ratelimit-interval-usec=1000000
ratelimit-burst=1000
[wide-area]
enable-wide-area=no
[publish]
publish-hinfo=no
publish-workstation=no
CONF
  ip netns exec "nb-$name" dbus-daemon --config-file="$dir/bus.conf" --nofork --nopidfile >"$dir/dbus.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 50); do [[ -S $dir/bus ]] && break; sleep 0.1; done
  [[ -S $dir/bus ]] || fail "the $name namespace's bus did not start: $(cat "$dir/dbus.log")"
  ip netns exec "nb-$name" unshare -m sh -c "mount -t tmpfs tmpfs /run/avahi-daemon && \
    DBUS_SYSTEM_BUS_ADDRESS=unix:path=$dir/bus exec avahi-daemon --no-drop-root --no-chroot --no-rlimits -f $dir/avahi.conf" \
    >"$dir/avahi.log" 2>&1 &
  PIDS+=($!)
  # Server.GetState is 2 (running) once the host name is established on the link.
  for _ in $(seq 100); do
    if DBUS_SYSTEM_BUS_ADDRESS=unix:path=$dir/bus dbus-send --system --print-reply --dest=org.freedesktop.Avahi / \
        org.freedesktop.Avahi.Server.GetState 2>/dev/null | grep -q 'int32 2'; then
      log "avahi-daemon running in nb-$name"
      return 0
    fi
    sleep 0.2
  done
  cat "$dir/avahi.log"
  fail "avahi-daemon did not come up in nb-$name"
}
start_host acc nb-veth0
start_host phone nb-veth1

# The accessory, announcing itself.
STATE=$WORK/acc/state
ip netns exec nb-acc env DBUS_SYSTEM_BUS_ADDRESS="unix:path=$WORK/acc/bus" \
  "$BIN" accessory --host 10.77.0.1 --port 7420 --state "$STATE" --service-name "NotifBridge netns test" --log-level info \
  >"$WORK/accessory.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 150); do grep -qs 'announced "' "$WORK/accessory.log" && break; sleep 0.2; done
grep -q 'announced "' "$WORK/accessory.log" || { cat "$WORK/accessory.log"; fail "the accessory did not announce itself"; }
log "accessory: $(grep -o 'announced "[^"]*"[^$]*' "$WORK/accessory.log" | head -1)"

phone() {
  ip netns exec nb-phone env DBUS_SYSTEM_BUS_ADDRESS="unix:path=$WORK/phone/bus" "$BIN" phone "$@"
}

# Across the boundary: browse, resolve, connect, forward the corpus.
if ! out=$(phone forward --transport lan --suite xwing --discovery-timeout 10 --timeout 30 --file "$CORPUS" 2>&1); then
  echo "$out"; cat "$WORK/accessory.log"; fail "the iPhone could not forward over the local network"
fi
echo "$out" | grep -E 'found "|forwarded' | sed 's/^/  /'
echo "$out" | grep -q 'found "NotifBridge netns test" at 10.77.0.1:7420' || fail "the iPhone did not find the accessory by DNS-SD"
echo "$out" | grep -qE '([0-9]+) forwarded, \1 acknowledged' || fail "not every notification was acknowledged"
grep -q 'link=localNetwork' "$WORK/accessory.log" || fail "the accessory did not see a local-network link"

# What the accessory stored, read through its control socket.
stored=$("$BIN" respond list --state "$STATE" --json | wc -l)
[[ $stored -ge 1 ]] || fail "the accessory stored nothing"
log "the accessory holds $stored notification(s)"

# Choosing: a name nobody announces is a clear failure, P-256 is refused before browsing.
if out=$(phone forward --transport lan --service-name "nobody here" --discovery-timeout 3 --timeout 10 --title t 2>&1); then
  fail "an absent service name connected"
fi
echo "$out" | grep -q 'no NotifBridge accessory named "nobody here"' || { echo "$out"; fail "unclear error for an absent name"; }
if out=$(phone forward --transport lan --suite p256 --title t 2>&1); then fail "P-256 was taken on the local network"; fi
echo "$out" | grep -q 'X-Wing only' || { echo "$out"; fail "unclear error for P-256 on the local network"; }

log "PASS: discovered with DNS-SD across namespaces and forwarded over the local-network link"
