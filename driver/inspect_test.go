package driver

import (
	"fmt"
	"testing"
)

// wordRegs is a register window of 32-bit words.
type wordRegs []uint32

func (w wordRegs) Read32(off uint32) uint32     { return w[off/4] }
func (w wordRegs) Write32(off uint32, v uint32) { w[off/4] = v }
func (w wordRegs) Read64(off uint32) uint64     { return uint64(w[off/4]) }
func (w wordRegs) Size() int                    { return 4 * len(w) }
func (w wordRegs) Err() error                   { return nil }

// TestRingRegs: ReadRegs reads the registers a map describes at the
// offsets asked, in their order, leaving out an offset the map does not
// describe; a RingState finds them by name and a RegValue its fields.
func TestRingRegs(t *testing.T) {
	w := wordRegs{0, 0x8000_0003, 0x0001_0007, 0}
	m := []RegDesc{
		{Name: "PIR", Offset: 8, Fields: []RegField{{"INDEX", 0, 15}}},
		{Name: "MR", Offset: 4, Fields: []RegField{{"PRIO", 0, 2}, {"EN", 31, 31}}},
	}
	rs := RingState{Regs: ReadRegs(w, m, 4, 12, 8)}
	if len(rs.Regs) != 2 || rs.Regs[0].Name != "MR" || rs.Regs[1].Name != "PIR" {
		t.Fatalf("ReadRegs = %v, want MR then PIR (offset 12 is in no description)", rs.Regs)
	}
	mr, ok := rs.Reg("MR")
	en, okEN := mr.Field("EN")
	prio, _ := mr.Field("PRIO")
	if !ok || !okEN || en != 1 || prio != 3 || mr.Value != 0x8000_0003 {
		t.Errorf("MR: %v (found %v), EN %d, PRIO %d; want 0x80000003, EN 1, PRIO 3", mr, ok, en, prio)
	}
	pir, _ := rs.Reg("PIR")
	if i, _ := pir.Field("INDEX"); i != 7 {
		t.Errorf("PIR.INDEX = %d, want 7 (bits 0-15 of 0x00010007)", i)
	}
	if _, ok := rs.Reg("CIR"); ok {
		t.Error("Reg found a register the ring does not report")
	}
	if _, ok := mr.Field("BUSY"); ok {
		t.Error("Field found a field the register does not have")
	}
	if got := fmt.Sprint(mr); got != "MR             0x00004 = 0x80000003 PRIO=0x3 EN" {
		t.Errorf("MR prints as %q", got)
	}
}
