package enetc_test

import (
	"encoding/binary"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/enetc"
	"github.com/gopmd/gopmd/enetc/model"
	"github.com/gopmd/gopmd/pool"
)

// TestTxTimestampsAtTheWireEdge sends frames with a transmit timestamp
// request and checks each stamp against the chip timer's time when the
// frame left, however long after that the driver reads it; the second
// half of the run straddles a wrap of the stamp's low 32 bits.
func TestTxTimestampsAtTheWireEdge(t *testing.T) {
	c, m, _ := openTimer(t, "")
	sp := openSim(t, "timestamps=tx", driver.Config{})
	tx := sp.port.TxQueue(0).(driver.TxTimestamper)
	for i, start := range []driver.Time{1000 * sec, 5<<32 - driver.Time(300*time.Microsecond)} {
		if err := c.Set(start); err != nil {
			t.Fatal(err)
		}
		for j := range 3 {
			m.Advance(100*time.Microsecond + time.Duration(j)*time.Nanosecond)
			want := now(t, c)
			id := uint64(10*i + j)
			pk := sp.port.RxQueue(0).Pool().Alloc()
			if pk == nil || !pk.SetLen(60) {
				t.Fatal("no buffer to send from")
			}
			clear(pk.Data())
			pk.Data()[14] = byte(id)
			if !tx.TxStamped(pk, id) {
				t.Fatal("TxStamped took nothing")
			}
			m.Advance(700 * time.Microsecond) // the driver looks only later
			var st [4]driver.TxStamp
			if n := tx.TxTimestamps(st[:]); n != 1 || st[0].ID != id || st[0].Lost || st[0].Time != want {
				t.Fatalf("frame %d: TxTimestamps = %+v, want one {ID %d Time %v}", id, st[:n], id, want)
			}
			if f := sp.wire.take(); len(f) != 1 || len(f[0]) != 60 || f[0][14] != byte(id) {
				t.Fatalf("frame %d: the wire saw %d frames", id, len(f))
			}
		}
	}
	// A plain TxBurst is not stamped.
	pk := sp.port.RxQueue(0).Pool().Alloc()
	pk.SetLen(60)
	if sp.port.TxQueue(0).TxBurst([]*driver.Packet{pk}) != 1 {
		t.Fatal("TxBurst took nothing")
	}
	var st [4]driver.TxStamp
	if n := tx.TxTimestamps(st[:]); n != 0 {
		t.Fatalf("a frame sent by TxBurst produced stamps %+v", st[:n])
	}
}

// TestTxTimestampsLostWhenLinkDown: a requested frame the port drops is
// reported Lost, not forgotten.
func TestTxTimestampsLostWhenLinkDown(t *testing.T) {
	openTimer(t, "")
	sp := openSim(t, "timestamps=tx", driver.Config{})
	sp.model.SetLink(false)
	sp.port.UpdateLink()
	tx := sp.port.TxQueue(0).(driver.TxTimestamper)
	pk := sp.port.RxQueue(0).Pool().Alloc()
	pk.SetLen(60)
	if !tx.TxStamped(pk, 7) {
		t.Fatal("TxStamped took nothing")
	}
	var st [2]driver.TxStamp
	if n := tx.TxTimestamps(st[:]); n != 1 || st[0].ID != 7 || !st[0].Lost {
		t.Fatalf("TxTimestamps = %+v, want {ID 7 Lost}", st[:n])
	}
	if s := sp.port.Stats(); s.TxQueues[0].Drops[driver.CauseLinkDown] != 1 {
		t.Fatalf("link_down drops %d, want 1", s.TxQueues[0].Drops[driver.CauseLinkDown])
	}
}

func TestTimestampsOption(t *testing.T) {
	sp := openSim(t, "", driver.Config{})
	for _, call := range []string{"TxStamped", "RxBurstStamped"} {
		func() {
			defer func() {
				var off *driver.TimestampsOff
				if e, ok := recover().(error); !ok || !errors.As(e, &off) || off.Call != call {
					t.Errorf("%s without timestamps=: recovered %v, want *driver.TimestampsOff", call, e)
				}
			}()
			if call == "TxStamped" {
				sp.port.TxQueue(0).(driver.TxTimestamper).TxStamped(nil, 0)
			} else {
				sp.port.RxQueue(0).(driver.RxTimestamper).RxBurstStamped(make([]*pool.Packet, 4), make([]driver.Time, 4))
			}
		}()
	}
	_, err := driver.Open("sim:enetc199?link-poll=0&chip=" + testChip(t) + "&timestamps=rx,sometimes")
	var oe *driver.OptionError
	if err == nil || !errors.As(err, &oe) || oe.Option != "timestamps" {
		t.Errorf("timestamps=rx,sometimes: error %v, want an option error naming timestamps", err)
	}
}

