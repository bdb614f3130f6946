package tap

import (
	"fmt"
	"sync/atomic"
)

// Cause is why a frame on the exception path was dropped.
type Cause uint8

const (
	// CauseUpWrite: the kernel refused a frame written to the TAP (the
	// interface is down or gone, or the frame was malformed): freed.
	CauseUpWrite Cause = iota
	// CauseUpGather: a frame with more segments than one write can
	// gather (see tun.MaxIov): freed.
	CauseUpGather
	// CauseDownTxFull: the port's TX queue took fewer kernel frames than
	// offered (ring full, link down, device busy): freed, never retried.
	CauseDownTxFull
	// CauseDownTooBig: the kernel sent a frame that fills the whole buffer
	// (it may be cut): dropped. The TAP's MTU is set so this does not happen.
	CauseDownTooBig
	// CauseDownRunt: the kernel sent fewer bytes than an Ethernet header.
	CauseDownRunt
	// CauseDownRead: reading the TAP failed (other than "nothing queued"
	// and the interface being gone).
	CauseDownRead
	// CauseUpGone: a frame for the host after the TAP interface went away
	// (deleted while the twin ran, ip link del): freed. Copies are not
	// written either (the frames are forwarded as ever) and count here too.
	CauseUpGone
	// NumCauses is the number of causes, for arrays indexed by Cause.
	NumCauses
)

var causeNames = [NumCauses]string{"up_write", "up_gather", "down_tx_full", "down_too_big", "down_runt", "down_read", "up_gone"}

// String is the cause's counter name, such as down_tx_full.
func (c Cause) String() string {
	if c < NumCauses {
		return causeNames[c]
	}
	return fmt.Sprintf("cause(%d)", c)
}

// Stats are a twin's counters.
type Stats struct {
	// UpFrames and UpBytes were written to the TAP; UpCopies of them were
	// copies of frames that were also left to the application.
	UpFrames, UpBytes, UpCopies uint64
	// Taken counts the frames Up removed from the application's bursts:
	// those written up that were not copies, plus those it dropped. A
	// loop's received frames are what it handled plus Taken.
	Taken uint64
	// DownFrames and DownBytes were read from the TAP and taken by the
	// port's TX queue.
	DownFrames, DownBytes uint64
	// DownNoBuffer counts Down calls that stopped because the twin's pool
	// was empty (every buffer on the TX ring): frames stay queued in the
	// kernel, nothing is lost here.
	DownNoBuffer uint64
	// Drops counts frames lost on the exception path, by cause.
	Drops [NumCauses]uint64
	// Gone is set once the TAP interface has gone away (deleted while the
	// twin ran): from then on nothing is written or read, and frames for
	// the host count as CauseUpGone.
	Gone bool
}

// UpDrops is the sum of the drops of frames going up.
func (s Stats) UpDrops() uint64 {
	return s.Drops[CauseUpWrite] + s.Drops[CauseUpGather] + s.Drops[CauseUpGone]
}

// DownDrops is the sum of the drops of frames coming down.
func (s Stats) DownDrops() uint64 {
	return s.Drops[CauseDownTxFull] + s.Drops[CauseDownTooBig] + s.Drops[CauseDownRunt] + s.Drops[CauseDownRead]
}

// counters are the live Stats: added to once per call, read by anyone.
type counters struct {
	upFrames, upBytes, upCopies atomic.Uint64
	taken                       atomic.Uint64
	downFrames, downBytes       atomic.Uint64
	downNoBuffer                atomic.Uint64
	drops                       [NumCauses]atomic.Uint64
	gone                        atomic.Bool
}

func (c *counters) drop(cause Cause, n uint64) {
	if n != 0 {
		c.drops[cause].Add(n)
	}
}

func (c *counters) snapshot() Stats {
	s := Stats{
		UpFrames: c.upFrames.Load(), UpBytes: c.upBytes.Load(), UpCopies: c.upCopies.Load(),
		Taken:      c.taken.Load(),
		DownFrames: c.downFrames.Load(), DownBytes: c.downBytes.Load(), DownNoBuffer: c.downNoBuffer.Load(),
		Gone: c.gone.Load(),
	}
	for i := range s.Drops {
		s.Drops[i] = c.drops[i].Load()
	}
	return s
}
