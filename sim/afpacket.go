package sim

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

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
// The peer's offloads must be off for frames to arrive as a wire would
// carry them (ethtool -K IF tso off gso off tx off on the far side of a
// veth): a segmentation-offloaded frame longer than a port buffer is
// counted in RxTooBig and dropped.
type AFPacket struct {
	ifname string
	fd     int
	ring   *wire.FrameRing
	stop   atomic.Bool
	wg     sync.WaitGroup

	rxFrames, rxBytes           atomic.Uint64
	delivered                   atomic.Uint64 // handed to the port by Next
	held                        atomic.Bool   // set by PortView.Hold: Next hands over nothing more
	txFrames, txBytes, txErrors atomic.Uint64
	lastErr                     atomic.Pointer[error]
	kdropsMu                    sync.Mutex
	kdrops                      uint64 // PACKET_STATISTICS resets on read: summed here
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
	// buffer was full (the reader fell behind).
	KernelDrops uint64 `json:"kernel_drops"`
	// TxFrames/TxBytes: sent into the interface; TxErrors: refused by it.
	TxFrames uint64 `json:"tx_frames"`
	TxBytes  uint64 `json:"tx_bytes"`
	TxErrors uint64 `json:"tx_errors"`
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
	// A receive timeout lets the reader notice Close.
	tv := unix.Timeval{Usec: 100000}
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return fail("receive timeout", err)
	}
	a := &AFPacket{ifname: ifname, fd: fd, ring: wire.NewFrameRing(afpacketSlots, CableSlotSize)}
	a.wg.Add(1)
	go a.reader()
	return a, nil
}

// reader moves frames from the socket into the ring.
func (a *AFPacket) reader() {
	defer a.wg.Done()
	buf := make([]byte, CableSlotSize+1)
	for !a.stop.Load() {
		n, err := unix.Read(a.fd, buf)
		if err != nil {
			if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
				continue
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
			a.wake()
		}
	}
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

// Transmit implements wire.Wire: the frame leaves through the interface.
func (a *AFPacket) Transmit(frame []byte) {
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
		KernelDrops: a.kernelDrops()}
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

// Close stops the reader and closes the socket (which also ends the
// promiscuous membership). It reports a receive error that stopped the
// reader early.
func (a *AFPacket) Close() error {
	a.kernelDrops() // the last count before the socket goes
	a.kdropsMu.Lock()
	a.stop.Store(true)
	a.kdropsMu.Unlock()
	a.wg.Wait()
	err := unix.Close(a.fd)
	if p := a.lastErr.Load(); p != nil {
		return fmt.Errorf("afpacket=%s: receive: %w", a.ifname, *p)
	}
	if err != nil {
		return fmt.Errorf("afpacket=%s: close: %w", a.ifname, err)
	}
	return nil
}