// rxStamped polls RxBurstStamped until want frames arrived or polls run
// out.
func rxStamped(q driver.RxQueue, want int) ([]*pool.Packet, []driver.Time) {
	rq := q.(driver.RxTimestamper)
	var (
		got    []*pool.Packet
		stamps []driver.Time
	)
	buf, st := make([]*pool.Packet, 8), make([]driver.Time, 8)
	for i := 0; i < 1000 && len(got) < want; i++ {
		n := rq.RxBurstStamped(buf, st)
		got, stamps = append(got, buf[:n]...), append(stamps, st[:n]...)
	}
	return got, stamps
}

// sportOf is the UDP source port of a udp4 frame: its sequence number.
func sportOf(pk *pool.Packet) uint16 {
	f := frameOf(pk)
	return uint16(f[34])<<8 | uint16(f[35])
}

// TestRxTimestampsAtTheMAC receives frames on a port opened with
// timestamps=rx and checks each frame's stamp against the chip timer's
// time when it reached the MAC, however long after that the driver reads
// it; the second run straddles a wrap of the stamp's low 32 bits, and the
// last frame of each spans two BDs (1 KiB buffers).
func TestRxTimestampsAtTheMAC(t *testing.T) {
	c, m, _ := openTimer(t, "")
	sp := openSim(t, "timestamps=rx&buf-size=1024", driver.Config{})
	if r := sp.port.Rings(); r[len(r)-1].Kind != "rx" || r[len(r)-1].BDSize != 32 {
		t.Fatalf("RX ring state %+v, want 32-byte BDs", r[len(r)-1])
	}
	// The stamping queue is still this port's own for direct recycling.
	if err := sp.port.TxQueue(0).(driver.DirectRecycler).RecycleDirect(sp.port.RxQueue(0)); err != nil {
		t.Fatalf("RecycleDirect with a stamping RX queue: %v", err)
	}
	for i, start := range []driver.Time{1000 * sec, 5<<32 - driver.Time(300*time.Microsecond)} {
		if err := c.Set(start); err != nil {
			t.Fatal(err)
		}
		var want []driver.Time
		for j := range 4 {
			m.Advance(100*time.Microsecond + time.Duration(j)*time.Nanosecond)
			want = append(want, now(t, c))
			size := 100
			if j == 3 {
				size = 1514 // two BDs: the stamp is the first one's
			}
			if !sp.model.Port().Receive(udp4(t, size, uint16(10*i+j))) {
				t.Fatal("the model refused a frame")
			}
		}
		m.Advance(700 * time.Microsecond) // the driver looks only later
		got, stamps := rxStamped(sp.port.RxQueue(0), 4)
		if len(got) != 4 {
			t.Fatalf("run %d: received %d frames, want 4", i, len(got))
		}
		for j, pk := range got {
			if sportOf(pk) != uint16(10*i+j) || stamps[j] != want[j] {
				t.Errorf("run %d frame %d: frame %d stamped %v, want frame %d stamped %v", i, j, sportOf(pk), stamps[j], 10*i+j, want[j])
			}
		}
		if got[3].NSegs != 2 {
			t.Errorf("run %d: the long frame came in %d segments, want 2", i, got[3].NSegs)
		}
		pool.FreeBulk(got)
	}
	sp.close(false)
}

