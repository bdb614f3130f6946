package tap_test

import (
	"fmt"
	"io"
	"log/slog"

	"golang.org/x/sys/unix"

	"github.com/gopmd/gopmd/driver"
	_ "github.com/gopmd/gopmd/enetc" // the ENETC driver
	"github.com/gopmd/gopmd/pool"
	"github.com/gopmd/gopmd/sim" // the sim: scheme
	"github.com/gopmd/gopmd/tap"
	"github.com/gopmd/gopmd/wire"
)

// The exception path of an appliance's forwarding loop on simulated ports:
// sim:enetc46 is both a data port and the appliance's own port, sim:enetc47
// the port it forwards to. Frames to the appliance's MAC go up to the
// kernel, the rest are forwarded, and what the kernel answers leaves
// through the port. tap.OpenPort makes the twin's TAP interface and needs
// CAP_NET_ADMIN; here the twin is attached to one end of a socket pair
// (tap.Attach takes any descriptor that moves one frame per read and
// write) and this function plays the kernel at the other end, so the
// example runs anywhere. cmd/l2fwd's tests run the same path through a
// real TAP in network namespaces as root.
func ExampleAttach() {
	port, err := driver.Open("sim:enetc46")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer port.Close()
	peer, err := driver.Open("sim:enetc47")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer peer.Close()
	for _, p := range []driver.Port{port, peer} {
		if err := p.Start(); err != nil {
			fmt.Println(err)
			return
		}
	}
	portWire, peerWire := &countingWire{}, &countingWire{}
	sim.ENETCModel("enetc46").SetWire(portWire)
	sim.ENETCModel("enetc47").SetWire(peerWire)

	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	kernel := fds[1]
	defer unix.Close(kernel)
	rx, tx := port.RxQueue(0), peer.TxQueue(0)
	// Down's buffers come from the RX pool: the same goroutine drives the
	// queue and the twin, and the pool is in the port's DMA domain.
	twin, err := tap.Attach(fds[0], tap.Config{Name: "gopmd0", MAC: port.MAC(), Pool: rx.Pool(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		fmt.Println(err)
		return
	}

	// From the wire: one frame for the appliance, two passing through.
	frame := func(dst []byte) []byte {
		f := make([]byte, 60)
		copy(f, dst)
		copy(f[6:], []byte{0x02, 0, 0, 0, 0, 0x99, 0x08, 0x00})
		return f
	}
	in := sim.ENETCModel("enetc46").Port()
	in.Receive(frame(port.MAC()))
	in.Receive(frame([]byte{0x02, 0, 0, 0, 0, 7}))
	in.Receive(frame([]byte{0x02, 0, 0, 0, 0, 8}))

	// One turn of the loop: Up before forwarding, Down once per poll.
	burst := make([]*driver.Packet, 32)
	n := rx.RxBurst(burst)
	kept := twin.Up(burst[:n])
	sent := tx.TxBurst(burst[:kept])
	pool.FreeBulk(burst[sent:kept])

	up := make([]byte, 2048)
	k, _ := unix.Read(kernel, up)
	fmt.Printf("the kernel got a %d-byte frame for %x\n", k, up[:6])
	reply := frame([]byte{0x02, 0, 0, 0, 0, 0x99})
	copy(reply[6:], port.MAC())
	unix.Write(kernel, reply)
	fmt.Println("kernel frames sent out of the port:", twin.Down(port.TxQueue(0)))

	port.Stop()
	peer.Stop()
	s := twin.Stats()
	fmt.Println("received", n, "forwarded", peerWire.n, "up", s.UpFrames, "down", s.DownFrames, "out of the port", portWire.n)
	twin.Close(0)
	// Output:
	// the kernel got a 60-byte frame for 020000e1002e
	// kernel frames sent out of the port: 1
	// received 3 forwarded 2 up 1 down 1 out of the port 1
}

// countingWire counts the frames a simulated port puts on its wire.
type countingWire struct{ n int }

func (w *countingWire) Transmit([]byte) { w.n++ }

var _ wire.Wire = (*countingWire)(nil)
