package enetc

import (
	"testing"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/pool"
	"github.com/gopmd/gopmd/sim/simdma"
)

// The write-back a queue keeps in the header (rxRaw, SetRxRaw) reads back
// through the format it registered as the driver decoded it before: the
// parse summary, its error bit as FlagParseError, the extracted VLAN TCI
// only when the status says one was, and the hash only on an RSS queue.
func TestRxMetaDecode(t *testing.T) {
	reg, err := dma.Alloc(simdma.NewIOMMU(false), 4*pool.DefaultBufSize, dma.Options{Attr: dma.Attr{Name: "rxmeta"}})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	pl, err := pool.New(reg, pool.Config{Name: "rxmeta", Count: 4})
	if err != nil {
		t.Fatal(err)
	}
	pk := pl.Alloc()
	defer pk.Free()
	for _, c := range []struct {
		name string
		fmt  pool.RxFormat
		bd   rxBD
		want pool.RxMeta
	}{
		{"plain", rxFmtPlain, rxBD{addr: 0x12345678<<32 | 0x0011<<16 | 0xBEEF, vlanOpt: 0x2064, lstatus: rxbd_LSTATUS_R | rxbd_LSTATUS_F},
			pool.RxMeta{Ptype: 0x0011}},
		{"vlan", rxFmtPlain, rxBD{addr: 0x0011 << 16, vlanOpt: 0x2064, lstatus: rxbd_LSTATUS_R | rxbd_LSTATUS_F | rxbd_FLAG_VLAN | rxbd_FLAG_TSTMP},
			pool.RxMeta{Ptype: 0x0011, VLAN: 0x2064, Flags: pool.FlagVLANStripped}},
		{"parse error", rxFmtPlain, rxBD{addr: (rxbd_PARSE_ERROR | 0x0011) << 16, lstatus: rxbd_LSTATUS_R | rxbd_LSTATUS_F},
			pool.RxMeta{Ptype: rxbd_PARSE_ERROR | 0x0011, Flags: pool.FlagParseError}},
		{"rss", rxFmtRSS, rxBD{addr: 0x12345678<<32 | 0x0011<<16, vlanOpt: 7, lstatus: rxbd_LSTATUS_R | rxbd_LSTATUS_F | rxbd_FLAG_VLAN},
			pool.RxMeta{Ptype: 0x0011, VLAN: 7, Flags: pool.FlagRSSHash | pool.FlagVLANStripped, Hash: 0x12345678}},
	} {
		w0, w1 := rxRaw(c.bd.lstatus, &c.bd)
		pk.SetRxRaw(uint(pl.Headroom()), 60, pool.MakeRxTag(0, 1, 2, c.fmt), w0, w1)
		c.bd = rxBD{} // the ring's BD is rewritten by the next refill: the header keeps its copy
		if got := pk.RxMeta(); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
		if pk.VLAN() != c.want.VLAN || pk.Hash() != c.want.Hash || pk.Flags() != c.want.Flags || pk.Ptype() != c.want.Ptype {
			t.Errorf("%s: the accessors disagree with RxMeta", c.name)
		}
	}
}
