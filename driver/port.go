package driver

import (
	"net"
	"strconv"
	"time"

	"github.com/gopmd/gopmd/pool"
)

// Port is one Ethernet port driven from user space.
//
// Set-up calls (Start, Stop, SetMTU, ...) are for one control goroutine.
// Each RxQueue and TxQueue is driven by exactly one goroutine at a time
// (lock-free by ownership, as in DPDK): a burst entered while another
// goroutine is inside one on the same queue panics with *ConcurrentUse.
// Stats, Link and OnLinkChange may be called from any goroutine.
//
// A port may implement optional interfaces; assert them, never a driver
// type. On the Port: Inspector and LiveInspector (its rings, for tools),
// PHYAccess (clause-22 MDIO), RegisterDumper (named registers),
// MulticastFilter (group addresses), ClockPort (its 1588 hardware clock:
// call ClockOf, which also finds the timer an ENETC port shares with its
// chip), TSN (traffic classes, gate lists and shapers: use TSNOf),
// Preemption (frame preemption: use PreemptionOf) and StreamFilter
// (802.1Qci per-stream filtering and policing: use StreamFilterOf). On its
// queues: RxInterrupter (an RxQueue a goroutine can sleep on until frames
// arrive) and DirectRecycler (a TxQueue whose reclaim returns one RX queue's
// buffers straight to that pool's owner cache, when one goroutine drives
// both); on a port opened with timestamps=, RxTimestamper and
// TxTimestamper (hardware receive and transmit times in the port's clock).
// The ENETC and FEC ports implement all of them but two, Preemption and
// StreamFilter, which are the ENETC's only. An AF_XDP port (package xdp)
// implements RxInterrupter and DirectRecycler only. A Clock may implement PeriodicOutput.
type Port interface {
	// Info describes the port: name, driver, MAC, queue counts, capabilities.
	Info() PortInfo
	// Start enables the rings and the MAC: frames flow after it returns.
	Start() error
	// Stop quiesces the port in the safe order: stop accepting TX, wait for
	// queued frames to leave (bounded), disable the MAC and the rings, wait
	// for the device to go idle, and take every buffer back from the rings.
	// From its start until the next Start every RxBurst, TxBurst and
	// Reclaim returns 0 touching neither ring nor register (TxBurst leaves
	// the frames with the caller); Stop waits for bursts already running
	// to return. Every driver follows this one protocol (internal/gate).
	// Frames the device had written into an RX ring that no RxBurst took
	// are counted in their queue (CauseStopped, or the cause of the error
	// they carry): poll the queues empty first to receive them instead.
	Stop() error
	// Close stops the port if needed, closes the pools, unmaps DMA memory
	// and releases the device. Buffers still held are waited for up to
	// Config.StopTimeout, then reported by holder (*pool.LeakError) and
	// their memory stays mapped. Afterwards every method fails closed with
	// ErrClosed or a zero value (see the package doc); a second Close
	// returns nil.
	Close() error
	// Link is the current link state.
	Link() Link
	// OnLinkChange calls fn for every change of the link state the driver
	// sees from now on (up, down, speed, duplex), with the state before and
	// after, and returns the function that stops the calls. The driver sees
	// a change when its link watcher polls the PHY (the spec option
	// link-poll=, default once a second), at Start and at UpdateLink. fn
	// runs on the goroutine that saw the change, one call at a time, in
	// order, with no lock of the port held: it may call the port's methods,
	// and it should return quickly (log, or hand the event to a channel),
	// for the next poll waits for it. A closed port reports no more
	// changes.
	OnLinkChange(fn func(LinkEvent)) (cancel func())
	// Stats returns the per-queue and per-port counters.
	Stats() PortStats
	// SetPromiscuous turns unicast and multicast promiscuous mode on or off.
	SetPromiscuous(on bool) error
	// SetMTU sets the largest L3 payload; frames up to MTU+22 bytes
	// (14-byte Ethernet header, one 4-byte VLAN tag, 4-byte FCS) are
	// accepted: the MACs' maximum-frame registers (ENETC PM0_MAXFRM, FEC
	// RCR.MAX_FL) count the whole frame, header and FCS included.
	SetMTU(mtu int) error
	// MAC is the port's primary MAC address.
	MAC() net.HardwareAddr
	// SetMAC changes the primary MAC address. An address no station may
	// have (MACProblem: not 6 bytes, multicast, broadcast, zero) is an
	// error naming the address and what to give, and nothing changes.
	SetMAC(mac net.HardwareAddr) error
	// RxQueue returns receive queue i (0 <= i < Info().RxQueues), and nil
	// (an untyped nil interface) for any other i: every driver answers an
	// index out of range the same way, and a caller that checks for nil
	// can report the bad queue number instead of crashing.
	RxQueue(i int) RxQueue
	// TxQueue returns transmit queue i (0 <= i < Info().TxQueues), and nil
	// for any other i, as RxQueue.
	TxQueue(i int) TxQueue
}

