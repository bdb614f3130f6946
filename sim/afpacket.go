package sim

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gopmd/gopmd/internal/linkwatch"
	"github.com/gopmd/gopmd/wire"
)

// afpacketSlots is the depth of the ring between the socket reader and the
// model's receive side.
const afpacketSlots = 1024

// afpacketRcvBuf is the socket receive buffer asked for.
const afpacketRcvBuf = 8 << 20

// AFPacket joins a model port to a real Linux interface through an
// AF_PACKET raw socket: frames the kernel sees on the interface are offered
// to the port's receive side (a wire.Source fed by a reader goroutine), and
// frames the port transmits leave through the socket (a wire.Wire).
//
// The interface's link is the port's link: a netlink watch follows its
// operational state (RTM_NEWLINK, IFF_RUNNING), and a carrier lost on the
// interface (a cable pulled, a veth's peer taken down) takes the model's
// PHY link down, so the driver sees a link event; frames the port sends
// while the interface has no carrier are dropped here and counted
// (TxLinkDown). The reader sleeps in poll(2) on the socket, the netlink
// watch and a stop event, so an idle interface costs nothing.
//
// The peer's offloads must be off for frames to arrive as a wire would
// carry them (ethtool -K IF tso off gso off tx off on the far side of a
// veth): a segmentation-offloaded frame longer than a port buffer is
// counted in RxTooBig and dropped.
type AFPacket struct {
	ifname  string
	ifindex int
	fd      int
	nl      *linkwatch.Watch
	stopfd  int // eventfd: Close wakes the reader
	ring    *wire.FrameRing
	stop    atomic.Bool
	wg      sync.WaitGroup

	carrier     atomic.Bool // the interface is up with a carrier (IFF_RUNNING)
	linkChanges atomic.Uint64
	gone        atomic.Bool                // the interface was deleted
	onLink      atomic.Pointer[func(bool)] // the model's PHY link, following carrier
	txLinkDown  atomic.Uint64
	closeOnce   sync.Once
	closeErr    error

	rxFrames, rxBytes           atomic.Uint64
	delivered                   atomic.Uint64 // handed to the port by Next
	held                        atomic.Bool   // set by PortView.Hold: Next hands over nothing more
	txFrames, txBytes, txErrors atomic.Uint64
	lastErr                     atomic.Pointer[error]
	kdropsMu                    sync.Mutex
	kdrops                      uint64 // PACKET_STATISTICS resets on read: summed here
	ifDropBase, ifDrops         uint64 // the interface's rx_dropped at open, and since (kdropsMu)
	waker                              // the model's engine, woken by each frame queued
}

