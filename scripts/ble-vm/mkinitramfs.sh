#!/usr/bin/env bash
# Build the busybox initramfs for the BLE VM (called by run.sh).
#   mkinitramfs.sh KERNEL_DIR KERNEL_VERSION MOUNTS_FILE RUN_DIR OUTPUT.gz
# The initramfs holds only busybox, the virtio/9p modules needed to mount the
# host's /usr and /etc, the share table and the init script (vm-init.sh).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KDIR=$1 KVER=$2 MOUNTS=$3 RUN=$4 OUT=$5

ROOT=$(dirname "$OUT")/initramfs-root
rm -rf "$ROOT"
mkdir -p "$ROOT/bb" "$ROOT/mods" "$ROOT/nbvm"
cp /bin/busybox "$ROOT/bb/busybox"
file_is_static() { ! ldd "$1" >/dev/null 2>&1; }
file_is_static "$ROOT/bb/busybox" || { echo "mkinitramfs: /bin/busybox is not static (install busybox-static)" >&2; exit 1; }

: > "$ROOT/modlist"
for m in virtio_pci 9pnet_virtio 9p virtio_rng; do
  modprobe -d "$KDIR" -S "$KVER" --show-depends "$m" \
    || { echo "mkinitramfs: module $m not found for kernel $KVER" >&2; exit 1; }
done | awk '$1 == "insmod" && !seen[$2]++ {print $2}' | while read -r ko; do
  cp "$ko" "$ROOT/mods/"
  echo "/mods/$(basename "$ko")" >> "$ROOT/modlist"
done
[ -s "$ROOT/modlist" ] || { echo "mkinitramfs: no modules collected" >&2; exit 1; }

# Guest view of the shares: tag guest-path mode
awk '{print $1, $3, $4}' "$MOUNTS" > "$ROOT/nbvm/mounts"
echo "$RUN" > "$ROOT/nbvm/run-dir"
echo "$HERE" > "$ROOT/nbvm/scripts-dir"
cp "$HERE/vm-init.sh" "$ROOT/init"
chmod 755 "$ROOT/init"

(cd "$ROOT" && find . | /bin/busybox cpio -o -H newc -R 0:0 2>/dev/null | gzip -1) > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