// RxQueue is one receive ring.
type RxQueue interface {
	// RxBurst fills pkts with received frames and returns how many. The
	// caller owns them and must Free, transmit or recycle each one. It never
	// blocks; 0 means nothing arrived.
	RxBurst(pkts []*Packet) int
	// Pool is the queue's buffer pool; its owner is the queue's goroutine,
	// which may Recycle dropped frames straight into it.
	Pool() *pool.Pool
	// Stats are the queue's counters.
	Stats() QueueStats
}

// TxQueue is one transmit ring.
type TxQueue interface {
	// TxBurst queues as many of pkts as there is room for and returns how
	// many: those are the driver's now, and return to their pools when sent.
	// The caller keeps pkts[n:]. One doorbell write covers the whole burst.
	TxBurst(pkts []*Packet) int
	// Reclaim returns the buffers of sent frames to their pools now (TxBurst
	// does it on its own when free slots run low) and reports how many.
	Reclaim() int
	// Pending is the number of frames queued and not yet known to be sent.
	Pending() int
	// Stats are the queue's counters.
	Stats() QueueStats
}

// Link is a port's link state.
type Link struct {
	Up         bool
	SpeedMbps  int
	FullDuplex bool
}

// String formats the link as "down" or "up 1000 Mb/s full duplex".
func (l Link) String() string {
	if !l.Up {
		return "down"
	}
	d := "half"
	if l.FullDuplex {
		d = "full"
	}
	return "up " + strconv.Itoa(l.SpeedMbps) + " Mb/s " + d + " duplex"
}

// Caps are a port's capabilities.
type Caps uint32

// The capabilities a port may have.
const (
	CapRSS         Caps = 1 << iota // spreads received flows over RX queues
	CapJumbo                        // takes frames longer than 1518 bytes
	CapMultiSegRx                   // returns a frame larger than a buffer as chained segments
	CapMultiSegTx                   // sends chained segments as one frame
	CapPromiscuous                  // can receive every frame (SetPromiscuous)
	CapLoopback                     // can loop frames back inside the MAC
	CapHWStats                      // reports the device's own counters (PortStats.HW)
	CapMDIO                         // reaches a PHY over MDIO (PHYAccess)
)

var capNames = []string{"rss", "jumbo", "multiseg-rx", "multiseg-tx", "promisc", "loopback", "hw-stats", "mdio"}

// String lists the capabilities by name, comma-separated ("rss,jumbo").
func (c Caps) String() string {
	s := ""
	for i, n := range capNames {
		if c&(1<<i) != 0 {
			if s != "" {
				s += ","
			}
			s += n
		}
	}
	return s
}

// PortInfo describes a port.
type PortInfo struct {
	Name     string // the spec it was opened with
	Driver   string // "enetc", "fec"
	Device   string // what was found: "1957:e100 ENETC PF", "fsl,imx8mp-fec"
	Backend  string // "vfio", "uio", "devmem", "sim"
	MAC      net.HardwareAddr
	RxQueues int
	TxQueues int
	// MaxRxQueues and MaxTxQueues are what the device offers.
	MaxRxQueues, MaxTxQueues int
	RxRingSize, TxRingSize   int
	MTU, MaxMTU              int
	Caps                     Caps
}

// Config is what Open sets a port up with. Zero fields take the defaults;
// the spec's query options (queues=, rx-ring=, ...) override them.
type Config struct {
	RxQueues, TxQueues     int // default 1
	RxRingSize, TxRingSize int // descriptors; default 512
	// PoolSize is the number of buffers of each RX queue's pool; default
	// RxRingSize + TxRingSize + 2*256 (enough to fill the RX ring while a
	// full TX ring and two bursts' worth are in flight elsewhere).
	PoolSize int
	// BufSize is the size of one buffer; default 2048.
	BufSize int
	MTU     int // default 1500
	// Promiscuous receives every frame (default true: a forwarder's need).
	Promiscuous *bool
	// UnsafeNoIOMMU allows device access without an IOMMU (UIO, VFIO
	// no-IOMMU, /dev/mem): the device can then DMA anywhere in memory.
	UnsafeNoIOMMU bool
	// PortID is copied into every received Packet's Port field.
	PortID uint16
	// StopTimeout bounds how long Stop waits for TX to drain and the
	// device to go idle; default 200 ms.
	StopTimeout time.Duration
}

// Defaults fills zero fields with the defaults.
func (c Config) Defaults() Config {
	if c.RxQueues == 0 {
		c.RxQueues = 1
	}
	if c.TxQueues == 0 {
		c.TxQueues = 1
	}
	if c.RxRingSize == 0 {
		c.RxRingSize = 512
	}
	if c.TxRingSize == 0 {
		c.TxRingSize = 512
	}
	if c.PoolSize == 0 {
		c.PoolSize = c.RxRingSize + c.TxRingSize + 512
	}
	if c.BufSize == 0 {
		c.BufSize = pool.DefaultBufSize
	}
	if c.MTU == 0 {
		c.MTU = 1500
	}
	if c.Promiscuous == nil {
		t := true
		c.Promiscuous = &t
	}
	if c.StopTimeout == 0 {
		c.StopTimeout = 200 * time.Millisecond
	}
	return c
}
