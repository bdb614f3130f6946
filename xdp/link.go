package xdp

import (
	"fmt"
	"sync/atomic"

	"github.com/gopmd/gopmd/internal/irqfd"
	"github.com/gopmd/gopmd/internal/linkwatch"
	"golang.org/x/sys/unix"
)

// linkWatcher follows the interface's link for OnLinkChange: an
// rtnetlink watch (RTM_NEWLINK notices: carrier lost or back, the
// interface set down or up) read on a goroutine of its own, which asks
// Link for the state at each notice and tells the subscribers of a
// change. It runs from New to Close, started or not, like the link of
// the other drivers.
type linkWatcher struct {
	w          *linkwatch.Watch
	stop       *irqfd.Eventfd
	done       chan struct{}
	delivering atomic.Bool // subscribers are being called
}

func (p *port) startLinkWatch() error {
	w, err := linkwatch.New(p.nd.index)
	if err != nil {
		return fmt.Errorf("netlink watch of the link state of %s: %w", p.nd.name, err)
	}
	stop, err := irqfd.NewEventfd()
	if err != nil {
		w.Close()
		return fmt.Errorf("eventfd for the link watch: %w", err)
	}
	lw := &linkWatcher{w: w, stop: stop, done: make(chan struct{})}
	p.lw = lw
	last := p.Link() // after the subscription: a change from here on is a notice
	go func() {
		defer close(lw.done)
		fds := []unix.PollFd{{Fd: int32(w.FD()), Events: unix.POLLIN}, {Fd: int32(stop.FD()), Events: unix.POLLIN}}
		notice := false
		seen := func(running, gone bool) { notice = true }
		for {
			if _, err := unix.Poll(fds, -1); err != nil && err != unix.EINTR {
				return
			}
			if fds[1].Revents != 0 {
				return
			}
			if fds[0].Revents == 0 {
				continue
			}
			notice = false
			w.Read(seen)
			if !notice {
				continue
			}
			now := p.Link()
			p.events.Note(p.spec, last, now)
			last = now
			lw.delivering.Store(true)
			p.events.Flush()
			lw.delivering.Store(false)
		}
	}()
	return nil
}

// stopLinkWatch ends the watch goroutine and closes its descriptors. A
// subscriber may Close the port from its callback, on the watch's own
// goroutine: then the descriptors are closed once it has returned.
func (p *port) stopLinkWatch() {
	lw := p.lw
	if lw == nil {
		return
	}
	p.lw = nil
	_ = lw.stop.Signal()
	closeFDs := func() {
		<-lw.done
		lw.w.Close()
		lw.stop.Close()
	}
	if lw.delivering.Load() {
		go closeFDs()
		return
	}
	closeFDs()
}