// AFPacketStats are the counters of an AF_PACKET wire.
type AFPacketStats struct {
	// RxFrames/RxBytes: received from the interface and queued for the port.
	RxFrames uint64 `json:"rx_frames"`
	RxBytes  uint64 `json:"rx_bytes"`
	// RxDropped: received but the queue to the port was full.
	RxDropped uint64 `json:"rx_dropped"`
	// RxTooBig: longer than CableSlotSize (offloads on).
	RxTooBig uint64 `json:"rx_too_big"`
	// Delivered: handed from the queue to the port.
	Delivered uint64 `json:"delivered"`
	// Held: left in the queue when the port stopped taking frames.
	Held uint64 `json:"held"`
	// KernelDrops: frames the kernel dropped because the socket's receive
	// buffer was full (the reader fell behind): PACKET_STATISTICS' tp_drops.
	KernelDrops uint64 `json:"kernel_drops"`
	// IfDropped: frames the kernel dropped on the interface before any
	// socket saw them (its rx_dropped since the port opened: a receive
	// backlog that overflowed, as a burst into a veth does).
	IfDropped uint64 `json:"if_dropped"`
	// TxFrames/TxBytes: sent into the interface; TxErrors: refused by it;
	// TxLinkDown: dropped because the interface had no carrier.
	TxFrames   uint64 `json:"tx_frames"`
	TxBytes    uint64 `json:"tx_bytes"`
	TxErrors   uint64 `json:"tx_errors"`
	TxLinkDown uint64 `json:"tx_link_down"`
	// LinkUp: the interface is up with a carrier now; LinkChanges: how
	// often that changed since the port opened.
	LinkUp      bool   `json:"link_up"`
	LinkChanges uint64 `json:"link_changes"`
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// OpenAFPacket opens a raw socket on the interface, puts the interface in
// promiscuous mode for the socket's life, and starts the reader. It needs
// CAP_NET_RAW.
func OpenAFPacket(ifname string) (*AFPacket, error) {
	ifi, err := net.InterfaceByName(ifname)
	if err != nil {
		return nil, fmt.Errorf("afpacket=%s: %w (name an existing interface; see ip link)", ifname, err)
	}
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, int(htons(unix.ETH_P_ALL)))
	if err != nil {
		if errors.Is(err, unix.EPERM) {
			return nil, fmt.Errorf("afpacket=%s: raw socket: %w (run as root or grant CAP_NET_RAW)", ifname, err)
		}
		return nil, fmt.Errorf("afpacket=%s: raw socket: %w", ifname, err)
	}
	fail := func(what string, err error) (*AFPacket, error) {
		unix.Close(fd)
		return nil, fmt.Errorf("afpacket=%s: %s: %w", ifname, what, err)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifi.Index}); err != nil {
		return fail("bind", err)
	}
	mr := unix.PacketMreq{Ifindex: int32(ifi.Index), Type: unix.PACKET_MR_PROMISC}
	if err := unix.SetsockoptPacketMreq(fd, unix.SOL_PACKET, unix.PACKET_ADD_MEMBERSHIP, &mr); err != nil {
		return fail("promiscuous mode", err)
	}
	// Frames we send must not come back to us as received ones.
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_IGNORE_OUTGOING, 1); err != nil {
		return fail("PACKET_IGNORE_OUTGOING (needs Linux 4.20)", err)
	}
	// Room for bursts while the reader is descheduled: a TCP sender on a
	// veth sends hundreds of frames at once. Beyond rmem_max needs
	// CAP_NET_ADMIN; without it the kernel caps the plain request.
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, afpacketRcvBuf) != nil {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, afpacketRcvBuf)
	}
	nl, err := linkwatch.New(ifi.Index)
	if err != nil {
		return fail("netlink watch of the link state", err)
	}
	stopfd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		nl.Close()
		return fail("eventfd", err)
	}
	a := &AFPacket{ifname: ifname, ifindex: ifi.Index, fd: fd, nl: nl, stopfd: stopfd,
		ring: wire.NewFrameRing(afpacketSlots, CableSlotSize)}
	a.ifDropBase, _ = ifRxDropped(ifname)
	// The state now; the watch, subscribed above, reports every change
	// from here on.
	if cur, err := net.InterfaceByIndex(ifi.Index); err == nil {
		a.carrier.Store(cur.Flags&net.FlagRunning != 0)
	}
	a.wg.Add(1)
	go a.reader()
	return a, nil
}

// OnLink sets the function told of every change of the interface's
// carrier from now on (the model's PHY link, in attach). It is called on
// the reader's goroutine.
func (a *AFPacket) OnLink(f func(up bool)) { a.onLink.Store(&f) }

// LinkUp reports whether the interface is up with a carrier.
func (a *AFPacket) LinkUp() bool { return a.carrier.Load() }

// setCarrier records the interface's state from the netlink watch.
func (a *AFPacket) setCarrier(up bool) {
	if a.carrier.Swap(up) == up {
		return
	}
	a.linkChanges.Add(1)
	if f := a.onLink.Load(); f != nil {
		(*f)(up)
	}
}

// afpacketBatch is how many frames the reader takes from the socket per
// wake of the model's engine.
const afpacketBatch = 64

// reader moves frames from the socket into the ring and follows the
// interface's link state; it sleeps in poll(2) until one of them, or
// Close, has something.
func (a *AFPacket) reader() {
	defer a.wg.Done()
	buf := make([]byte, CableSlotSize+1)
	link := a.linkNotice
	fds := []unix.PollFd{{Fd: int32(a.fd), Events: unix.POLLIN}, {Fd: int32(a.nl.FD()), Events: unix.POLLIN}, {Fd: int32(a.stopfd), Events: unix.POLLIN}}
	for !a.stop.Load() {
		if _, err := unix.Poll(fds, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			a.lastErr.Store(&err)
			return
		}
		if fds[2].Revents != 0 {
			return // Close
		}
		if fds[1].Revents != 0 {
			a.nl.Read(link)
		}
		if fds[0].Revents == 0 {
			continue
		}
		queued := 0
		for i := 0; i < afpacketBatch; i++ {
			n, err := recvDontWait(a.fd, buf)
			if err != nil {
				if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
					break
				}
				if errors.Is(err, unix.ENETDOWN) {
					break // the interface went down: the watch says so
				}
				if errors.Is(err, unix.ENODEV) {
					// Deleted: nothing more comes (Close says so).
					a.gone.Store(true)
					a.setCarrier(false)
					return
				}
				if !a.stop.Load() {
					a.lastErr.Store(&err)
				}
				return
			}
			if n > CableSlotSize {
				a.ring.TooBig.Add(1)
				continue
			}
			// The kernel hands over frames as its stack built them; on a
			// wire the sender's MAC pads them to the minimum.
			n = wire.Pad(buf, n)
			if a.ring.Put(buf[:n]) { // a full ring counts the drop itself
				a.rxFrames.Add(1)
				a.rxBytes.Add(uint64(n))
				queued++
			}
		}
		if queued != 0 {
			a.wake()
		}
	}
}