// TestRxTimestampMissing: a frame whose extended BD came back without
// TSTMP gets no stamp (0); the frames around it keep theirs.
func TestRxTimestampMissing(t *testing.T) {
	c, m, _ := openTimer(t, "")
	sp := openSim(t, "timestamps=rx", driver.Config{})
	if err := c.Set(2000 * sec); err != nil {
		t.Fatal(err)
	}
	var want []driver.Time
	for j := range 3 {
		m.Advance(time.Microsecond)
		want = append(want, now(t, c))
		if j == 1 {
			want[j] = 0
			if err := sp.model.CorruptRxWriteback(model.CorruptNoTimestamp, 1); err != nil {
				t.Fatal(err)
			}
		}
		sp.model.Port().Receive(udp4(t, 100, uint16(j)))
	}
	got, stamps := rxStamped(sp.port.RxQueue(0), 3)
	if len(got) != 3 || stamps[0] != want[0] || stamps[1] != 0 || stamps[2] != want[2] {
		t.Fatalf("received %d frames stamped %v, want 3 stamped %v", len(got), stamps, want)
	}
	pool.FreeBulk(got)
	sp.close(false)
}

// TestRxBurstOnStampingQueue mixes RxBurst and RxBurstStamped on one
// queue of a port opened with timestamps=rx,tx, over many laps of a
// 64-BD ring: every frame arrives once, in order, whichever call takes
// it, and the stamped ones carry their time.
func TestRxBurstOnStampingQueue(t *testing.T) {
	c, m, _ := openTimer(t, "")
	sp := openSim(t, "timestamps=rx,tx", driver.Config{RxRingSize: 64, TxRingSize: 64, PoolSize: 256})
	if err := c.Set(3000 * sec); err != nil {
		t.Fatal(err)
	}
	q := sp.port.RxQueue(0)
	rq := q.(driver.RxTimestamper)
	const frames = 600
	var (
		order []uint16
		times = map[uint16]driver.Time{}
	)
	buf, st := make([]*pool.Packet, 16), make([]driver.Time, 16)
	for i := 0; i < frames; {
		for k := 0; k < 20 && i < frames; k, i = k+1, i+1 {
			m.Advance(time.Microsecond)
			times[uint16(i)] = now(t, c)
			if !sp.model.Port().Receive(udp4(t, 100, uint16(i))) {
				t.Fatalf("frame %d refused", i)
			}
		}
		for p := 0; p < 100 && len(order) < i; p++ {
			var n int
			stamped := p%2 == 0
			if stamped {
				n = rq.RxBurstStamped(buf[:5], st)
			} else {
				n = q.RxBurst(buf[:7])
			}
			for j, pk := range buf[:n] {
				f := sportOf(pk)
				if stamped && st[j] != times[f] {
					t.Fatalf("frame %d stamped %v, want %v", f, st[j], times[f])
				}
				order = append(order, f)
			}
			pool.FreeBulk(buf[:n])
		}
	}
	for i, f := range order {
		if f != uint16(i) {
			t.Fatalf("frame %d of those received is frame %d", i, f)
		}
	}
	if len(order) != frames {
		t.Fatalf("received %d frames, want %d (drops %v)", len(order), frames, q.Stats().Drops)
	}
	sp.close(false)
}

// TestRxStampingStopStart leaves frames unread on an extended ring, stops
// (every buffer back, the frames counted stopped), starts again and
// receives stamped frames, then closes with every buffer back.
func TestRxStampingStopStart(t *testing.T) {
	c, m, _ := openTimer(t, "")
	sp := openSim(t, "timestamps=rx", driver.Config{RxRingSize: 64, PoolSize: 256})
	if err := c.Set(4000 * sec); err != nil {
		t.Fatal(err)
	}
	for j := range 5 {
		sp.model.Port().Receive(udp4(t, 100, uint16(j)))
	}
	got, _ := rxStamped(sp.port.RxQueue(0), 2)
	if len(got) < 2 {
		t.Fatalf("received %d frames, want at least 2", len(got))
	}
	pool.FreeBulk(got)
	left := 5 - len(got)
	st := sp.stopCheck()
	if n := st.RxQueues[0].Drops[driver.CauseStopped]; n != uint64(left) {
		t.Fatalf("stopped drops %d, want the %d frames left on the ring", n, left)
	}
	if err := sp.port.Start(); err != nil {
		t.Fatal(err)
	}
	m.Advance(time.Millisecond)
	want := now(t, c)
	sp.model.Port().Receive(udp4(t, 100, 9))
	got, stamps := rxStamped(sp.port.RxQueue(0), 1)
	if len(got) != 1 || sportOf(got[0]) != 9 || stamps[0] != want {
		t.Fatalf("after Start: %d frames stamped %v, want frame 9 stamped %v", len(got), stamps, want)
	}
	pool.FreeBulk(got)
	sp.close(false)
}

