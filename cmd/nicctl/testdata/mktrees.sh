#!/bin/sh
# mktrees.sh rebuilds the fake sysfs/device-tree/dev trees nicctl's tests
# read with --root: an LS1028A (the ENETC functions of the integrated
# endpoint, docs/hardware-enetc.md §1.1), an i.MX8MP (the FEC given to
# uio_pdrv_genirq by a generic-uio overlay) and an i.MX6UL (ENET1 on the
# kernel's fec, ENET2 turned generic-uio without its fsl compatible).
# Register files (/dev/uio0, resource0) are sparse: only the words a test
# reads are written.
set -eu
cd "$(dirname "$0")"

# le32 FILE OFFSET VALUE writes a little-endian 32-bit word.
le32() {
	v=$3
	printf "$(printf '\\%03o\\%03o\\%03o\\%03o' $((v & 255)) $((v >> 8 & 255)) $((v >> 16 & 255)) $((v >> 24 & 255)))" |
		dd of="$1" bs=1 seek=$(($2)) conv=notrunc status=none
}
# be32 VALUE... prints big-endian cells (device-tree properties).
be32() {
	for v in "$@"; do
		printf "$(printf '\\%03o\\%03o\\%03o\\%03o' $((v >> 24 & 255)) $((v >> 16 & 255)) $((v >> 8 & 255)) $((v & 255)))"
	done
}
sized() { rm -f "$1"; mkdir -p "$(dirname "$1")"; dd if=/dev/zero of="$1" bs=1 count=0 seek=$(($2)) status=none; }
put() { mkdir -p "$(dirname "$1")"; printf '%s\n' "$2" >"$1"; }
# lnk LINK TARGET: both paths inside the tree; the link is written relative,
# as sysfs has it.
lnk() { mkdir -p "$(dirname "$1")" "$(dirname "$2")"; ln -sfnr "$2" "$1"; }
# netif TREE DEVDIR NAME FLAGS OPERSTATE: a network interface of a device,
# as /sys/class/net shows it (flags bit 0 is IFF_UP).
netif() {
	mkdir -p "$2/net/$3"
	put "$2/net/$3/flags" "$4"
	put "$2/net/$3/operstate" "$5"
	lnk "$1/sys/class/net/$3" "$2/net/$3"
}
# hostproc TREE MOUNTINFO: the /proc files bind and unbind read to see what
# the host uses (mounts, swap, addresses, routes); no swap, no routes.
hostproc() {
	mkdir -p "$1/proc/self" "$1/proc/net" "$1/sys/devices/virtual/net/lo"
	printf '%s\n' "$2" >"$1/proc/self/mountinfo"
	printf 'Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n' >"$1/proc/swaps"
	printf 'Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n' >"$1/proc/net/route"
	: >"$1/proc/net/ipv6_route"
	: >"$1/proc/net/if_inet6"
	put "$1/sys/devices/virtual/net/lo/flags" 0x9
	put "$1/sys/devices/virtual/net/lo/operstate" unknown
	lnk "$1/sys/class/net/lo" "$1/sys/devices/virtual/net/lo"
}

# ---------------------------------------------------------------- LS1028A
T=ls1028a
rm -rf $T && mkdir -p $T
D=$T/sys/devices/platform/1f0000000.pcie/pci0000:00
for drv in vfio-pci uio_pci_generic fsl_enetc fsl_enetc_vf fsl_enetc_mdio ptp_qoriq mscc_felix; do
	mkdir -p $T/sys/bus/pci/drivers/$drv
	: >$T/sys/bus/pci/drivers/$drv/bind
	: >$T/sys/bus/pci/drivers/$drv/unbind
