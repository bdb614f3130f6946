package model

import "testing"

// TestTxFIFOLimit: a frame longer than the TX FIFO (Profile.TxFIFO, FCS
// included) is refused and counted under store-and-forward on every part,
// and in cut-through on a part without jumbo support; the i.MX8QM sends it
// cut-through. Shorter frames pass everywhere (docs/hardware-fec.md §2.8).
func TestTxFIFOLimit(t *testing.T) {
	for _, soc := range Profiles() {
		prof, _ := LookupProfile(soc)
		for _, cut := range []bool{false, true} {
			td := newTDrv(t, tOpts{soc: soc, enh: prof.EnhancedBD})
			c := &capture{}
			td.d.SetWire(c)
			if cut {
				td.d.Write32(regTFWR, 0xF)
			}
			fits := testFrame([6]byte{2, 0, 0, 0, 0, 9}, prof.TxFIFO-14-4, 1) // header and FCS make it TxFIFO
			long := testFrame([6]byte{2, 0, 0, 0, 0, 9}, prof.TxFIFO-14-3, 2)
			td.send(0, fits, long)
			want := 1
			if cut && prof.Jumbo {
				want = 2
			}
			if got := len(c.get()); got != want {
				t.Errorf("%s cut-through=%v: %d frames on the wire, want %d", soc, cut, got, want)
			}
			if n := td.d.Stats().TxFIFOTooLong; n != uint64(2-want) {
				t.Errorf("%s cut-through=%v: TxFIFOTooLong %d, want %d", soc, cut, n, 2-want)
			}
		}
	}
}
