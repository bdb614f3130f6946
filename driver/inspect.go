package driver

import (
	"encoding/json"
	"errors"
	"fmt"
)

// BD is one buffer descriptor decoded for a person: what a bring-up tool
// prints for a ring. Raw bytes and the slot index are the tool's to add.
type BD struct {
	Addr     uint64   // buffer bus address (RX: until the device writes the BD back)
	Len      int      // bytes in this BD's buffer
	FrameLen int      // whole frame's length where the BD carries it, else 0
	Flags    []string // status and control bits set, by the reference's names
	Note     string   // what the state means ("posted, waiting for a frame")
}

// RingState is one descriptor ring's indices as a driver and its device
// see them, for a bring-up tool. The names are DPDK's and Linux's:
// next-to-use is where the driver writes next (TX: the next BD to fill;
// RX: the next empty BD to post a buffer in), next-to-clean is where it
// reads next (TX: the oldest BD not yet reclaimed; RX: the next BD the
// device completes). The driver's indices are read without
// synchronisation: exact only while the queue's goroutine is quiet.
type RingState struct {
	Kind        string // "rx" or "tx"
	Queue       int
	Size        int    // BDs
	IOVA        uint64 // ring base the device was given
	BDSize      int    // bytes per BD
	NextToUse   int
	NextToClean int
	// Owned is the number of BDs the device owns, -1 when the driver does
	// not count them.
	Owned     int
	Doorbells uint64 // producer-index or descriptor-active writes
	// Regs are the ring's own device registers, read now, by the
	// reference's names: what the device says of the ring (ENETC
	// TBMR(n)/TBPIR(n)/TBCIR(n), RBMR(n)/RBPIR(n)/RBCIR(n); FEC TDARn or
	// RDARn).
	Regs []RegValue
}

// Reg returns the ring's register named name (as the reference writes
// it: "TBPIR(0)", "TDAR"), and whether the ring reports one.
func (r RingState) Reg(name string) (RegValue, bool) {
	for _, v := range r.Regs {
		if v.Name == name {
			return v, true
		}
	}
	return RegValue{}, false
}

// Inspector is what a driver offers a bring-up tool about its rings: an
// optional interface a Port may implement (both gopmd drivers do). A tool
// asks for it with a type assertion and needs no driver type and no
// register offset: the same calls work on real devices and on models.
type Inspector interface {
	// Rings reports every ring's indices and device state.
	Rings() []RingState
	// DecodeBD decodes one BD's bytes as they lie in ring memory
	// (RingState.BDSize of them): an RX BD when rx is true.
	DecodeBD(rx bool, b []byte) BD
}

// LiveInspector is what a driver reports about its rings while another
// goroutine polls them (a telemetry endpoint, a metrics scrape): the
// device's side (Regs) and the driver's atomic counter (Doorbells),
// never the driver's
// own indices, which belong to the polling goroutine: NextToUse,
// NextToClean and Owned are -1. An optional interface a Port may
// implement (both gopmd drivers do).
type LiveInspector interface {
	LiveRings() []RingState
}

// PHYAccess is clause-22 MDIO access to a port's PHY: an optional
// interface a Port may implement (both gopmd drivers do).
type PHYAccess interface {
	// PHYAddr is the MDIO address of the port's PHY, -1 for a fixed link.
	PHYAddr() int
	// MDIORead reads register reg of the PHY at address phy.
	MDIORead(phy, reg int) (uint16, error)
	// MDIOWrite writes v to register reg of the PHY at address phy.
	MDIOWrite(phy, reg int, v uint16) error
}

// RegValue is one register of a port and the value read from it.
type RegValue struct {
	RegDesc
	Value uint32
}

// Field returns the value of the register's field named name, and
// whether the register has one.
func (v RegValue) Field(name string) (uint32, bool) {
	for _, f := range v.Fields {
		if f.Name == name {
			return f.Of(v.Value), true
		}
	}
	return 0, false
}

// String formats the register: name, offset, value, then its named fields
// (a one-bit field by name when set, a wider one as name=value).
func (v RegValue) String() string {
	s := fmt.Sprintf("%-14s 0x%05x = 0x%08x", v.Name, v.Offset, v.Value)
	for _, f := range v.Fields {
		x := f.Of(v.Value)
		switch {
		case f.Hi > f.Lo:
			s += fmt.Sprintf(" %s=%#x", f.Name, x)
		case x != 0:
			s += " " + f.Name
		}
	}
	return s
}

// MarshalJSON gives the register as tools print it: name, offset, block,
// value, and fields (never null), each with its bits lo..hi and its value.
func (v RegValue) MarshalJSON() ([]byte, error) {
	type field struct {
		Name  string `json:"name"`
		Lo    uint   `json:"lo"`
		Hi    uint   `json:"hi"`
		Value uint32 `json:"value"`
	}
	fs := make([]field, len(v.Fields))
	for i, f := range v.Fields {
		fs[i] = field{f.Name, f.Lo, f.Hi, f.Of(v.Value)}
	}
	return json.Marshal(struct {
		Name   string  `json:"name"`
		Offset uint32  `json:"offset"`
		Block  string  `json:"block"`
		Value  uint32  `json:"value"`
		Fields []field `json:"fields"`
	}{v.Name, v.Offset, v.Block, v.Value, fs})
}

// ReadRegs reads the registers of m at the given offsets from r, in the
// order the offsets are given; an offset m does not describe is left out.
func ReadRegs(r Regs, m []RegDesc, offsets ...uint32) []RegValue {
	var out []RegValue
	for _, off := range offsets {
		for _, d := range m {
			if d.Offset == off {
				out = append(out, RegValue{RegDesc: d, Value: r.Read32(off)})
				break
			}
		}
	}
	return out
}

// RegisterDumper reads a port's registers for a bring-up tool, by the
// reference's names: an optional interface a Port may implement (both
// gopmd drivers do), so a tool needs no driver type and no offset.
type RegisterDumper interface {
	// Registers reads every register the driver names for the port,
	// except those whose read would act (MDIO data) or that Stats owns;
	// nil after Close.
	Registers() []RegValue
}

// ErrNeedsPF is what a driver's error wraps for an operation only a
// device's physical function can perform (port MAC, MDIO, port registers)
// when the port is a virtual function, which reaches only its own station
// interface. Test it with errors.Is; open the PF's spec instead.
var ErrNeedsPF = errors.New("operation needs the physical function (a VF reaches only its station interface)")
