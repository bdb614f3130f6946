package main

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/gopmd/gopmd/wire"
)

// capture copies forwarded frames into a pcap file, as dpdk-pdump does,
// without ever making a worker wait: each lane puts copies into its own
// bounded ring (it is the only producer) and one writer goroutine drains
// them all. A full ring drops the copy and counts it.
type capture struct {
	w     *wire.PcapWriter
	rings []*wire.FrameRing
	stop  atomic.Bool
	wg    sync.WaitGroup
}

// captureIdle is how long the writer sleeps when every ring is empty.
const captureIdle = 200 * time.Microsecond

func (c *capture) start() {
	c.wg.Add(1)
	go c.writer()
}

// writer drains the rings into the file. A frame's timestamp is the time the
// writer takes it, within a fraction of a millisecond of its forwarding.
func (c *capture) writer() {
	defer c.wg.Done()
	buf := make([]byte, captureSlotSize)
	for {
		got := 0
		for _, r := range c.rings {
			for i := 0; i < 64; i++ {
				n, ok := r.Get(buf)
				if !ok {
					break
				}
				c.w.Write(time.Now(), buf[:n])
				got++
			}
		}
		if got == 0 {
			if c.stop.Load() {
				return
			}
			time.Sleep(captureIdle)
		}
	}
}

// overflow is the number of copies dropped because a ring was full (or a
// frame longer than a slot).
func (c *capture) overflow() uint64 {
	var n uint64
	for _, r := range c.rings {
		n += r.Full.Load() + r.TooBig.Load()
	}
	return n
}

// close drains what is queued (the workers have stopped) and closes the file.
func (c *capture) close() error {
	c.stop.Store(true)
	c.wg.Wait()
	return c.w.Close()
}
