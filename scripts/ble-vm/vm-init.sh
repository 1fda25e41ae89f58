#!/bb/busybox sh
# PID 1 of the BLE VM (copied into the initramfs as /init by mkinitramfs.sh).
# Mounts the host's /usr and /etc read-only over virtio-9p, tmpfs for the writable
# places, the shares listed in /nbvm/mounts, then hands over to guest-env.sh and
# powers the VM off so that QEMU exits.
B=/bb/busybox
say() { echo "vm-init: $*"; }
halt_vm() { $B sync; echo o > /proc/sysrq-trigger; $B sleep 10; }

$B mkdir -p /proc /sys /dev /usr /etc /run /tmp /var /lib /root /mnt
$B mount -t proc proc /proc
$B mount -t sysfs sys /sys
$B mount -t devtmpfs dev /dev
for m in $($B cat /modlist); do $B insmod "$m" || say "insmod $m failed"; done

# Read-only shares use cache=loose (the guest caches pages and metadata: much faster
# exec under TCG); the read-write run dir stays uncached so both sides see writes.
O=trans=virtio,version=9p2000.L,msize=262144
RO=$O,ro,cache=loose
$B mount -t 9p -o "$RO" usr /usr || { say "FATAL: 9p mount of host /usr failed"; halt_vm; }
$B mount -t 9p -o "$RO" etc /etc || { say "FATAL: 9p mount of host /etc failed"; halt_vm; }
$B ln -s usr/bin /bin
$B ln -s usr/sbin /sbin
$B ln -s usr/lib64 /lib64
$B ln -s /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu
$B mount -t tmpfs tmpfs /run
$B mount -t tmpfs tmpfs /tmp
$B mount -t tmpfs tmpfs /var
$B mount -t tmpfs tmpfs /root
$B mkdir -p /var/lib/bluetooth /var/lib/dbus /var/tmp /var/log /dev/pts /dev/shm /lib/modules
$B ln -s /run /var/run
$B ln -sf /proc/self/fd /dev/fd
$B ln -sf /proc/self/fd/0 /dev/stdin
$B ln -sf /proc/self/fd/1 /dev/stdout
$B ln -sf /proc/self/fd/2 /dev/stderr
$B mount -t devpts devpts /dev/pts
$B mount -t tmpfs tmpfs /dev/shm

while read -r tag path mode; do
  [ -n "$tag" ] || continue
  $B mkdir -p "$path" 2>/dev/null
  if [ "$mode" = ro ]; then opts=$RO; else opts=$O,rw; fi
  $B mount -t 9p -o "$opts" "$tag" "$path" || { say "FATAL: 9p mount $tag on $path ($mode) failed"; halt_vm; }
done < /nbvm/mounts

RUN=$($B cat /nbvm/run-dir)
[ -f "$RUN/guest.conf" ] || { say "FATAL: $RUN/guest.conf not visible in the guest"; halt_vm; }
SCRIPTS=$($B cat /nbvm/scripts-dir)
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb LANG=C.UTF-8
say "userspace up at $($B cut -d' ' -f1 /proc/uptime)s guest uptime"

[ -f "$SCRIPTS/guest-env.sh" ] || { say "FATAL: $SCRIPTS/guest-env.sh not visible in the guest"; halt_vm; }
/usr/bin/bash "$SCRIPTS/guest-env.sh" run "$RUN/guest.conf"
rc=$?
echo "$rc" > "$RUN/guest-done"
say "guest run finished rc=$rc at $($B cut -d' ' -f1 /proc/uptime)s"
halt_vm
