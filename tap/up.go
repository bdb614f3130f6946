package tap

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pool"
	"github.com/gopmd/gopmd/tap/internal/tun"
)

// upBatch is how many taken frames Up frees in one pool.FreeBulk call.
const upBatch = 32

// Up runs the classifier over a received burst: frames for the host are
// written to the TAP, one write(2) each (the TUN API), and freed; copies of
// broadcasts are written and the frames kept. The frames the application
// still owns, in their order, are moved to pkts[:kept]; pkts[kept:] must
// not be used after. A frame the kernel refuses is counted by cause.
//
// Up may run on several goroutines at once. It allocates nothing; its
// cost is one classification per frame and one system call per frame that
// goes up.
func (t *Twin) Up(pkts []*driver.Packet) (kept int) {
	// Most bursts hold nothing for the host: find the first frame that
	// does without touching the burst.
	i := 0
	for i < len(pkts) && (t.cls.passesOn(pkts[i].Data()) || t.cls.ClassifyPacket(pkts[i]) == Forward) {
		i++
	}
	if i == len(pkts) {
		return i
	}
	return i + t.up(pkts[i:])
}

// up is Up from the first frame that goes up or is copied.
func (t *Twin) up(pkts []*driver.Packet) (kept int) {
	var (
		// Taken frames are freed together, upBatch at a time: a small
		// array, since the stack clears it on every call.
		taken                  [upBatch]*driver.Packet
		nt                     int
		frames, bytes, copies  uint64
		writeDrops, gatherDrop uint64
		goneDrops              uint64
	)
	for _, p := range pkts {
		v := t.cls.ClassifyPacket(p)
		if v == Forward {
			pkts[kept] = p
			kept++
			continue
		}
		switch n, cause := t.write(p); {
		case cause == NumCauses:
			frames++
			bytes += uint64(n)
			if v == Copy {
				copies++
			}
		case cause == CauseUpGather:
			gatherDrop++
		case cause == CauseUpGone:
			goneDrops++
		default:
			writeDrops++
		}
		if v == Copy {
			pkts[kept] = p
			kept++
			continue
		}
		taken[nt] = p
		nt++
		if nt == len(taken) {
			pool.FreeBulk(taken[:nt])
			nt = 0
		}
	}
	if nt > 0 {
		pool.FreeBulk(taken[:nt])
	}
	if frames != 0 {
		t.c.upFrames.Add(frames)
		t.c.upBytes.Add(bytes)
		t.c.upCopies.Add(copies)
	}
	if kept != len(pkts) {
		t.c.taken.Add(uint64(len(pkts) - kept))
	}
	t.c.drop(CauseUpWrite, writeDrops)
	t.c.drop(CauseUpGather, gatherDrop)
	t.c.drop(CauseUpGone, goneDrops)
	return kept
}

// write writes one frame to the TAP and returns its length, or the cause
// it was refused for (NumCauses when it was written). A single buffer is
// one write(2); a chained frame, or one whose VLAN tag the device
// stripped (put back here so the kernel sees the frame as it was on the
// wire), is one writev(2) of its pieces.
func (t *Twin) write(p *driver.Packet) (int, Cause) {
	if t.c.gone.Load() {
		return 0, CauseUpGone
	}
	d := p.Data()
	m := p.RxMeta()
	stripped := m.Flags&pool.FlagVLANStripped != 0 && len(d) >= 2*6
	if p.Next() == nil && !stripped {
		n, err := unix.Write(t.fd, d)
		if err != nil || n != len(d) {
			return 0, t.writeFailed(err)
		}
		return n, NumCauses
	}
	var io tun.Iovecs
	var tag [vlanTagLen]byte
	if stripped {
		tag = [vlanTagLen]byte{etherVLAN >> 8, etherVLAN & 0xff, byte(m.VLAN >> 8), byte(m.VLAN)}
		io.Add(d[:2*6])
		io.Add(tag[:])
		d = d[2*6:]
	}
	ok := io.Add(d)
	for s := p.Next(); s != nil && ok; s = s.Next() {
		ok = io.Add(s.Data())
	}
	if !ok {
		return 0, CauseUpGather
	}
	n, err := tun.Writev(t.fd, &io)
	if err != nil {
		return 0, t.writeFailed(err)
	}
	return n, NumCauses
}

// writeFailed is the cause of a failed write: CauseUpGone when the
// interface has gone away (and the twin stops using it), else
// CauseUpWrite.
func (t *Twin) writeFailed(err error) Cause {
	if err != nil && gone(err) {
		t.markGone("write", err)
		return CauseUpGone
	}
	return CauseUpWrite
}

// gone reports an error that says the TAP interface no longer exists: the
// kernel detaches a TAP file from an interface deleted under it, and its
// reads and writes then fail with EBADFD.
func gone(err error) bool {
	return err == unix.EBADFD || err == unix.ENODEV || err == unix.ENXIO
}

// markGone stops the twin's use of the TAP after op failed with err, and
// says so once.
func (t *Twin) markGone(op string, err error) {
	if t.c.gone.CompareAndSwap(false, true) {
		t.log.Warn(fmt.Sprintf("tap %s: the interface is gone (%s: %v): it was deleted while the twin ran; from now on frames for the host are dropped and counted as %s, and nothing comes down; restart to recreate it", t.name, op, err, CauseUpGone))
	}
}