// linkNotice follows the interface's RTM_NEWLINK (and RTM_DELLINK)
// notices.
func (a *AFPacket) linkNotice(running, gone bool) {
	if gone {
		a.gone.Store(true)
	}
	a.setCarrier(running)
}

// Next implements wire.Source.
func (a *AFPacket) Next(dst []byte) (int, bool) {
	if a.held.Load() {
		return 0, false
	}
	n, ok := a.ring.Get(dst)
	if ok {
		a.delivered.Add(1)
	}
	return n, ok
}

// Lossless implements wire.Source: the kernel does not wait for us.
func (a *AFPacket) Lossless() bool { return false }

// Due implements wire.Waker: frames come when the kernel hands them over.
func (a *AFPacket) Due() (time.Time, bool) { return noClock() }

// Transmit implements wire.Wire: the frame leaves through the interface,
// or is dropped and counted (TxLinkDown) while it has no carrier.
func (a *AFPacket) Transmit(frame []byte) {
	if !a.carrier.Load() {
		a.txLinkDown.Add(1)
		return
	}
	if _, err := unix.Write(a.fd, frame); err != nil {
		a.txErrors.Add(1)
		return
	}
	a.txFrames.Add(1)
	a.txBytes.Add(uint64(len(frame)))
}

// Stats returns the counters.
func (a *AFPacket) Stats() AFPacketStats {
	var held uint64
	if a.held.Load() {
		held = uint64(a.ring.Len())
	}
	return AFPacketStats{RxFrames: a.rxFrames.Load(), RxBytes: a.rxBytes.Load(), Delivered: a.delivered.Load(), Held: held,
		RxDropped: a.ring.Full.Load(), RxTooBig: a.ring.TooBig.Load() + a.ring.TooLong.Load(),
		TxFrames: a.txFrames.Load(), TxBytes: a.txBytes.Load(), TxErrors: a.txErrors.Load(),
		TxLinkDown: a.txLinkDown.Load(), LinkUp: a.carrier.Load(), LinkChanges: a.linkChanges.Load(),
		KernelDrops: a.kernelDrops(), IfDropped: a.ifDropped()}
}

// ifRxDropped reads the interface's rx_dropped counter.
func ifRxDropped(ifname string) (uint64, bool) {
	b, err := os.ReadFile("/sys/class/net/" + ifname + "/statistics/rx_dropped")
	if err != nil {
		return 0, false
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return v, err == nil
}

// ifDropped is the interface's rx_dropped since the port opened (the last
// value read once the interface or the port is gone).
func (a *AFPacket) ifDropped() uint64 {
	a.kdropsMu.Lock()
	defer a.kdropsMu.Unlock()
	if !a.stop.Load() {
		if v, ok := ifRxDropped(a.ifname); ok && v >= a.ifDropBase {
			a.ifDrops = v - a.ifDropBase
		}
	}
	return a.ifDrops
}

// kernelDrops reads and sums the socket's drop counter.
func (a *AFPacket) kernelDrops() uint64 {
	a.kdropsMu.Lock()
	defer a.kdropsMu.Unlock()
	if !a.stop.Load() {
		if st, err := unix.GetsockoptTpacketStats(a.fd, unix.SOL_PACKET, unix.PACKET_STATISTICS); err == nil {
			a.kdrops += uint64(st.Drops)
		}
	}
	return a.kdrops
}

// Close stops the reader and closes the sockets (which also ends the
// promiscuous membership). It reports a receive error that stopped the
// reader early, or that the interface was deleted under the port.
func (a *AFPacket) Close() error {
	a.closeOnce.Do(func() { a.closeErr = a.close() })
	return a.closeErr
}

// close is Close, once: a second close(2) of a descriptor number could
// close another's socket or file that took the number since.
func (a *AFPacket) close() error {
	a.kernelDrops() // the last counts before the socket goes
	a.ifDropped()
	a.kdropsMu.Lock()
	a.stop.Store(true)
	a.kdropsMu.Unlock()
	var one [8]byte
	binary.NativeEndian.PutUint64(one[:], 1) // eventfd counts in host order
	_, _ = unix.Write(a.stopfd, one[:])
	a.wg.Wait()
	err := unix.Close(a.fd)
	a.nl.Close()
	unix.Close(a.stopfd)
	if p := a.lastErr.Load(); p != nil {
		return fmt.Errorf("afpacket=%s: receive: %w", a.ifname, *p)
	}
	if a.gone.Load() {
		return fmt.Errorf("afpacket=%s: the interface was deleted while the port ran (frames sent since were dropped and counted as link down)", a.ifname)
	}
	if err != nil {
		return fmt.Errorf("afpacket=%s: close: %w", a.ifname, err)
	}
	return nil
}