done
: >$T/sys/bus/pci/drivers_probe
# fn ADDR ID CLASS DRIVER GROUP
fn() {
	dev=$D/$1
	mkdir -p $dev
	put $dev/vendor "0x${2%:*}"
	put $dev/device "0x${2#*:}"
	put $dev/subsystem_vendor 0x1957
	put $dev/subsystem_device 0xe100
	put $dev/class "$3"
	put $dev/revision 0x01
	put $dev/driver_override "(null)"
	put $dev/numa_node -1
	# config: IDs, Status.Capabilities List, and the capability list
	# PCI Express @0x40 -> MSI-X @0x80 -> Enhanced Allocation @0x9c (where
	# the LS1028A's ENETC functions keep their fixed BARs), then SR-IOV @0x100.
	sized $dev/config 0x200
	le32 $dev/config 0x00 $((0x${2#*:} << 16 | 0x${2%:*}))
	le32 $dev/config 0x04 0x00100000
	le32 $dev/config 0x34 0x40
	le32 $dev/config 0x40 0x00028010
	le32 $dev/config 0x80 0x00009c11
	le32 $dev/config 0x9c 0x00040014
	le32 $dev/config 0x100 0x00010010
	v=$(echo ${2%:*} | tr a-f A-F); d=$(echo ${2#*:} | tr a-f A-F)
	put $dev/modalias "pci:v0000${v}d0000${d}sv00001957sd0000E100bc02sc00i01"
	lnk $T/sys/bus/pci/devices/$1 $dev
	if [ "$4" != - ]; then lnk $dev/driver $T/sys/bus/pci/drivers/$4; fi
	if [ "$5" != - ]; then
		mkdir -p $T/sys/kernel/iommu_groups/$5/devices
		lnk $dev/iommu_group $T/sys/kernel/iommu_groups/$5
		lnk $T/sys/kernel/iommu_groups/$5/devices/$1 $dev
	fi
}
# resource BAR0-start BAR0-size BAR2-start BAR2-size
resource() {
	{
		printf '0x%016x 0x%016x 0x%016x\n' $(($2)) $(($2 + $3 - 1)) 0x140204
		printf '0x%016x 0x%016x 0x%016x\n' 0 0 0
		printf '0x%016x 0x%016x 0x%016x\n' $(($4)) $(($4 + $5 - 1)) 0x14220c
		for i in 3 4 5 6; do printf '0x%016x 0x%016x 0x%016x\n' 0 0 0; done
	} >$D/$1/resource
}
fn 0000:00:00.0 1957:e100 0x020001 vfio-pci 5
resource 0000:00:00.0 0x1f8000000 0x40000 0x1f8160000 0x10000
fn 0000:00:00.1 1957:e100 0x020001 fsl_enetc 6
resource 0000:00:00.1 0x1f8040000 0x40000 0x1f8170000 0x10000
fn 0000:00:00.2 1957:e100 0x020001 uio_pci_generic 7
resource 0000:00:00.2 0x1f8080000 0x40000 0x1f8180000 0x10000
fn 0000:00:00.3 1957:ee01 0x088000 fsl_enetc_mdio 8
resource 0000:00:00.3 0x1f80c0000 0x40000 0x1f8190000 0x10000
fn 0000:00:00.4 1957:ee02 0x088000 ptp_qoriq 9
resource 0000:00:00.4 0x1f8100000 0x40000 0x1f81a0000 0x10000
fn 0000:00:00.5 1957:eef0 0x020800 mscc_felix 10
resource 0000:00:00.5 0x1fc000000 0x400000 0x1f81b0000 0x10000
fn 0000:00:00.6 1957:e100 0x020001 vfio-pci 10
resource 0000:00:00.6 0x1f8140000 0x40000 0x1f81c0000 0x10000
fn 0000:00:01.0 1957:ef00 0x020001 - -
resource 0000:00:01.0 0x1f81d0000 0x10000 0x1f81f0000 0x10000
fn 0001:01:00.0 8086:10d3 0x020000 - -
resource 0001:01:00.0 0x40000000 0x20000 0 0

# 00:00.2 is on uio_pci_generic: its BAR0 is resource0, read by regs.
mkdir -p $D/0000:00:00.2/uio/uio0
R=$D/0000:00:00.2/resource0
sized $R 0x40000
sized $D/0000:00:00.2/resource2 0x10000
le32 $R 0x000 0x80000000     # SIMR: EN
le32 $R 0x040 0x2B2B6727     # SICAR0
le32 $R 0x080 0xe1000002     # SIPMAR0: 02:00:00:e1:...
le32 $R 0x084 0x00000200     # SIPMAR1
le32 $R 0x900 0x00080008     # SICAPR0: 8 TX, 8 RX rings
le32 $R 0x8000 0x80000000    # TBMR(0): EN
le32 $R 0x8010 0x10000000    # TBBAR0(0)
le32 $R 0x8018 0x00000005    # TBPIR(0)
le32 $R 0x801C 0x00000003    # TBCIR(0)
le32 $R 0x8020 0x00000200    # TBLENR(0)
le32 $R 0x8100 0x80000000    # RBMR(0): EN
le32 $R 0x8108 0x00000600    # RBBSR(0)
le32 $R 0x810C 0x000001ff    # RBCIR(0)
le32 $R 0x8118 0x00000007    # RBPIR(0)
le32 $R 0x8120 0x00000200    # RBLENR(0)
le32 $R 0x10000 0x00070000   # PMR: EN
le32 $R 0x10900 0x08080800   # PCAPR0
le32 $R 0x10940 0x00080008   # PSICFGR0(0)
le32 $R 0x18008 0x00008813   # PM0_CMD_CFG: TX_EN RX_EN PROMIS TXP PHY_TX_EN
le32 $R 0x18014 0x00000600   # PM0_MAXFRM
le32 $R 0x1801C 0x00000001   # PM0_RX_FIFO
le32 $R 0x18304 0x00050000   # PM0_STATUS: link, 1G
mkdir -p $T/dev
: >$T/dev/uio0
mkdir -p $T/sys/class/uio
lnk $T/sys/class/uio/uio0 $D/0000:00:00.2/uio/uio0
put $D/0000:00:00.2/uio/uio0/name uio_pci_generic
put $D/0000:00:00.2/uio/uio0/version 0.01.0
lnk $D/0000:00:00.2/uio/uio0/device $D/0000:00:00.2

mkdir -p $T/proc
printf 'MemTotal:        3970000 kB\nHugePages_Total:      64\nHugePages_Free:       60\nHugepagesize:       2048 kB\n' >$T/proc/meminfo

# What the host uses: eno1 (00:00.1 on fsl_enetc) exists but is down with
# no address; the root filesystem is on an NVMe disk behind another host
# bridge (a device no gopmd driver claims).
netif $T $D/0000:00:00.1 eno1 0x1002 down
for drv in nvme; do
	mkdir -p $T/sys/bus/pci/drivers/$drv
	: >$T/sys/bus/pci/drivers/$drv/bind
	: >$T/sys/bus/pci/drivers/$drv/unbind
done
DSAVE=$D
D=$T/sys/devices/pci0002:00/0002:00:00.0
fn 0002:01:00.0 144d:a808 0x010802 nvme -
resource 0002:01:00.0 0x60000000 0x4000 0 0
NV=$D/0002:01:00.0/nvme/nvme0/nvme0n1
D=$DSAVE
mkdir -p $NV/nvme0n1p1 $NV/nvme0n1p2
put $NV/dev 259:0
put $NV/nvme0n1p1/dev 259:1
put $NV/nvme0n1p2/dev 259:2
lnk $T/sys/dev/block/259:0 $NV
lnk $T/sys/dev/block/259:1 $NV/nvme0n1p1
lnk $T/sys/dev/block/259:2 $NV/nvme0n1p2
lnk $T/sys/class/block/nvme0n1 $NV
lnk $T/sys/class/block/nvme0n1p1 $NV/nvme0n1p1
lnk $T/sys/class/block/nvme0n1p2 $NV/nvme0n1p2
hostproc $T '22 1 259:1 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p1 rw
23 22 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw
24 22 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:2 - sysfs sysfs rw'

mkdir -p $T/usr/share/misc
cat >$T/usr/share/misc/pci.ids <<'IDS'
# A tiny pci.ids for the fake tree: the names nicctl list shows.
1957  Freescale Semiconductor Inc
	e100  ENETC Ethernet Function
	ee01  ENETC MDIO
	ee02  ENETC PTP Timer
	eef0  Felix Ethernet Switch
	ef00  ENETC Ethernet Virtual Function
8086  Intel Corporation
	10d3  82574L Gigabit Network Connection
C 02  Network controller
	00  Ethernet controller
	80  Network controller
C 08  Generic system peripheral
	80  System peripheral
IDS

# ---------------------------------------------------------------- i.MX8MP
T=imx8mp
rm -rf $T && mkdir -p $T
DT=$T/sys/firmware/devicetree/base
mkdir -p $DT
be32 2 >$DT/#address-cells
be32 2 >$DT/#size-cells
S=$DT/soc@0
mkdir -p $S
be32 1 >$S/#address-cells
be32 1 >$S/#size-cells
be32 0 0 0 0x3e000000 >$S/ranges
B=$S/bus@30800000
mkdir -p $B
be32 1 >$B/#address-cells
be32 1 >$B/#size-cells
be32 0x30800000 0x30800000 0x400000 >$B/ranges
N=$B/ethernet@30be0000
mkdir -p $N
printf 'generic-uio\000fsl,imx8mp-fec\000' >$N/compatible
be32 0x30be0000 0x10000 >$N/reg
N2=$B/ethernet@30bf0000
mkdir -p $N2
printf 'nxp,imx8mp-dwmac-eqos\000snps,dwmac-5.10a\000' >$N2/compatible
be32 0x30bf0000 0x10000 >$N2/reg
P=$T/sys/devices/platform/soc@0/30800000.bus
for drv in uio_pdrv_genirq imx-dwmac fec; do
	mkdir -p $T/sys/bus/platform/drivers/$drv
	: >$T/sys/bus/platform/drivers/$drv/bind
	: >$T/sys/bus/platform/drivers/$drv/unbind
done
: >$T/sys/bus/platform/drivers_probe
mkdir -p $P/30be0000.ethernet $P/30bf0000.ethernet
put $P/30be0000.ethernet/driver_override "(null)"
put $P/30bf0000.ethernet/driver_override "(null)"
lnk $P/30be0000.ethernet/of_node $N
lnk $P/30bf0000.ethernet/of_node $N2
lnk $P/30be0000.ethernet/driver $T/sys/bus/platform/drivers/uio_pdrv_genirq
lnk $P/30bf0000.ethernet/driver $T/sys/bus/platform/drivers/imx-dwmac
lnk $T/sys/bus/platform/devices/30be0000.ethernet $P/30be0000.ethernet
lnk $T/sys/bus/platform/devices/30bf0000.ethernet $P/30bf0000.ethernet
U=$P/30be0000.ethernet/uio/uio0
mkdir -p $U/maps/map0
put $U/name ethernet
put $U/version devicetree
put $U/maps/map0/name ethernet@30be0000
put $U/maps/map0/addr 0x30be0000
put $U/maps/map0/size 0x10000
put $U/maps/map0/offset 0x0
lnk $U/device $P/30be0000.ethernet
mkdir -p $T/sys/class/uio
lnk $T/sys/class/uio/uio0 $U
# /dev/uio0: map0 is the ENET's register window, as a driver left it.
R=$T/dev/uio0
sized $R 0x10000
le32 $R 0x004 0x10000000     # EIR: GRA
le32 $R 0x024 0xf0000132     # ECR: ETHEREN EN1588 SPEED DBSWP
le32 $R 0x044 0x0000001a     # MSCR
le32 $R 0x084 0x47c00064     # RCR: MAX_FL 1984, RGMII_EN, MII_MODE, NLC
le32 $R 0x0c4 0x00000004     # TCR: FDEN
le32 $R 0x0e4 0x0200fe00     # PALR
le32 $R 0x0e8 0x00008808     # PAUR
le32 $R 0x0ec 0x00010000     # OPD
le32 $R 0x144 0x00000100     # TFWR: STRFWD
le32 $R 0x180 0x50000000     # RDSR
le32 $R 0x184 0x50008000     # TDSR
le32 $R 0x188 0x00000600     # MRBR
le32 $R 0x1b0 0x000007c0     # FTRL
le32 $R 0x1c4 0x00000080     # RACC: SHIFT16
le32 $R 0x204 100            # RMON_T_PACKETS
le32 $R 0x284 200            # RMON_R_PACKETS

mkdir -p $T/proc
printf 'MemTotal:        3900000 kB\nHugePages_Total:       0\nHugePages_Free:        0\nHugepagesize:       2048 kB\n' >$T/proc/meminfo
# 4 GiB of RAM from 0x40000000 (past 4 GiB at the top), all of it the
# kernel's: no mem=, no reserved-memory carve-out (nicctl info says what to
# add for the FEC's DMA memory).
mkdir -p $DT/memory@40000000
be32 0 0x40000000 1 0 >$DT/memory@40000000/reg
printf '30be0000-30beffff : 30be0000.ethernet ethernet@30be0000\n40000000-13fffffff : System RAM\n  40200000-4187ffff : Kernel code\n' >$T/proc/iomem
printf 'console=ttymxc1,115200 root=/dev/mmcblk2p2 rootwait\n' >$T/proc/cmdline

# What the host uses: eth0, the EQOS the board is reached through, is up
# with an address and a route; the root filesystem is on the eMMC.
netif $T $P/30bf0000.ethernet eth0 0x1003 up
MMC=$T/sys/devices/platform/soc@0/30800000.bus/30b60000.mmc/mmc_host/mmc2/mmc2:0001/block/mmcblk2
mkdir -p $MMC/mmcblk2p2
lnk $T/sys/bus/platform/devices/30b60000.mmc $T/sys/devices/platform/soc@0/30800000.bus/30b60000.mmc
lnk $T/sys/dev/block/179:2 $MMC/mmcblk2p2
lnk $T/sys/class/block/mmcblk2p2 $MMC/mmcblk2p2
hostproc $T '22 1 179:2 / / rw,relatime shared:1 - ext4 /dev/mmcblk2p2 rw'
printf 'eth0\t0001A8C0\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n' >>$T/proc/net/route
printf 'fe80000000000000020000fffe0000aa 02 40 20 80     eth0\n' >$T/proc/net/if_inet6

# ---------------------------------------------------------------- i.MX6UL
T=imx6ul
rm -rf $T && mkdir -p $T
DT=$T/sys/firmware/devicetree/base
mkdir -p $DT
be32 1 >$DT/#address-cells
be32 1 >$DT/#size-cells
S=$DT/soc
mkdir -p $S
be32 1 >$S/#address-cells
be32 1 >$S/#size-cells
: >$S/ranges
A=$S/bus@2100000
mkdir -p $A
be32 1 >$A/#address-cells
be32 1 >$A/#size-cells
: >$A/ranges
N=$A/ethernet@2188000
mkdir -p $N
printf 'fsl,imx6ul-fec\000fsl,imx6q-fec\000' >$N/compatible
be32 0x2188000 0x4000 >$N/reg
A2=$S/bus@2000000
mkdir -p $A2
be32 1 >$A2/#address-cells
be32 1 >$A2/#size-cells
: >$A2/ranges
N2=$A2/ethernet@20b4000
mkdir -p $N2
printf 'generic-uio\000' >$N2/compatible
be32 0x20b4000 0x4000 >$N2/reg
P=$T/sys/devices/platform/soc
mkdir -p $T/sys/bus/platform/drivers/fec $T/sys/bus/platform/drivers/uio_pdrv_genirq
: >$T/sys/bus/platform/drivers/fec/bind
: >$T/sys/bus/platform/drivers/uio_pdrv_genirq/bind
: >$T/sys/bus/platform/drivers/uio_pdrv_genirq/unbind
: >$T/sys/bus/platform/drivers_probe
mkdir -p $P/2100000.bus/2188000.ethernet $P/2000000.bus/20b4000.ethernet
put $P/2100000.bus/2188000.ethernet/driver_override "(null)"
put $P/2000000.bus/20b4000.ethernet/driver_override "(null)"
lnk $P/2100000.bus/2188000.ethernet/of_node $N
lnk $P/2000000.bus/20b4000.ethernet/of_node $N2
lnk $P/2100000.bus/2188000.ethernet/driver $T/sys/bus/platform/drivers/fec
lnk $T/sys/bus/platform/devices/2188000.ethernet $P/2100000.bus/2188000.ethernet
lnk $T/sys/bus/platform/devices/20b4000.ethernet $P/2000000.bus/20b4000.ethernet
# a UIO device of something else (on-chip RAM), which list names but does not offer
N3=$S/sram@900000
mkdir -p $N3
printf 'mmio-sram\000' >$N3/compatible
be32 0x900000 0x20000 >$N3/reg
mkdir -p $P/900000.sram
lnk $P/900000.sram/of_node $N3
lnk $T/sys/bus/platform/devices/900000.sram $P/900000.sram
U=$P/900000.sram/uio/uio0
mkdir -p $U/maps/map0
put $U/name sram
put $U/version devicetree
put $U/maps/map0/name sram@900000
put $U/maps/map0/addr 0x900000
put $U/maps/map0/size 0x20000
put $U/maps/map0/offset 0x0
lnk $U/device $P/900000.sram
mkdir -p $T/sys/class/uio
lnk $T/sys/class/uio/uio0 $U

# What the host uses: eth0 (ENET1 on fec) is down; the root filesystem is
# on the SD card.
netif $T $P/2100000.bus/2188000.ethernet eth0 0x1002 down
MMC=$T/sys/devices/platform/soc/2100000.bus/2190000.mmc/mmc_host/mmc0/mmc0:aaaa/block/mmcblk0
mkdir -p $MMC/mmcblk0p2
lnk $T/sys/dev/block/179:2 $MMC/mmcblk0p2
lnk $T/sys/class/block/mmcblk0p2 $MMC/mmcblk0p2
hostproc $T '22 1 179:2 / / rw,relatime shared:1 - ext4 /dev/mmcblk0p2 rw'
