package tap

import (
	"golang.org/x/sys/unix"

	"github.com/gopmd/gopmd/driver"
)

// Down moves what the kernel sent out of the TAP onto the port: it reads up
// to a burst of frames (one read(2) each, straight into buffers of the
// twin's pool; it stops at the first empty read, never blocks) and hands
// them to tx in one TxBurst. Frames tx refuses are freed and counted as
// CauseDownTxFull, never retried. It returns how many frames tx took.
// Once the interface has gone away (see Stats.Gone) it returns 0 at once.
//
// Down belongs to one goroutine at a time: the one that owns tx and the
// twin's pool. It allocates nothing.
func (t *Twin) Down(tx driver.TxQueue) int {
	if t.c.gone.Load() {
		return 0 // the interface went away: nothing can come down
	}
	n := 0
	var runts, big, readErrs uint64
	// At most a burst of reads, good or bad: a kernel that sends nothing
	// but runts cannot hold the loop here.
	for reads := 0; reads < t.burst; reads++ {
		p := t.spare
		t.spare = nil
		if p == nil {
			// The twin's pool: its allocating side is this goroutine's.
			if p = t.pool.Alloc(); p == nil {
				t.c.downNoBuffer.Add(1)
				break
			}
		}
		room := p.Buf()[p.Offset():]
		m, err := unix.Read(t.fd, room)
		if err != nil || m <= 0 {
			t.spare = p
			switch {
			case err == nil, err == unix.EAGAIN, err == unix.EINTR:
			case gone(err):
				t.markGone("read", err)
			default:
				readErrs++
			}
			break
		}
		// The kernel never sends more than MTU plus a header and a tag,
		// which Open made shorter than the room; a read that fills the
		// room may have been cut.
		if m >= len(room) {
			big++
			t.spare = p
			continue
		}
		if m < ethHdrLen {
			runts++
			t.spare = p
			continue
		}
		p.SetLen(m)
		p.PktLen, p.NSegs = m, 1
		t.out[n] = p
		n++
	}
	t.c.drop(CauseDownTooBig, big)
	t.c.drop(CauseDownRunt, runts)
	t.c.drop(CauseDownRead, readErrs)
	if n == 0 {
		return 0
	}
	var bytes uint64
	for _, p := range t.out[:n] {
		bytes += uint64(p.PktLen)
	}
	// From here the TX queue owns what it takes; the rest is ours to free.
	sent := tx.TxBurst(t.out[:n])
	if sent < n {
		for _, p := range t.out[sent:n] {
			bytes -= uint64(p.PktLen)
		}
		t.pool.RecycleBulk(t.out[sent:n])
		t.c.drop(CauseDownTxFull, uint64(n-sent))
	}
	clear(t.out[:n])
	if sent > 0 {
		t.c.downFrames.Add(uint64(sent))
		t.c.downBytes.Add(bytes)
	}
	return sent
}
