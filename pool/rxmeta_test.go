package pool

import "testing"

// testRxFmt decodes a test format whose words say plainly where each value
// is: w0 is hash<<32 | flags, w1 ptype<<16 | vlan (the reverse of
// RxDecoded's halves, so a decoded read of it would be wrong).
var testRxFmt = RegisterRxFormat(func(w0 uint64, w1 uint32) RxMeta {
	return RxMeta{Ptype: uint16(w1 >> 16), VLAN: uint16(w1), Flags: Flags(w0), Hash: uint32(w0 >> 32)}
})

// A receive path's undecoded words are decoded on read by its format's
// decoder; SetRx and SetRxMeta store values decoded; an allocation and
// SetSegment clear them, whatever the format was.
func TestRxMetaFormats(t *testing.T) {
	t.Parallel()
	p := newPool(t, Config{Name: "rxmeta", Count: 4})
	app := p.Owner("rx caller")
	pk := p.Alloc()
	if pk.RxMeta() != (RxMeta{}) || pk.RxFormat() != RxDecoded {
		t.Fatalf("fresh header: %+v format %d, want zero, decoded", pk.RxMeta(), pk.RxFormat())
	}

	pk.SetRxRaw(DefaultHeadroom, 60, MakeRxTag(app, 7, 3, testRxFmt), 0xCAFEF00D<<32|uint64(FlagVLANStripped|FlagRSSHash), 0x0042<<16|100)
	want := RxMeta{Ptype: 0x42, VLAN: 100, Flags: FlagVLANStripped | FlagRSSHash, Hash: 0xCAFEF00D}
	if got := pk.RxMeta(); got != want || pk.RxFormat() != testRxFmt {
		t.Fatalf("raw: %+v format %d, want %+v format %d", got, pk.RxFormat(), want, testRxFmt)
	}
	if pk.Ptype() != want.Ptype || pk.VLAN() != want.VLAN || pk.Flags() != want.Flags || pk.Hash() != want.Hash {
		t.Fatalf("accessors: ptype %#x vlan %d flags %v hash %#x, want %+v", pk.Ptype(), pk.VLAN(), pk.Flags(), pk.Hash(), want)
	}
	if pk.Port != 7 || pk.Queue != 3 || pk.Len() != 60 || pk.PktLen != 60 || pk.NSegs != 1 || pk.Offset() != DefaultHeadroom || pk.owner != app {
		t.Fatalf("SetRxRaw's other fields: %+v", pk.meta)
	}

	// A holder that rewrites the frame replaces the report, decoded.
	pk.SetRxMeta(RxMeta{Flags: FlagL4CsumBad, Hash: 9})
	if got := pk.RxMeta(); got != (RxMeta{Flags: FlagL4CsumBad, Hash: 9}) || pk.RxFormat() != RxDecoded {
		t.Fatalf("after SetRxMeta: %+v format %d", got, pk.RxFormat())
	}
	pk.SetRx(DefaultHeadroom, 60, app, 7, 3, 5, 6, FlagParseError, 8)
	if got := pk.RxMeta(); got != (RxMeta{Ptype: 5, VLAN: 6, Flags: FlagParseError, Hash: 8}) {
		t.Fatalf("after SetRx: %+v", got)
	}

	// SetRxRaw with RxDecoded stores the values themselves, as SetRx does.
	pk.SetRxRaw(DefaultHeadroom, 64, MakeRxTag(app, 9, 2, RxDecoded), 0xBEEF<<32|uint64(FlagL3CsumBad), 0x0007<<16|0x0011)
	if got := pk.RxMeta(); got != (RxMeta{Ptype: 0x11, VLAN: 7, Flags: FlagL3CsumBad, Hash: 0xBEEF}) || pk.RxFormat() != RxDecoded || pk.Port != 9 || pk.Queue != 2 || pk.Len() != 64 {
		t.Fatalf("SetRxRaw, RxDecoded: %+v format %d port %d queue %d len %d", got, pk.RxFormat(), pk.Port, pk.Queue, pk.Len())
	}

	// A later segment, and the next holder, read nothing of the last frame.
	pk.SetRxRaw(DefaultHeadroom, 60, MakeRxTag(app, 7, 3, testRxFmt), 1, 1)
	if !pk.SetSegment(DefaultHeadroom, 10, app) || pk.RxMeta() != (RxMeta{}) || pk.RxFormat() != RxDecoded {
		t.Fatalf("after SetSegment: %+v format %d", pk.RxMeta(), pk.RxFormat())
	}
	pk.SetRxRaw(DefaultHeadroom, 60, MakeRxTag(app, 7, 3, testRxFmt), 1, 1)
	p.Recycle(pk)
	if q := p.Alloc(); q.RxMeta() != (RxMeta{}) || q.RxFormat() != RxDecoded {
		t.Fatalf("reallocated: %+v format %d", q.RxMeta(), q.RxFormat())
	}
}

// RegisterRxFormat refuses a nil decoder and hands out distinct formats.
func TestRegisterRxFormat(t *testing.T) {
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("a nil decoder was registered")
			}
		}()
		RegisterRxFormat(nil)
	}()
	if testRxFmt == RxDecoded {
		t.Fatal("a registered format is RxDecoded's tag")
	}
	f := RegisterRxFormat(func(uint64, uint32) RxMeta { return RxMeta{Hash: 1} })
	if f == testRxFmt || f == RxDecoded {
		t.Fatalf("format %d given twice", f)
	}
}

// SetRxRaw panics, changing nothing, on a window past the buffer, whether
// the end lies beyond it or the sum of offset and length wraps; a window
// that ends exactly at the buffer's end is taken.
func TestSetRxRawWindow(t *testing.T) {
	t.Parallel()
	p := newPool(t, Config{Name: "rxraw-window", Count: 2})
	app := p.Owner("rx caller")
	pk := p.Alloc()
	tag := MakeRxTag(app, 7, 3, testRxFmt)
	size := uint(p.BufSize())
	pk.SetRxRaw(DefaultHeadroom, size-DefaultHeadroom, tag, 1, 1)
	if pk.Offset() != DefaultHeadroom || pk.Len() != int(size-DefaultHeadroom) || pk.PktLen != pk.Len() {
		t.Fatalf("a window to the buffer's end: off %d len %d pktlen %d", pk.Offset(), pk.Len(), pk.PktLen)
	}
	pk.SetRxRaw(DefaultHeadroom, 60, tag, 1, 1)
	for _, w := range []struct{ off, n uint }{
		{DefaultHeadroom, size - DefaultHeadroom + 1},
		{size, 1},
		{^uint(0), 2},                  // wraps to 1
		{2, ^uint(0)},                  // wraps to 1
		{^uint(0) / 2, ^uint(0)/2 + 3}, // wraps to 1
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("SetRxRaw took the window off %#x len %#x", w.off, w.n)
				}
			}()
			pk.SetRxRaw(w.off, w.n, MakeRxTag(app, 8, 4, testRxFmt), 2, 2)
		}()
	}
	if pk.Offset() != DefaultHeadroom || pk.Len() != 60 || pk.PktLen != 60 || pk.Port != 7 || pk.Queue != 3 {
		t.Fatalf("a refused SetRxRaw changed the header: %+v", pk.meta)
	}
}
