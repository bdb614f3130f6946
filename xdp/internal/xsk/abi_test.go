package xsk

import (
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The layouts of linux/if_xdp.h (Linux 6.8), by hand: a field that moves
// or a struct that grows breaks the socket set-up silently, so each one is
// pinned here.
func TestLayout(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"sizeof(xdp_ring_offset)", unsafe.Sizeof(RingOffset{}), 32},
		{"xdp_ring_offset.flags", unsafe.Offsetof(RingOffset{}.Flags), 24},
		{"sizeof(xdp_mmap_offsets)", unsafe.Sizeof(MmapOffsets{}), 128},
		{"xdp_mmap_offsets.fr", unsafe.Offsetof(MmapOffsets{}.Fr), 64},
		{"xdp_mmap_offsets.cr", unsafe.Offsetof(MmapOffsets{}.Cr), 96},
		{"sizeof(xdp_umem_reg)", unsafe.Sizeof(UmemReg{}), 32},
		{"xdp_umem_reg.chunk_size", unsafe.Offsetof(UmemReg{}.ChunkSize), 16},
		{"xdp_umem_reg.headroom", unsafe.Offsetof(UmemReg{}.Headroom), 20},
		{"xdp_umem_reg.flags", unsafe.Offsetof(UmemReg{}.Flags), 24},
		{"xdp_umem_reg.tx_metadata_len", unsafe.Offsetof(UmemReg{}.TxMetadataLen), 28},
		{"sizeof(xdp_statistics)", unsafe.Sizeof(Statistics{}), 48},
		{"xdp_statistics.rx_ring_full", unsafe.Offsetof(Statistics{}.RxRingFull), 24},
		{"xdp_statistics.tx_ring_empty_descs", unsafe.Offsetof(Statistics{}.TxRingEmptyDescs), 40},
		{"sizeof(xdp_desc)", unsafe.Sizeof(Desc{}), 16},
		{"xdp_desc.len", unsafe.Offsetof(Desc{}.Len), 8},
		{"sizeof(sockaddr_xdp)", unsafe.Sizeof(SockaddrXDP{}), 16},
		{"sockaddr_xdp.ifindex", unsafe.Offsetof(SockaddrXDP{}.Ifindex), 4},
		{"sockaddr_xdp.queue_id", unsafe.Offsetof(SockaddrXDP{}.QueueID), 8},
		{"sockaddr_xdp.shared_umem_fd", unsafe.Offsetof(SockaddrXDP{}.SharedUmemFD), 12},
		{"sizeof(xdp_options)", unsafe.Sizeof(Options{}), 4},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
}

// The numbers agree with golang.org/x/sys/unix where it has them.
func TestConstants(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want int64
	}{
		{"SOL_XDP", SolXDP, unix.SOL_XDP},
		{"XDP_MMAP_OFFSETS", OptMmapOffsets, unix.XDP_MMAP_OFFSETS},
		{"XDP_RX_RING", OptRxRing, unix.XDP_RX_RING},
		{"XDP_TX_RING", OptTxRing, unix.XDP_TX_RING},
		{"XDP_UMEM_REG", OptUmemReg, unix.XDP_UMEM_REG},
		{"XDP_UMEM_FILL_RING", OptUmemFillRing, unix.XDP_UMEM_FILL_RING},
		{"XDP_UMEM_COMPLETION_RING", OptUmemCompRing, unix.XDP_UMEM_COMPLETION_RING},
		{"XDP_STATISTICS", OptStatistics, unix.XDP_STATISTICS},
		{"XDP_OPTIONS", OptOptions, unix.XDP_OPTIONS},
		{"XDP_OPTIONS_ZEROCOPY", OptionsZeroCopy, unix.XDP_OPTIONS_ZEROCOPY},
		{"AF_XDP", AFXDP, unix.AF_XDP},
		{"XDP_PACKET_HEADROOM", PacketHeadroom, unix.XDP_PACKET_HEADROOM},
		{"XDP_RING_NEED_WAKEUP", RingNeedWakeup, unix.XDP_RING_NEED_WAKEUP},
		{"XDP_SHARED_UMEM", BindSharedUmem, unix.XDP_SHARED_UMEM},
		{"XDP_COPY", BindCopy, unix.XDP_COPY},
		{"XDP_ZEROCOPY", BindZeroCopy, unix.XDP_ZEROCOPY},
		{"XDP_USE_NEED_WAKEUP", BindUseNeedWakeup, unix.XDP_USE_NEED_WAKEUP},
		{"XDP_PGOFF_RX_RING", PgoffRxRing, unix.XDP_PGOFF_RX_RING},
		{"XDP_PGOFF_TX_RING", PgoffTxRing, unix.XDP_PGOFF_TX_RING},
		{"XDP_UMEM_PGOFF_FILL_RING", PgoffFillRing, unix.XDP_UMEM_PGOFF_FILL_RING},
		{"XDP_UMEM_PGOFF_COMPLETION_RING", PgoffCompletionRng, unix.XDP_UMEM_PGOFF_COMPLETION_RING},
	} {
		if c.got != c.want {
			t.Errorf("%s = %#x, want %#x", c.name, c.got, c.want)
		}
	}
}
