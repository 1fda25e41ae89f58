#!/usr/bin/env bash
# Boot a Debian kernel in QEMU (TCG) with BlueZ, two btvirt LE controllers and the
# repo mounted read-only, run guest test script(s) inside it, and report PASS/FAIL.
#
#   sudo scripts/ble-vm/run.sh [--build] [--no-apt] [guest-test.sh ...]
#
# Default guest test: scripts/ble-vm/guest-test.sh. See README.md in this directory.
# Exit status: 0 only if the VM produced results and nothing failed.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)

WORK=${NBVM_WORK_DIR:-$REPO/.build/ble-vm}
VM_TIMEOUT=${NBVM_VM_TIMEOUT:-1200}         # whole VM, seconds (boot + setup + all tests)
TEST_TIMEOUT=${NBVM_TEST_TIMEOUT:-900}      # each guest test script, seconds
BTVIRT_ATTEMPTS=${NBVM_BTVIRT_ATTEMPTS:-5}
VM_MEM=${NBVM_MEM:-1024}
VM_ACCEL=${NBVM_ACCEL:-tcg,thread=multi}    # KVM does not work on this machine kind
VM_CPU=${NBVM_CPU:-max}
SWIFT_TOOLCHAIN=${NBVM_SWIFT_TOOLCHAIN:-/opt/swift}
BIN_DIR=${NBVM_BIN_DIR:-$REPO/.build/debug}   # host build dir the products are copied from
PRODUCTS=${NBVM_PRODUCTS:-notifbridge}        # SwiftPM products the guest tests need
TAIL_LINES=${NBVM_TAIL_LINES:-40}
DO_APT=1
DO_BUILD=0
TESTS=()

usage() { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
  case $1 in
    --build) DO_BUILD=1 ;;
    --no-apt) DO_APT=0 ;;
    -h|--help) usage; exit 0 ;;
    --) shift; TESTS+=("$@"); break ;;
    -*) echo "run.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    *) TESTS+=("$1") ;;
  esac
  shift
