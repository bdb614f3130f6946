package fec

import (
	"strings"
	"testing"
)

// TestMTULimitEveryProfile runs the frame-size rule over every driver
// profile, the ones without a model included (docs/hardware-fec.md §2.8,
// §4.1): only jumbo parts (the i.MX8QM) pass 1962 and switch the TX FIFO
// to cut-through there; every other part refuses 1963 naming itself, and
// runs store-and-forward at its largest MTU.
func TestMTULimitEveryProfile(t *testing.T) {
	t.Parallel()
	jumbo := 0
	for i := range profiles {
		pr := &profiles[i]
		p := &Port{prof: pr, rxBufLen: 2048}
		if pr.has(qRACC) {
			p.shift = shiftLen
		}
		want := 1962
		if pr.has(qJumbo) {
			jumbo++
			want = 16383 - 22 - p.shift
		}
		if got := p.maxMTU(); got != want {
			t.Errorf("%s: max MTU %d, want %d", pr.compatible, got, want)
		}
		if err := p.setMTU(want); err != nil {
			t.Errorf("%s: MTU %d: %v", pr.compatible, want, err)
		}
		if p.cutThrough() != pr.has(qJumbo) || (p.tfwr() == tfwr_STRFWD) == pr.has(qJumbo) {
			t.Errorf("%s at MTU %d: cut-through %v (TFWR %#x)", pr.compatible, want, p.cutThrough(), p.tfwr())
		}
		err := p.setMTU(want + 1)
		if err == nil || !strings.Contains(err.Error(), pr.compatible) {
			t.Errorf("%s: MTU %d: %v, want an error naming the part", pr.compatible, want+1, err)
		}
		if err := p.setMTU(1500); err != nil || p.cutThrough() {
			t.Errorf("%s: MTU 1500: %v, cut-through %v", pr.compatible, err, p.cutThrough())
		}
	}
	if jumbo != 1 {
		t.Errorf("%d jumbo profiles, want 1 (fsl,imx8qm-fec, Linux FEC_QUIRK_JUMBO_FRAME)", jumbo)
	}
}
