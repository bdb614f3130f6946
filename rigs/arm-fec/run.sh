#!/usr/bin/env bash
# gopmd's ARM FEC rig: boot Debian's armmp kernel on QEMU's i.MX6UL (two ENETs),
# run gopmd's fec driver in the guest (built GOARCH=arm GOARM=7 from this tree)
# and trade frames with a host-side Go program over QEMU's UDP socket netdevs.
#
# Usage: bash rigs/arm-fec/run.sh [machine]     machine: mcimx6ul-evk (default), mcimx7d-sabre
# Env:   RIG_ACCESS  devmem (default): no kernel driver on the ENETs, the driver maps them through
#                    /dev/mem; uio: both ENET nodes become "generic-uio" and uio_pdrv_genirq (built
#                    here from Debian's source: armmp leaves it out) exposes them as /dev/uio0, uio1.
#        RIG_DMA     carveout (default): DMA memory from the top 64 MiB of RAM kept from the kernel with
#                    mem=, mapped through /dev/mem (32 MiB per ENET); pagemap: mlocked pages with physical
#                    addresses from /proc/self/pagemap (dma-coherent=1: QEMU's DMA is coherent).
#        RIG_BD      enhanced (default) or legacy descriptors.
#        RIG_FRAMES  frames each way per ENET (default 64).
#        RIG_FROM_HEAD  1: build from the committed tree (git archive HEAD), not the working tree.
#        RIG_OPENER  pci (default): the ENETs are opened by the pci package's platform backend, which
#                    is what the rig tests; own: the rig's minimal opener (guest/opener_own.go), for
#                    debugging only: the run then FAILs its "opened by the pci platform backend" checks.
#        RIG_PORT    first of four UDP ports on 127.0.0.1 (default: picked from the PID).
#        RIGS_CACHE  downloads (default /tmp/rigs-cache; outside the tree), RIG_OUT outputs
#                    (default /tmp/rigs-out/gopmd-arm-fec), TIMEOUT seconds (default 300).
#        RIG_EXTRA   a static linux/arm program (e.g. a Go test binary built GOARCH=arm GOARM=7) copied
#                    to /extra and run after fecrig with RIG_EXTRA_ARGS; /rig.conf gives it DEVS and
#                    CARVE. Its output is printed between RIG-EXTRA-BEGIN and RIG-EXTRA-END, its exit
#                    code becomes a PASS/FAIL line.
# Needs root (apt, dpkg --add-architecture armhf), Debian 12 apt sources and Go on PATH.
# Prints PASS/FAIL lines and TIME lines; exit 0 only when everything passed.
set -euo pipefail

MACHINE=${1:-${MACHINE:-mcimx6ul-evk}}
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CACHE=${RIGS_CACHE:-/tmp/rigs-cache}
OUT=${RIG_OUT:-/tmp/rigs-out/gopmd-arm-fec}
TIMEOUT=${TIMEOUT:-300}
ACCESS=${RIG_ACCESS:-devmem}
DMA=${RIG_DMA:-carveout}
BD=${RIG_BD:-enhanced}
FRAMES=${RIG_FRAMES:-64}
RAM_MB=512
CARVE_MB=64

case $MACHINE in
mcimx6ul-evk)  DTB=imx6ul-14x14-evk.dtb; CONSOLE=ttymxc0; DEVS=2188000.ethernet,20b4000.ethernet; RAM_BASE=0x80000000 ;;
mcimx7d-sabre) DTB=imx7d-sdb.dtb;        CONSOLE=ttymxc0; DEVS=30be0000.ethernet,30bf0000.ethernet; RAM_BASE=0x80000000 ;;
*) echo "unknown machine $MACHINE (mcimx6ul-evk or mcimx7d-sabre: two ENETs)"; exit 2 ;;
esac
CARVE=$(printf '0x%x' $((RAM_BASE + (RAM_MB - CARVE_MB) * 1024 * 1024)))
CARVE_ARG=$CARVE
[ "$DMA" = pagemap ] && CARVE_ARG=0
P0=${RIG_PORT:-$((20000 + ($$ % 2000) * 4))}
NETDEV0="socket,udp=127.0.0.1:$P0,localaddr=127.0.0.1:$((P0 + 1))"
NETDEV1="socket,udp=127.0.0.1:$((P0 + 2)),localaddr=127.0.0.1:$((P0 + 3))"
HOSTPORTS="127.0.0.1:$P0/127.0.0.1:$((P0 + 1)),127.0.0.1:$((P0 + 2))/127.0.0.1:$((P0 + 3))"