done
[ ${#TESTS[@]} -gt 0 ] || TESTS=("$HERE/guest-test.sh")
[ "${NBVM_SKIP_APT:-0}" = 1 ] && DO_APT=0

T0=$(date +%s%N)
log() {
  local ds=$(( ($(date +%s%N) - T0) / 100000000 ))
  printf '[ble-vm +%4d.%ds] %s\n' $((ds / 10)) $((ds % 10)) "$*"
}
die() { echo "ble-vm: ERROR: $*" >&2; echo "0 passed, 1 failed"; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (apt-get, and read-write virtio-9p with security_model=none)"

# ---------------------------------------------------------------- packages
PKGS=(qemu-system-x86 busybox-static bluez bluez-test-tools kmod dbus coreutils util-linux)
if [ "$DO_APT" = 1 ]; then
  log "apt-get update + install ${PKGS[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null || die "apt-get update failed"
  apt-get install -y -qq --no-install-recommends "${PKGS[@]}" >/dev/null \
    || die "apt-get install ${PKGS[*]} failed"
fi
for tool in qemu-system-x86_64 /bin/busybox btvirt bluetoothd btmgmt bluetoothctl dbus-daemon depmod modprobe flock timeout; do
  command -v "$tool" >/dev/null || die "required tool '$tool' not found (run without --no-apt?)"
done

# ---------------------------------------------------------------- locking
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
exec 9>"$WORK/.lock"
flock -w 900 9 || die "another ble-vm run holds $WORK/.lock"

# ---------------------------------------------------------------- optional build
if [ "$DO_BUILD" = 1 ]; then
  command -v swift >/dev/null || export PATH="$SWIFT_TOOLCHAIN/usr/bin:$PATH"
  for p in $PRODUCTS; do
    log "swift build --product $p"
    (cd "$REPO" && swift build --product "$p") || die "swift build --product $p failed"
  done
fi

# ---------------------------------------------------------------- kernel
# Resolve the ABI-specific image package through the metapackage; never installed, only unpacked.
KDIR=$WORK/kernel
KPKG=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}' || true)
KVER_DEB=""
[ -n "$KPKG" ] && KVER_DEB=$(apt-cache policy "$KPKG" 2>/dev/null | awk '/Candidate:/{print $2; exit}')
WANT="$KPKG $KVER_DEB"
HAVE=$(cat "$KDIR/.package" 2>/dev/null || true)
if [ -d "$KDIR/lib/modules" ] && { [ -z "$KPKG" ] || [ "$HAVE" = "$WANT" ]; }; then
  [ -n "$KPKG" ] || log "WARNING: cannot resolve linux-image-amd64 (apt lists missing?); reusing unpacked kernel '$HAVE'"
  log "kernel: reusing $HAVE"
else
  [ -n "$KPKG" ] || die "cannot resolve the kernel package from linux-image-amd64 (run apt-get update) and no kernel is unpacked in $KDIR"
  log "kernel: downloading $KPKG $KVER_DEB"
  rm -rf "$WORK/dl" "$KDIR.tmp"; mkdir -p "$WORK/dl"
  chown _apt "$WORK/dl" 2>/dev/null || true   # apt downloads as _apt when it can
  (cd "$WORK/dl" && apt-get download -qq "$KPKG" >/dev/null) || die "apt-get download $KPKG failed"
  deb=$(find "$WORK/dl" -maxdepth 1 -name "${KPKG}_*.deb" | head -n1)
  [ -n "$deb" ] || die "downloaded $KPKG but no .deb found in $WORK/dl"
  dpkg -x "$deb" "$KDIR.tmp" || die "dpkg -x $deb failed"
  kv=$(find "$KDIR.tmp/lib/modules" -mindepth 1 -maxdepth 1 -printf '%f\n' | head -n1)
  depmod -b "$KDIR.tmp" "$kv" || die "depmod for $kv failed"
  echo "$WANT" > "$KDIR.tmp/.package"
  rm -rf "$KDIR" "$WORK/dl"; mv "$KDIR.tmp" "$KDIR"
fi
KVER=$(find "$KDIR/lib/modules" -mindepth 1 -maxdepth 1 -printf '%f\n' | head -n1)
VMLINUZ=$KDIR/boot/vmlinuz-$KVER
if [ -z "$KVER" ] || [ ! -f "$VMLINUZ" ]; then die "missing kernel: no $KDIR/boot/vmlinuz-<ver> matching lib/modules/<ver> (delete $KDIR and rerun)"; fi
[ -f "$KDIR/lib/modules/$KVER/modules.dep" ] || depmod -b "$KDIR" "$KVER" || die "depmod for $KVER failed"
log "kernel: $KVER"

# ---------------------------------------------------------------- run dir + guest config
RUN=$WORK/run
rm -rf "$RUN"; mkdir -p "$RUN/logs" "$RUN/tests"
: > "$RUN/results"

# Guest test paths: anything outside the mounted repo is copied into the run dir.
GUEST_TESTS=()
for t in "${TESTS[@]}"; do
  [ -f "$t" ] || die "guest test '$t' not found"
  abs=$(cd "$(dirname "$t")" && pwd)/$(basename "$t")
  case $abs in
    "$REPO"/*) GUEST_TESTS+=("$abs") ;;
    *) cp "$abs" "$RUN/tests/"; GUEST_TESTS+=("$RUN/tests/$(basename "$abs")") ;;
  esac
done

# Snapshot the products (and SwiftPM resource bundles) so that a concurrent `swift build`
# relinking them in the shared .build cannot change a binary under the running guest.
rm -rf "$WORK/bin.tmp"; mkdir -p "$WORK/bin.tmp"
for p in $PRODUCTS; do
  if [ -x "$BIN_DIR/$p" ]; then
    cp "$BIN_DIR/$p" "$WORK/bin.tmp/$p"
  else
    log "WARNING: $BIN_DIR/$p not built (swift build --product $p, or run.sh --build); guest tests using it will fail"
  fi
done
for r in "$BIN_DIR"/*.resources; do
  if [ -d "$r" ]; then cp -r "$r" "$WORK/bin.tmp/"; fi
done
rm -rf "${WORK:?}/bin"; mv "$WORK/bin.tmp" "$WORK/bin"
log "products copied for the guest: $(cd "$WORK/bin" && echo *)"

# virtio-9p shares: tag host-path guest-path mode (mounted in this order by the init).
MOUNTS=$WORK/initramfs-mounts
{
  echo "mods $KDIR/lib/modules /lib/modules ro"
  echo "repo $REPO $REPO ro"
  echo "bin $WORK/bin $WORK/bin ro"
  if [ -d "$SWIFT_TOOLCHAIN" ]; then echo "swift $SWIFT_TOOLCHAIN $SWIFT_TOOLCHAIN ro"; fi
  echo "run $RUN $RUN rw"
} > "$MOUNTS"
if [ ! -d "$SWIFT_TOOLCHAIN" ]; then log "WARNING: Swift toolchain $SWIFT_TOOLCHAIN not found; Swift binaries will not run in the guest"; fi

{
  # every NBVM_* variable of the caller reaches the guest (e.g. NBVM_BTVIRT_WAIT,
  # NBVM_BLUETOOTHD_ARGS, or parameters of later guest tests); the fixed ones follow
  while IFS= read -r var; do
    printf '%s=%q\n' "$var" "${!var}"
  done < <(compgen -e | grep '^NBVM_' || true)
  printf 'NBVM_REPO=%q\n' "$REPO"
  printf 'NBVM_RUN_DIR=%q\n' "$RUN"
  printf 'NBVM_LOG_DIR=%q\n' "$RUN/logs"
  printf 'NBVM_RESULTS=%q\n' "$RUN/results"
  printf 'NBVM_SCRIPTS=%q\n' "$HERE"
  printf 'NBVM_BIN_DIR=%q\n' "$WORK/bin"
  printf 'NBVM_HOST_BIN_DIR=%q\n' "$BIN_DIR"
  printf 'NBVM_SWIFT_TOOLCHAIN=%q\n' "$SWIFT_TOOLCHAIN"
  printf 'NBVM_TEST_TIMEOUT=%q\n' "$TEST_TIMEOUT"
  printf 'NBVM_BTVIRT_ATTEMPTS=%q\n' "$BTVIRT_ATTEMPTS"
  printf 'NBVM_TESTS=(%s)\n' "$(printf '%q ' "${GUEST_TESTS[@]}")"
} > "$RUN/guest.conf"

# ---------------------------------------------------------------- initramfs
"$HERE/mkinitramfs.sh" "$KDIR" "$KVER" "$MOUNTS" "$RUN" "$WORK/initramfs.gz" \
  || die "building the initramfs failed"
log "initramfs built ($(du -h "$WORK/initramfs.gz" | cut -f1))"

# ---------------------------------------------------------------- boot
QEMU_ARGS=(-accel "$VM_ACCEL" -cpu "$VM_CPU" -smp 2 -m "$VM_MEM"
  -nodefaults -no-user-config -display none -serial stdio -no-reboot
  -kernel "$VMLINUZ" -initrd "$WORK/initramfs.gz"
  -append "console=ttyS0 quiet loglevel=4 panic=-1"
  -device virtio-rng-pci)
n=0
add_share() {  # tag host-path ro|rw
  local ro=""
  if [ "$3" = ro ]; then ro=,readonly=on; fi
  QEMU_ARGS+=(-fsdev "local,id=fs$n,path=$2,security_model=none$ro" -device "virtio-9p-pci,fsdev=fs$n,mount_tag=$1")
  n=$((n + 1))
}
add_share usr /usr ro
add_share etc /etc ro
while read -r tag hpath _gpath mode; do add_share "$tag" "$hpath" "$mode"; done < "$MOUNTS"

log "booting VM (TCG, -smp 2, ${VM_MEM} MiB, timeout ${VM_TIMEOUT}s); guest tests: ${GUEST_TESTS[*]}"
set +e
timeout --kill-after=15 "$VM_TIMEOUT" qemu-system-x86_64 "${QEMU_ARGS[@]}" </dev/null 2>&1 \
  | tr -d '\r' | tee "$RUN/console.log" | sed -u 's/^/  [vm] /'
QEMU_RC=${PIPESTATUS[0]}
set -e
log "VM exited (rc=$QEMU_RC)"

# ---------------------------------------------------------------- results
FAILED_EXTRA=()
if [ "$QEMU_RC" = 124 ] || [ "$QEMU_RC" = 137 ]; then
  FAILED_EXTRA+=("VM timed out: no power-off within ${VM_TIMEOUT}s (NBVM_VM_TIMEOUT)")
elif [ "$QEMU_RC" != 0 ]; then
  FAILED_EXTRA+=("qemu-system-x86_64 exited with status $QEMU_RC")
fi
if [ ! -f "$RUN/guest-done" ]; then
  FAILED_EXTRA+=("the guest never finished its test run (see console above)")
fi
if [ ! -s "$RUN/results" ]; then
  FAILED_EXTRA+=("the VM produced no results")
fi

pass=$(grep -c '^PASS ' "$RUN/results" || true)
fail=$(grep -c '^FAIL ' "$RUN/results" || true)
skip=$(grep -c '^SKIP ' "$RUN/results" || true)
[ ${#FAILED_EXTRA[@]} -eq 0 ] || fail=$((fail + 1))

echo
echo "==== BLE VM results ($RUN/results)"
cat "$RUN/results"
if [ ${#FAILED_EXTRA[@]} -gt 0 ]; then
  # one failure for the VM as a whole, however many symptoms
  VM_FAIL="FAIL vm"
  for f in "${FAILED_EXTRA[@]}"; do VM_FAIL+=" $f;"; done
  echo "${VM_FAIL%;}"
fi

if [ "$fail" -gt 0 ]; then
  echo
  echo "==== guest logs (last $TAIL_LINES lines each; full logs in $RUN/logs)"
  shopt -s nullglob
  for f in "$RUN"/logs/*; do
    [ -f "$f" ] || continue
    echo "---- $(basename "$f")"
    tail -n "$TAIL_LINES" "$f" | sed $'s/\x1b\\[[0-9;]*m//g' | tr -d '\001\002\r'

  done
  if [ ! -s "$RUN/results" ]; then
    echo "---- console.log"
    tail -n "$TAIL_LINES" "$RUN/console.log"
  fi
fi

log "done"
if [ "$skip" -gt 0 ]; then
  echo "$pass passed, $fail failed, $skip skipped"
else
  echo "$pass passed, $fail failed"
fi
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
