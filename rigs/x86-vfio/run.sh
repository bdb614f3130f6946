#!/usr/bin/env bash
# gopmd's x86-vfio rig: boots Debian 12's amd64 kernel under
# qemu-system-x86_64 (q35, emulated Intel IOMMU, QEMU's edu and
# ivshmem-plain devices, an NVMe controller with one SR-IOV VF) and runs
# rigs/x86-vfio/guest, a static program built from gopmd's own pci and dma
# packages, as the guest's init job.
#
# Usage: bash rigs/x86-vfio/run.sh        (root; Debian apt sources; Go on PATH)
# Env:   RIGS_CACHE  downloaded .debs and unpacked packages (default /tmp/rigs-cache; outside git)
#        RIG_OUT     console log, initramfs, qemu command line (default /tmp/rigs-out/gopmd-x86-vfio)
#        ACCEL       tcg (default) or kvm
#        TIMEOUT     seconds before the guest is killed (default 240)
#        KERNEL_PKG  e.g. linux-image-6.1.0-57-amd64-unsigned (default: newest 6.1 one in the apt index)
#        RIG_EXTRA   a static linux/amd64 program (e.g. a Go test binary) copied to /extra and run
#                    after gopmd-rig with RIG_EXTRA_ARGS; its output is printed between RIG-EXTRA-BEGIN
#                    and RIG-EXTRA-END, its exit code becomes a PASS/FAIL line. /rig.conf names the rig.
# Prints the guest's PASS/FAIL/INFO lines, a TIME line and RESULT; exits 0 only when all passed.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CACHE=${RIGS_CACHE:-/tmp/rigs-cache}
OUT=${RIG_OUT:-/tmp/rigs-out/gopmd-x86-vfio}
TIMEOUT=${TIMEOUT:-240}
ACCEL=${ACCEL:-tcg}
T0=$(date +%s.%N)
log() { printf '[rig %s] %s\n' "$(date +%T)" "$*" >&2; }
case "$CACHE" in "$REPO"/*) echo "FAIL host: RIGS_CACHE ($CACHE) must be outside the repository"; exit 1 ;; esac
# One rig run at a time per cache: go test runs packages in parallel, and concurrent runs would
# fetch and unpack the same packages (and call apt) at once; two TCG guests on a small host also
# miss their timeouts.
mkdir -p "$CACHE"
exec 9>"$CACHE/.rig.lock"
flock -w 1800 9 || { echo "FAIL host: another rig run still holds $CACHE/.rig.lock"; exit 1; }

# Host tools.
need=()
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
command -v cpio >/dev/null || need+=(cpio)
[ -x /sbin/modinfo ] || need+=(kmod)
command -v go >/dev/null || { echo "FAIL host: no go on PATH"; exit 1; }
if ((${#need[@]})); then
	log "installing ${need[*]}"
	apt-get update -qq || true
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# Guest kernel and busybox from Debian, cached.
mkdir -p "$CACHE/debs" "$OUT"
newest() { apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64-unsigned$' 2>/dev/null | awk '{print $1}' | sort -V | tail -1; }
if [ -z "${KERNEL_PKG:-}" ]; then
	KERNEL_PKG=$(newest || true)
	[ -n "$KERNEL_PKG" ] || { apt-get update -qq || true; KERNEL_PKG=$(newest || true); }
fi
[ -n "$KERNEL_PKG" ] || { echo "FAIL host: no linux-image-6.1.0-*-amd64-unsigned in the apt index"; exit 1; }
deb() { # package -> cached .deb path
	local f
	f=$(ls "$CACHE/debs/$1_"*_amd64.deb 2>/dev/null | head -1 || true)
	if [ -z "$f" ]; then
		log "downloading $1"
		(cd "$CACHE/debs" && apt-get download -q "$1:amd64" >/dev/null 2>&1) ||
			{ apt-get update -qq || true; (cd "$CACHE/debs" && apt-get download -q "$1:amd64" >/dev/null); }
		f=$(ls "$CACHE/debs/$1_"*_amd64.deb | head -1)
	fi
	echo "$f"
}
unpack() { # .deb -> directory
	local d=$CACHE/x/$(basename "$1" .deb)
	[ -d "$d" ] || { rm -rf "$d.tmp" && mkdir -p "$d.tmp" && dpkg -x "$1" "$d.tmp" && mv "$d.tmp" "$d"; } || return 1
	echo "$d"
}
KROOT=$(unpack "$(deb "$KERNEL_PKG")")
BROOT=$(unpack "$(deb busybox-static)")
KVER=$(ls "$KROOT/lib/modules" | head -1)
MODDIR=$KROOT/lib/modules/$KVER
log "kernel $KERNEL_PKG ($KVER)"

# Guest program from this checkout.
log "building rigs/x86-vfio/guest (static, CGO_ENABLED=0)"
(cd "$REPO" && GOOS=linux GOARCH=amd64 CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$OUT/gopmd-rig" ./rigs/x86-vfio/guest)

# Initramfs: busybox, the modules with their dependencies, the program.
ROOT=$OUT/initramfs
rm -rf "$ROOT"
mkdir -p "$ROOT"/{bin,proc,sys,dev,tmp,lib/modules}
cp "$BROOT/bin/busybox" "$ROOT/bin/"
cp "$OUT/gopmd-rig" "$ROOT/"
if [ -n "${RIG_EXTRA:-}" ]; then cp "$RIG_EXTRA" "$ROOT/extra"; chmod +x "$ROOT/extra"; fi
printf 'RIG=x86-vfio\nEXTRA_ARGS="%s"\n' "${RIG_EXTRA_ARGS:-}" >"$ROOT/rig.conf"
declare -A seen=()
order=()
addmod() {
	local m=$1 f d
	[ -n "${seen[$m]:-}" ] && return
	seen[$m]=1
	f=$(find "$MODDIR/kernel" \( -name "$m.ko" -o -name "${m//_/-}.ko" -o -name "${m//-/_}.ko" \) | head -1)
	[ -n "$f" ] || return 0 # built in
	for d in $(/sbin/modinfo -F depends "$f" | tr ',' ' '); do addmod "$d"; done
	cp "$f" "$ROOT/lib/modules/"
	order+=("$(basename "$f")")
}
for m in vfio vfio_iommu_type1 vfio-pci uio uio_pci_generic; do addmod "$m"; done
printf '%s\n' "${order[@]}" >"$ROOT/lib/modules/order"
cat >"$ROOT/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
echo "RIG-INIT uptime=$(cut -d' ' -f1 /proc/uptime)"
for m in $(cat /lib/modules/order); do
	args=; [ "$m" = vfio-pci.ko ] && args=enable_sriov=1 # the NVMe PF's VF (VF token checks)
	insmod /lib/modules/$m $args 2>&1 | sed 's/^/insmod: /'
done
echo 8 > /proc/sys/vm/nr_hugepages
/gopmd-rig
echo "RIG-RC $?"
. /rig.conf
if [ -x /extra ]; then
	echo "RIG-EXTRA-BEGIN"
	/extra $EXTRA_ARGS
	echo "RIG-EXTRA-RC $?"
	echo "RIG-EXTRA-END"
fi
echo "RIG-DONE uptime=$(cut -d' ' -f1 /proc/uptime)"
poweroff -f
INIT
chmod +x "$ROOT/init"
(cd "$ROOT" && find . | cpio -o -H newc --quiet | gzip -1 >"$OUT/initrd.gz")

# Boot.
SHM=$OUT/ivshmem.bin
head -c $((1 << 20)) /dev/zero >"$SHM"
printf 'GOPMD-IVSHMEM-FROM-HOST' | dd of="$SHM" conv=notrunc status=none
if [ "$ACCEL" = kvm ]; then MACHINE=q35,accel=kvm,kernel-irqchip=split CPU=host; else MACHINE=q35,accel=tcg CPU=max; fi
QEMU=(qemu-system-x86_64 -machine "$MACHINE" -cpu "$CPU" -smp 2 -m 1024 -nodefaults -display none
	-serial stdio -monitor none -no-reboot
	-device intel-iommu,intremap=on,caching-mode=on
	-device edu
	-object memory-backend-file,id=shm0,share=on,mem-path="$SHM",size=1M -device ivshmem-plain,memdev=shm0
	-device nvme-subsys,id=nvmesubsys0
	-device nvme,serial=gopmd-sriov,subsys=nvmesubsys0,sriov_max_vfs=1,sriov_vq_flexible=2,sriov_vi_flexible=1,max_ioqpairs=4
	-kernel "$KROOT/boot/vmlinuz-$KVER" -initrd "$OUT/initrd.gz"
	-append "console=ttyS0 intel_iommu=on iommu=pt rdinit=/init panic=-1 no_timer_check quiet loglevel=4")
printf '%q ' "${QEMU[@]}" >"$OUT/qemu.cmd"
CONSOLE=$OUT/console.log
rm -f "$CONSOLE"
: >"$CONSOLE"
log "booting ($ACCEL)"
TB=$(date +%s.%N)
"${QEMU[@]}" </dev/null >"$CONSOLE" 2>&1 &
QPID=$!
TI=""
while kill -0 $QPID 2>/dev/null; do
	if [ -z "$TI" ] && grep -q RIG-INIT "$CONSOLE"; then TI=$(date +%s.%N); fi
	if grep -q RIG-DONE "$CONSOLE"; then break; fi
	if (($(date +%s) - ${TB%.*} > TIMEOUT)); then log "timeout after ${TIMEOUT}s"; break; fi
	sleep 0.2
done
TE=$(date +%s.%N)
kill $QPID 2>/dev/null || true
wait $QPID 2>/dev/null || true

echo "===== guest ====="
tr -d '\r' <"$CONSOLE" | grep -a -E '^(PASS|FAIL|INFO) |RESULT|RIG-|insmod:|Kernel panic|EDU:' || true
echo "================="
if [ -n "${RIG_EXTRA:-}" ]; then
	echo "===== extra: $(basename "$RIG_EXTRA") ${RIG_EXTRA_ARGS:-} ====="
	tr -d '\r' <"$CONSOLE" | sed -n '/^RIG-EXTRA-BEGIN/,/^RIG-EXTRA-END/p' | grep -a -v -E '^\[ *[0-9]+\.[0-9]+\]' || true
	echo "================="
fi
# The guest's record of PCI sysfs before any binding (pci/testdata/x86-rig-sysfs.txt is one).
tr -d '\r' <"$CONSOLE" | sed -n 's/^SYSFS //p' >"$OUT/sysfs.txt" || true
fails=0
check() { if eval "$2"; then echo "PASS $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi; }
check "guest reached /init" "grep -q RIG-INIT '$CONSOLE'"
check "gopmd-rig passed every check" "grep -a -q 'GOPMD-RIG RESULT: PASS' '$CONSOLE'"
check "host finds the guest's marker in ivshmem" "grep -a -q GOPMD-IVSHMEM-FROM-GUEST '$SHM'"
if [ -n "${RIG_EXTRA:-}" ]; then
	check "guest: extra program ($(basename "$RIG_EXTRA")) exited 0" "tr -d '\r' <'$CONSOLE' | grep -a -q '^RIG-EXTRA-RC 0$'"
fi
TF=$(date +%s.%N)
awk -v b="$TB" -v i="${TI:-$TE}" -v e="$TE" -v s="$T0" -v f="$TF" -v a="$ACCEL" 'BEGIN {
	printf "TIME (%s) boot-to-init %.1fs, boot-to-done %.1fs, whole script %.1fs\n", a, i-b, e-b, f-s }'
echo "console: $CONSOLE  qemu: $OUT/qemu.cmd  sysfs record: $OUT/sysfs.txt"
if ((fails)); then echo "RESULT: FAIL ($fails)"; exit 1; fi
echo "RESULT: PASS"