log() { printf '[rig %s] %s\n' "$(date +%T)" "$*"; }
T_START=$(date +%s.%N)

# One rig run at a time per cache: go test runs packages in parallel, and concurrent runs would
# fetch and unpack the same packages (and call apt) at once; two TCG guests on a small host also
# miss their timeouts.
mkdir -p "$CACHE"
exec 9>"$CACHE/.rig.lock"
flock -w 1800 9 || { echo "FAIL host: another rig run still holds $CACHE/.rig.lock"; exit 1; }

# --- host tools -------------------------------------------------------------
need=()
command -v qemu-system-arm >/dev/null || need+=(qemu-system-arm)
command -v cpio >/dev/null || need+=(cpio)
command -v bc >/dev/null || need+=(bc)
command -v fdtput >/dev/null || need+=(device-tree-compiler)
[ -x /sbin/modinfo ] || need+=(kmod)
command -v go >/dev/null || { echo "FAIL host: go toolchain not found"; exit 1; }
if ((${#need[@]})); then
	log "installing ${need[*]}"
	apt-get update -qq || true
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# --- guest packages (armhf), cached outside the tree --------------------------
mkdir -p "$CACHE/debs" "$OUT"
if ! dpkg --print-foreign-architectures | grep -qx armhf; then
	log "adding armhf architecture"
	dpkg --add-architecture armhf
	apt-get update -qq || true
fi
if [ -z "${KERNEL_PKG:-}" ]; then
	KERNEL_PKG=$(apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-armmp$' 2>/dev/null | awk '{print $1}' | sort -V | tail -1 || true)
	if [ -z "$KERNEL_PKG" ]; then
		apt-get update -qq || true
		KERNEL_PKG=$(apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-armmp$' | awk '{print $1}' | sort -V | tail -1)
	fi
fi
[ -n "$KERNEL_PKG" ] || { echo "FAIL host: no linux-image-*-armmp:armhf in the apt index"; exit 1; }
fetch() { # package:arch -> path of the .deb in the cache
	local p=$1 f
	f=$(ls "$CACHE/debs/${p%%:*}_"*"_${p##*:}.deb" 2>/dev/null | head -1 || true)
	if [ -z "$f" ]; then
		local q=$p
		[ "${p##*:}" = all ] && q=${p%%:*}
		(cd "$CACHE/debs" && apt-get download -q "$q" >/dev/null 2>&1) || { apt-get update -qq || true; (cd "$CACHE/debs" && apt-get download -q "$q" >/dev/null); }
		f=$(ls "$CACHE/debs/${p%%:*}_"*"_${p##*:}.deb" | head -1)
	fi
	echo "$f"
}
KDEB=$(fetch "$KERNEL_PKG:armhf")
BDEB=$(fetch "busybox-static:armhf")
KROOT=$CACHE/x/$(basename "$KDEB" .deb)
BROOT=$CACHE/x/$(basename "$BDEB" .deb)
[ -d "$KROOT" ] || { mkdir -p "$KROOT.tmp" && dpkg -x "$KDEB" "$KROOT.tmp" && mv "$KROOT.tmp" "$KROOT"; }
[ -d "$BROOT" ] || { mkdir -p "$BROOT.tmp" && dpkg -x "$BDEB" "$BROOT.tmp" && mv "$BROOT.tmp" "$BROOT"; }
KVER=$(ls "$KROOT/lib/modules" | head -1)
VMLINUZ=$KROOT/boot/vmlinuz-$KVER
DTBPATH=$KROOT/usr/lib/linux-image-$KVER/$DTB
MODDIR=$KROOT/lib/modules/$KVER
log "kernel $KERNEL_PKG ($KVER), machine $MACHINE, ENETs $DEVS, access $ACCESS, DMA $DMA (carve-out $CARVE+${CARVE_MB}M), $BD descriptors"

# --- programs: the guest driver program (armv7) and the host peer -------------
T_BUILD=$(date +%s.%N)
if [ "${RIG_FROM_HEAD:-0}" = 1 ]; then
	rm -rf "$OUT/src" && mkdir -p "$OUT/src"
	git -C "$REPO" archive HEAD | tar -x -C "$OUT/src"
	REPO=$OUT/src
fi
OPENER=${RIG_OPENER:-pci}
TAGS=""
[ "$OPENER" = own ] && TAGS=rigown
log "building guest program from $REPO (GOARCH=arm GOARM=7 CGO_ENABLED=0, opener $OPENER) and host program"
if ! (cd "$REPO" && GOOS=linux GOARCH=arm GOARM=7 CGO_ENABLED=0 go build -tags "$TAGS" -trimpath -ldflags='-s -w' -o "$OUT/fecrig" ./rigs/arm-fec/guest) 2>"$OUT/build.log"; then
	sed 's/^/[rig] /' "$OUT/build.log"
	echo "FAIL host: the guest program (fec driver + pci platform backend) does not build for GOARCH=arm GOARM=7"
	echo "RESULT: FAIL (build)"
	exit 1
fi
(cd "$REPO" && CGO_ENABLED=0 go build -o "$OUT/fecrighost" ./rigs/arm-fec/host)

# --- the device tree: ENET nodes become generic-uio for RIG_ACCESS=uio ----------
cp "$DTBPATH" "$OUT/$DTB"
DTBPATH=$OUT/$DTB
find_node() { # unit address -> node path
	local want=$1 p=$2 c q
	for c in $(fdtget -l "$DTBPATH" "$p" 2>/dev/null); do
		q="${p%/}/$c"
		[ "$c" = "ethernet@$want" ] && { echo "$q"; return 0; }
		case $c in soc* | bus@* | aips* | spba*) find_node "$want" "$q" && return 0 ;; esac
	done
	return 1
}
if [ "$ACCESS" = uio ]; then
	KDEBVER=$(dpkg-deb -f "$KDEB" Version)
	UIOKO=$CACHE/uio_pdrv_genirq-$KVER.ko
	if [ ! -s "$UIOKO" ]; then
		log "building uio_pdrv_genirq.ko for $KVER ($KDEBVER)"
		command -v arm-linux-gnueabihf-gcc-12 >/dev/null && command -v make >/dev/null || {
			apt-get update -qq || true
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends gcc-arm-linux-gnueabihf make libc6-dev >/dev/null
		}
		HDEB=$(fetch "linux-headers-$KVER:armhf")
		CDEB=$(fetch "linux-headers-${KVER%-armmp}-common:all")
		BKDEB=$(ls "$CACHE/debs/linux-kbuild-6.1_${KDEBVER}_amd64.deb" 2>/dev/null || true)
		[ -n "$BKDEB" ] || { (cd "$CACHE/debs" && apt-get download -q "linux-kbuild-6.1:amd64=$KDEBVER" >/dev/null); BKDEB=$(ls "$CACHE/debs/linux-kbuild-6.1_${KDEBVER}_amd64.deb"); }
		SDEB=$(ls "$CACHE/debs/linux-source-6.1_${KDEBVER}_all.deb" 2>/dev/null || true)
		[ -n "$SDEB" ] || { (cd "$CACHE/debs" && apt-get download -q "linux-source-6.1=$KDEBVER" >/dev/null); SDEB=$(ls "$CACHE/debs/linux-source-6.1_${KDEBVER}_all.deb"); }
		B=$(mktemp -d /tmp/rigs-uiobuild.XXXXXX)
		for d in "$HDEB" "$CDEB" "$BKDEB" "$SDEB"; do dpkg -x "$d" "$B/root"; done
		H=$B/root/usr/src/linux-headers-$KVER
		sed -i "s|include /usr/src/|include $B/root/usr/src/|" "$H/Makefile"
		mkdir -p "$B/mod"
		tar -xJf "$B/root/usr/src/linux-source-6.1.tar.xz" -C "$B" linux-source-6.1/drivers/uio/uio_pdrv_genirq.c
		# The host-built modpost misjudges ARM's of_device_id size in the alias table, which
		# only serves autoloading: drop the table.
		sed 's/^MODULE_DEVICE_TABLE(of, uio_of_genirq_match);//' "$B/linux-source-6.1/drivers/uio/uio_pdrv_genirq.c" >"$B/mod/uio_pdrv_genirq.c"
		echo 'obj-m := uio_pdrv_genirq.o' >"$B/mod/Kbuild"
		make -s -C "$H" M="$B/mod" ARCH=arm CROSS_COMPILE=arm-linux-gnueabihf- modules >"$B/build.log" 2>&1 || { cat "$B/build.log"; echo "FAIL host: uio_pdrv_genirq.ko build"; exit 1; }
		cp "$B/mod/uio_pdrv_genirq.ko" "$UIOKO"
		rm -rf "$B"
	fi
	for dev in ${DEVS//,/ }; do
		NODE=$(find_node "${dev%%.*}" /) || { echo "FAIL host: no ethernet@${dev%%.*} node in $DTB"; exit 1; }
		# Keep the FEC compatibles (the driver picks its quirk profile by them) and add
		# generic-uio for uio_pdrv_genirq; the kernel's fec module is not loaded here.
		COMPAT=$(fdtget "$DTBPATH" "$NODE" compatible)
		fdtput -t s "$DTBPATH" "$NODE" compatible $COMPAT generic-uio
		# Suppliers generic-uio does not need (imx7d-sdb's PHY reset sits on an SPI GPIO
		# expander that never probes): fw_devlink would hold the probe back for them.
		for prop in phy-reset-gpios phy-supply; do fdtput -d "$DTBPATH" "$NODE" "$prop" 2>/dev/null || true; done
		log "$NODE: compatible=$(fdtget "$DTBPATH" "$NODE" compatible)"
	done
fi

# --- initramfs: busybox, the driver program, uio modules ------------------------
ROOT=$OUT/initramfs
rm -rf "$ROOT"
mkdir -p "$ROOT"/{bin,proc,sys,dev,tmp,lib/modules}
cp "$BROOT/bin/busybox" "$ROOT/bin/busybox"
cp "$OUT/fecrig" "$ROOT/fecrig"
if [ -n "${RIG_EXTRA:-}" ]; then cp "$RIG_EXTRA" "$ROOT/extra"; chmod +x "$ROOT/extra"; fi
: >"$ROOT/lib/modules/order"
if [ "$ACCESS" = uio ]; then
	f=$(find "$MODDIR/kernel" -name uio.ko | head -1)
	cp "$f" "$ROOT/lib/modules/uio.ko"
	cp "$UIOKO" "$ROOT/lib/modules/uio_pdrv_genirq.ko"
	printf 'uio.ko\nuio_pdrv_genirq.ko\n' >"$ROOT/lib/modules/order"
fi
cat >"$ROOT/rig.conf" <<CONF
RIG=arm-fec
DEVS=$DEVS
CARVE=$CARVE_ARG
ACCESS=$ACCESS
BD=$BD
FRAMES=$FRAMES
IRQ=$([ "$ACCESS" = uio ] && echo -irq)
EXTRA_ARGS="${RIG_EXTRA_ARGS:-}"
CONF
cat >"$ROOT/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
. /rig.conf
echo "RIG-INIT uptime=$(cut -d' ' -f1 /proc/uptime)"
for m in $(cat /lib/modules/order); do
	case $m in uio_pdrv_genirq.ko) insmod /lib/modules/$m of_id=generic-uio ;; *) insmod /lib/modules/$m ;; esac 2>&1 | sed 's/^/insmod: /'
done
if [ "$ACCESS" = uio ]; then
	i=0; while [ ! -e /dev/uio1 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i+1)); done
	echo "--- uio: $(ls /dev/uio* 2>/dev/null)"
fi
# pagemap'd pages must not migrate under the device.
[ -e /proc/sys/vm/compact_unevictable_allowed ] && echo 0 > /proc/sys/vm/compact_unevictable_allowed
for d in ${DEVS//,/ }; do
	echo "--- $d: driver=$(basename "$(readlink /sys/bus/platform/devices/$d/driver 2>/dev/null)" 2>/dev/null)"
done
echo "RIG-START uptime=$(cut -d' ' -f1 /proc/uptime)"
# With uio each port first sleeps on its RX interrupt (-irq) until the host's frames wake it.
/fecrig -devs "$DEVS" -carve "$CARVE" -n "$FRAMES" -bd "$BD" -backend "$ACCESS" $IRQ
rc=$?
if [ -x /extra ]; then
	echo "RIG-EXTRA-BEGIN"
	/extra $EXTRA_ARGS
	echo "RIG-EXTRA-RC $?"
	echo "RIG-EXTRA-END"
fi
echo "RIG-DONE rc=$rc uptime=$(cut -d' ' -f1 /proc/uptime)"
poweroff -f
sleep 5
INIT
chmod +x "$ROOT/init"
(cd "$ROOT" && find . | cpio -o -H newc --quiet | gzip -1 >"$OUT/initrd.gz")

# --- host peer, then boot ---------------------------------------------------------
CONSOLE_LOG=$OUT/console.log
HOST_LOG=$OUT/host.log
rm -f "$CONSOLE_LOG" "$HOST_LOG"
"$OUT/fecrighost" -ports "$HOSTPORTS" -n "$FRAMES" -timeout "${TIMEOUT}s" >"$HOST_LOG" 2>&1 &
HPID=$!
for _ in $(seq 50); do grep -q HOST-READY "$HOST_LOG" 2>/dev/null && break; sleep 0.1; done
QEMU=(qemu-system-arm -M "$MACHINE" -m ${RAM_MB}M -display none -serial stdio -monitor none
	-kernel "$VMLINUZ" -dtb "$DTBPATH" -initrd "$OUT/initrd.gz"
	-append "console=$CONSOLE,115200 rdinit=/init mem=$((RAM_MB - CARVE_MB))M clk_ignore_unused panic=-1 quiet loglevel=4"
	-netdev "$NETDEV0,id=n0" -net nic,netdev=n0 -netdev "$NETDEV1,id=n1" -net nic,netdev=n1
	-no-reboot -d guest_errors,unimp -D "$OUT/qemu.log")
printf '%q ' "${QEMU[@]}" >"$OUT/qemu.cmd"; echo >>"$OUT/qemu.cmd"
log "booting: ${QEMU[*]}"
T_BOOT=$(date +%s.%N)
"${QEMU[@]}" </dev/null >"$CONSOLE_LOG" 2>&1 &
QPID=$!
deadline=$((SECONDS + TIMEOUT))
T_INIT="" T_GO=""
while kill -0 $QPID 2>/dev/null && ((SECONDS < deadline)); do
	[ -z "$T_INIT" ] && grep -q RIG-INIT "$CONSOLE_LOG" 2>/dev/null && T_INIT=$(date +%s.%N)
	[ -z "$T_GO" ] && grep -q RIG-START "$CONSOLE_LOG" 2>/dev/null && T_GO=$(date +%s.%N)
	grep -q RIG-DONE "$CONSOLE_LOG" 2>/dev/null && { sleep 1; break; }
	sleep 0.2
done
T_END=$(date +%s.%N)
kill $QPID 2>/dev/null || true
wait $QPID 2>/dev/null || true
for _ in $(seq 50); do kill -0 $HPID 2>/dev/null || break; sleep 0.1; done
kill $HPID 2>/dev/null || true
wait $HPID 2>/dev/null || true

echo "===== guest console ====="
tr -d '\r' <"$CONSOLE_LOG" | grep -a -E '^(PASS|FAIL|INFO|TIME) |RIG-|FECRIG|^---|insmod:|Kernel panic|panic:|goroutine ' || true
if [ -n "${RIG_EXTRA:-}" ]; then
	echo "===== extra: $(basename "$RIG_EXTRA") ${RIG_EXTRA_ARGS:-} ====="
	tr -d '\r' <"$CONSOLE_LOG" | sed -n '/^RIG-EXTRA-BEGIN/,/^RIG-EXTRA-END/p' | grep -a -v -E '^\[ *[0-9]+\.[0-9]+\]' || true
fi
echo "===== host ====="
cat "$HOST_LOG"
echo "================="

fails=0
check() { if eval "$2"; then echo "PASS $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi; }
check "boot: guest reached /init" "grep -q RIG-INIT '$CONSOLE_LOG'"
for d in ${DEVS//,/ }; do
	check "guest $d: opened by the fec driver through the pci platform backend's $ACCESS path ($DMA DMA memory)" "grep -a -q '^PASS open-$d: .* via $ACCESS, opened by the pci platform backend' '$CONSOLE_LOG'"
	check "guest $d: host frames arrived intact in RxBurst" "grep -a -q '^PASS rx-$d' '$CONSOLE_LOG'"
	check "guest $d: TxBurst frames sent" "grep -a -q '^PASS tx-$d' '$CONSOLE_LOG'"
	check "guest $d: PHY renegotiated to 10 and back to 100 Mb/s, MAC restarted each time" "[ \$(grep -a -c '^PASS speed-$d' '$CONSOLE_LOG') = 2 ]"
	check "guest $d: closed without leaks" "grep -a -q '^PASS close-$d' '$CONSOLE_LOG'"
	if [ "$ACCESS" = uio ]; then
		check "guest $d: the UIO interrupt woke the RX queue sleeping on it (arm, re-check, wait)" "grep -a -q '^PASS irq-$d' '$CONSOLE_LOG'"
	fi
done
check "guest: no failures" "grep -a -q 'FECRIG RESULT: PASS' '$CONSOLE_LOG'"
check "host port0 (ENET1): guest frames arrived intact" "grep -q '^PASS host-port0' '$HOST_LOG'"
check "host port1 (ENET2): guest frames arrived intact" "grep -q '^PASS host-port1' '$HOST_LOG'"
if [ -n "${RIG_EXTRA:-}" ]; then
	check "guest: extra program ($(basename "$RIG_EXTRA")) exited 0" "tr -d '\r' <'$CONSOLE_LOG' | grep -a -q '^RIG-EXTRA-RC 0$'"
fi
ENET_RE='\[imx\.(fec|enet)\]'
if [ -s "$OUT/qemu.log" ] && grep -a -q -E "$ENET_RE" "$OUT/qemu.log"; then
	echo "INFO qemu: ENET guest errors (registers QEMU does not model, e.g. MIB counters read by Stats):"
	grep -a -E "$ENET_RE" "$OUT/qemu.log" | sed 's/0x[0-9a-f]*$/0x.../' | sort | uniq -c | sort -rn | head -8 | sed 's/^/  /'
fi
T_FIN=$(date +%s.%N)
t() { if [ -n "$1" ]; then echo "$1 - $2" | bc; else echo nan; fi; }
printf 'TIME build %.1fs, boot-to-init %.1fs, boot-to-driver %.1fs, driver run %.1fs, whole script %.1fs\n' \
	"$(t "$T_BOOT" "$T_BUILD")" "$(t "$T_INIT" "$T_BOOT")" "$(t "$T_GO" "$T_BOOT")" "$(t "$T_END" "${T_GO:-$T_END}")" "$(t "$T_FIN" "$T_START")"
echo "console: $CONSOLE_LOG  host: $HOST_LOG  qemu: $OUT/qemu.cmd"
if ((fails)); then echo "RESULT: FAIL ($fails)"; exit 1; fi
echo "RESULT: PASS"
