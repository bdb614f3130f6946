package tap_test

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"

	"golang.org/x/sys/unix"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pool"
	"github.com/gopmd/gopmd/sim/simdma"
	"github.com/gopmd/gopmd/tap"
)

// The classifier's decisions for an appliance at 192.0.2.1 that also runs
// VRRP (IP protocol 112).
func ExampleClassifier() {
	mac := net.HardwareAddr{0x02, 0, 0x5e, 0, 0, 1}
	rules := tap.DefaultRules(mac)
	rules.Addrs = []netip.Addr{netip.MustParseAddr("192.0.2.1")}
	rules.Protocols = []uint8{112}
	c, err := tap.NewClassifier(rules)
	if err != nil {
		panic(err)
	}
	eth := func(dst net.HardwareAddr, etype uint16, l3 []byte) []byte {
		b := append(append([]byte{}, dst...), 0x02, 0, 0x5e, 0, 0, 0x99, byte(etype>>8), byte(etype))
		return append(b, l3...)
	}
	ip := func(proto byte, dst [4]byte) []byte {
		h := make([]byte, 20)
		h[0], h[9] = 0x45, proto
		copy(h[16:], dst[:])
		return h
	}
	arp := func(target [4]byte) []byte {
		b := []byte{0, 1, 8, 0, 6, 4, 0, 1, 19: 0, 27: 0}
		copy(b[24:], target[:])
		return b
	}
	bcast := net.HardwareAddr{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	other := net.HardwareAddr{0x02, 0, 0x5e, 0, 0, 0x42}
	for _, f := range []struct {
		what  string
		frame []byte
	}{
		{"TCP to the appliance's MAC", eth(mac, 0x0800, ip(6, [4]byte{192, 0, 2, 1}))},
		{"TCP passing through", eth(other, 0x0800, ip(6, [4]byte{198, 51, 100, 7}))},
		{"ARP: who has 192.0.2.1?", eth(bcast, 0x0806, arp([4]byte{192, 0, 2, 1}))},
		{"ARP: who has 192.0.2.7?", eth(bcast, 0x0806, arp([4]byte{192, 0, 2, 7}))},
		{"VRRP advertisement", eth(net.HardwareAddr{1, 0, 0x5e, 0, 0, 18}, 0x0800, ip(112, [4]byte{224, 0, 0, 18}))},
	} {
		fmt.Printf("%-28s %v\n", f.what, c.Classify(f.frame))
	}
	// Output:
	// TCP to the appliance's MAC   up
	// TCP passing through          forward
	// ARP: who has 192.0.2.1?      up
	// ARP: who has 192.0.2.7?      copy
	// VRRP advertisement           up
}

// A loop's use of a twin: Up on every received burst before forwarding,
// Down once per poll. Here the TAP is the far end of a socket pair (a real
// one comes from tap.OpenPort, which needs CAP_NET_ADMIN) and the port's
// TX queue is a stand-in that takes every frame.
func ExampleTwin_Up() {
	mem, _ := dma.Alloc(simdma.NewIOMMU(false), 64*pool.DefaultBufSize, dma.Options{Hugepages: dma.HugeNever})
	defer mem.Close()
	buffers, _ := pool.New(mem, pool.Config{Name: "example", Count: 64})
	fds, _ := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET, 0)
	kernel := fds[1]
	defer unix.Close(kernel)

	mac := net.HardwareAddr{0x02, 0, 0x5e, 0, 0, 1}
	twin, err := tap.Attach(fds[0], tap.Config{Name: "example", MAC: mac, Pool: buffers,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		panic(err)
	}

	// A received burst: one frame for the appliance, one ARP broadcast,
	// two passing through.
	burst := make([]*driver.Packet, 0, 4)
	for _, dst := range []net.HardwareAddr{mac, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, {0x02, 0, 0, 0, 0, 7}, {0x02, 0, 0, 0, 0, 8}} {
		p := buffers.Alloc()
		p.SetLen(60)
		copy(p.Data(), dst)
		p.Data()[12], p.Data()[13] = 0x08, 0x06
		burst = append(burst, p)
	}
	kept := twin.Up(burst)
	fmt.Println("left to forward:", kept)
	pool.FreeBulk(burst[:kept]) // a forwarder would TxBurst them

	// The kernel answers.
	reply := make([]byte, 42)
	copy(reply[6:], mac)
	unix.Write(kernel, reply)
	fmt.Println("sent down:", twin.Down(&everyFrame{}))

	s := twin.Stats()
	fmt.Printf("up %d (%d copies), down %d, dropped %d\n", s.UpFrames, s.UpCopies, s.DownFrames, s.UpDrops()+s.DownDrops())
	twin.Close(0)
	// Output:
	// left to forward: 3
	// sent down: 1
	// up 2 (1 copies), down 1, dropped 0
}

// everyFrame is a TX queue that sends every frame at once.
type everyFrame struct{}

func (everyFrame) TxBurst(pkts []*driver.Packet) int { pool.FreeBulk(pkts); return len(pkts) }
func (everyFrame) Reclaim() int                      { return 0 }
func (everyFrame) Pending() int                      { return 0 }
func (everyFrame) Stats() driver.QueueStats          { return driver.QueueStats{} }
