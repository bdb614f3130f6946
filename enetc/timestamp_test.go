package enetc_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gopmd/gopmd/driver"
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
	for _, opts := range []string{"timestamps=rx", "timestamps=rx,tx"} {
		_, err := driver.Open("sim:enetc199?link-poll=0&chip=" + testChip(t) + "&" + opts)
		var oe *driver.OptionError
		if err == nil || !errors.As(err, &oe) || oe.Option != "timestamps" || !strings.Contains(err.Error(), "RBMR.BDS") {
			t.Errorf("%s: error %v, want an option error saying extended RX BDs are not set up", opts, err)
		}
	}
	sp := openSim(t, "", driver.Config{})
	defer func() {
		var off *driver.TimestampsOff
		if e, ok := recover().(error); !ok || !errors.As(e, &off) || off.Call != "TxStamped" {
			t.Errorf("TxStamped without timestamps=: recovered %v, want *driver.TimestampsOff", e)
		}
	}()
	sp.port.TxQueue(0).(driver.TxTimestamper).TxStamped(nil, 0)
}
