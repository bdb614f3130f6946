package pci

import (
	"strings"
	"testing"
)

func TestIOVASpace(t *testing.T) {
	// Intel VT-d leaves a hole for MSIs at 0xfee00000-0xfeefffff.
	s := newIOVASpace([]iovaRange{{0, 0xfedfffff}, {0xfef00000, 1<<48 - 1}}, 1<<28-1)
	steps := []struct {
		size, align uint64
		want        uint64
		err         string
	}{
		{0x1000, 0x1000, 0x100000, ""},     // the first megabyte stays unused
		{0x200000, 0x200000, 0x200000, ""}, // huge page: 2 MiB aligned
		{0x1000, 0x1000, 0x101000, ""},     // fills the gap below
		{0x10000000, 0x1000, 0, "below 0xfffffff"},
	}
	var got []uint64
	for _, st := range steps {
		a, err := s.alloc(st.size, st.align)
		if st.err != "" {
			if err == nil || !strings.Contains(err.Error(), st.err) {
				t.Errorf("alloc %#x: %#x %v, want error %q", st.size, a, err, st.err)
			}
			continue
		}
		if err != nil || a != st.want {
			t.Errorf("alloc %#x align %#x = %#x %v, want %#x", st.size, st.align, a, err, st.want)
		}
		got = append(got, a)
	}
	s.release(got[1])
	if a, _ := s.alloc(0x200000, 0x200000); a != 0x200000 {
		t.Errorf("released range not reused: %#x", a)
	}
	if alignFor(2<<20, 0x40201000) != 2<<20 || alignFor(8192, 0x40201000) != 4096 || alignFor(1<<31, 0x40201000) != 1<<30 {
		t.Error("alignFor")
	}
}