// TestRxStampingLostWriteBacks loses two write-backs in a row on an
// extended ring: the ring goes on past them (bad_descriptor 2), the frames
// after keep their stamps.
func TestRxStampingLostWriteBacks(t *testing.T) {
	c, m, _ := openTimer(t, "")
	sp := openSim(t, "timestamps=rx", driver.Config{RxRingSize: 64, PoolSize: 256})
	if err := c.Set(5000 * sec); err != nil {
		t.Fatal(err)
	}
	if err := sp.model.CorruptRxWriteback(model.CorruptZeroStatus, 2); err != nil {
		t.Fatal(err)
	}
	var want []driver.Time
	for j := range 5 {
		m.Advance(time.Microsecond)
		want = append(want, now(t, c))
		sp.model.Port().Receive(udp4(t, 100, uint16(j)))
	}
	var (
		got    []*pool.Packet
		stamps []driver.Time
	)
	buf, st := make([]*pool.Packet, 8), make([]driver.Time, 8)
	rq := sp.port.RxQueue(0).(driver.RxTimestamper)
	for p := 0; p < 20000 && len(got) < 3; p++ {
		n := rq.RxBurstStamped(buf, st)
		got, stamps = append(got, buf[:n]...), append(stamps, st[:n]...)
	}
	if len(got) != 3 {
		t.Fatalf("received %d frames, want 3: the ring stalled (drops %v)", len(got), sp.port.RxQueue(0).Stats().Drops)
	}
	for j, pk := range got {
		if sportOf(pk) != uint16(j+2) || stamps[j] != want[j+2] {
			t.Errorf("frame %d: frame %d stamped %v, want frame %d stamped %v", j, sportOf(pk), stamps[j], j+2, want[j+2])
		}
	}
	if n := sp.port.RxQueue(0).Stats().Drops[driver.CauseBadDescriptor]; n != 2 {
		t.Errorf("bad_descriptor %d, want 2", n)
	}
	pool.FreeBulk(got)
	sp.close(false)
}

// TestDecodeExtendedRxBD: a tool reading a 32-byte extended BD sees its
// timestamp flag and stamp; a 16-byte BD has none to show.
func TestDecodeExtendedRxBD(t *testing.T) {
	b := make([]byte, 32)
	binary.LittleEndian.PutUint16(b[8:], 60)
	binary.LittleEndian.PutUint32(b[12:], 1<<31|1<<30|1<<10) // F, R, TSTMP
	binary.LittleEndian.PutUint32(b[16:], 0x12345678)
	d := enetc.DecodeBD(true, b)
	if !slices.Contains(d.Flags, "TSTMP") || !strings.Contains(d.Note, "stamp 0x12345678") || d.Len != 60 {
		t.Errorf("extended BD decoded as %+v, want TSTMP and stamp 0x12345678", d)
	}
	if d := enetc.DecodeBD(true, b[:16]); slices.Contains(d.Flags, "TSTMP") {
		t.Errorf("16-byte BD decoded as %+v: no stamp to show", d)
	}
}

// TestRxTimestampsOnVF: a VF opened with timestamps=rx (its own RBMR.BDS
// and SICTR0/1) stamps the frames it receives with the chip's timer, as a
// PF does.
func TestRxTimestampsOnVF(t *testing.T) {
	c, m, _ := openTimer(t, "")
	pf := openSim(t, "", pcsCfg)
	vf := openSim(t, "timestamps=rx&vf=1&pf="+strings.TrimPrefix(strings.Split(pf.spec, "?")[0], "sim:"), pcsCfg)
	if err := c.Set(6000 * sec); err != nil {
		t.Fatal(err)
	}
	m.Advance(time.Microsecond)
	want := now(t, c)
	f := udp4(t, 100, 1)
	copy(f, vf.port.Info().MAC)
	vf.model.Port().Receive(f)
	got, stamps := rxStamped(vf.port.RxQueue(0), 1)
	if len(got) != 1 || stamps[0] != want {
		t.Fatalf("VF received %d frames stamped %v, want 1 stamped %v", len(got), stamps, want)
	}
	pool.FreeBulk(got)
	vf.close(false)
	pf.close(false)
}
