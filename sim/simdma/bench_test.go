package simdma

import (
	"testing"

	"github.com/gopmd/gopmd/dma"
)

// BenchmarkIOMMUMapUnmap is the simulated IOMMU's cost for a per-packet
// mapping: Map, a 64-byte write synced for the device, Unmap of a 2 KiB
// buffer of a 2 MiB region (a pool's) that stays mapped, as pool's
// BenchmarkDropLoop does it. Coherent, a map is a table copy under the
// IOMMU's lock; non-coherent, it also mmaps (and Unmap munmaps) the
// device-side copy. The device side is checked once per run: the bytes at
// the IOVA the map returned are the buffer's.
func BenchmarkIOMMUMapUnmap(b *testing.B) {
	for _, v := range []struct {
		name   string
		noncoh bool
	}{{"coherent", false}, {"non-coherent", true}} {
		b.Run(v.name, func(b *testing.B) {
			s := NewIOMMU(v.noncoh)
			big, err := dma.Alloc(s, 2<<20, dma.Options{Attr: dma.Attr{Name: "pool"}, Hugepages: dma.HugeNever})
			if err != nil {
				b.Fatal(err)
			}
			defer big.Close()
			buf := big.Bytes()[:2048] // a pool buffer, mapped a second time
			attr := dma.Attr{Name: "per-packet-buffer"}
			check := func(i int) {
				m, err := s.Map(buf, attr)
				if err != nil {
					b.Fatal(err)
				}
				buf[128] = byte(i)
				s.SyncForDevice(buf, m, 128, 64)
				if d := s.Slice(m.IOVA+128, 1, false); d == nil || d[0] != byte(i) {
					b.Fatalf("the device does not see the buffer's byte %#x at IOVA %#x: %v", byte(i), m.IOVA+128, d)
				}
				if err := s.Unmap(buf, m); err != nil {
					b.Fatal(err)
				}
				if s.Slice(m.IOVA+128, 1, false) != nil {
					b.Fatalf("IOVA %#x still reachable after Unmap", m.IOVA+128)
				}
			}
			check(0xa5)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				m, err := s.Map(buf, attr)
				if err != nil {
					b.Fatal(err)
				}
				buf[128], buf[191] = byte(i), byte(i)
				s.SyncForDevice(buf, m, 128, 64)
				if err := s.Unmap(buf, m); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			check(0x5a)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/pair")
		})
	}
}
