// Command fecrighost is the host side of the ARM rig: one UDP socket per
// ENET, the other end of QEMU's "-netdev socket,udp=..." backend, which
// carries one raw Ethernet frame per datagram. For each port it waits for
// the guest's hello frame, sends the host-to-guest frames, and checks that
// the guest's TxBurst frames arrive byte for byte.
//
//	fecrighost -ports 127.0.0.1:5555/127.0.0.1:5556,127.0.0.1:5557/127.0.0.1:5558 -n 64
//
// Each entry is LISTEN/PEER: the host listens where QEMU sends (udp=) and
// sends to QEMU's localaddr=. It prints PASS/FAIL/TIME lines and exits 0
// only when every port passed.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/gopmd/gopmd/rigs/arm-fec/frames"
)

var (
	ports   = flag.String("ports", "127.0.0.1:5555/127.0.0.1:5556", "LISTEN/PEER pairs, comma-separated, one per ENET in order")
	count   = flag.Int("n", 64, "frames each way per port")
	timeout = flag.Duration("timeout", 240*time.Second, "how long to wait for the guest")
	gap     = flag.Duration("gap", 2*time.Millisecond, "pause between host frames (QEMU's socket netdev drops what the NIC cannot take at once)")
)

var (
	mu       sync.Mutex
	failures int
)

func say(kind, name, f string, a ...any) {
	mu.Lock()
	defer mu.Unlock()
	if kind == "FAIL" {
		failures++
	}
	fmt.Printf("%s %s: %s\n", kind, name, fmt.Sprintf(f, a...))
}

func main() {
	flag.Parse()
	var wg sync.WaitGroup
	for i, pair := range strings.Split(*ports, ",") {
		listen, peer, ok := strings.Cut(pair, "/")
		if !ok {
			fmt.Fprintf(os.Stderr, "fecrighost: -ports entry %q is not LISTEN/PEER\n", pair)
			os.Exit(2)
		}
		la, err1 := net.ResolveUDPAddr("udp", listen)
		pa, err2 := net.ResolveUDPAddr("udp", peer)
		if err1 != nil || err2 != nil {
			fmt.Fprintf(os.Stderr, "fecrighost: -ports entry %q: %v %v\n", pair, err1, err2)
			os.Exit(2)
		}
		c, err := net.ListenUDP("udp", la)
		if err != nil {
			fmt.Fprintf(os.Stderr, "fecrighost: listen %s: %v\n", listen, err)
			os.Exit(2)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			run(i, c, pa)
		}()
	}
	fmt.Println("HOST-READY")
	wg.Wait()
	if failures > 0 {
		fmt.Printf("HOST RESULT: FAIL (%d)\n", failures)
		os.Exit(1)
	}
	fmt.Println("HOST RESULT: PASS")
}

func run(port int, c *net.UDPConn, peer *net.UDPAddr) {
	name := fmt.Sprintf("host-port%d", port)
	defer c.Close()
	buf := make([]byte, 65536)
	deadline := time.Now().Add(*timeout)
	c.SetReadDeadline(deadline)
	// The guest's hello says its RX ring is live.
	for {
		n, _, err := c.ReadFromUDP(buf)
		if err != nil {
			say("FAIL", name, "no hello frame from the guest: %v", err)
			return
		}
		if d, p, _, ok := frames.Parse(buf[:n]); ok && d == frames.Hello && p == port {
			break
		}
	}
	t0 := time.Now()
	say("INFO", name, "hello received; sending %d frames", *count)
	for k := 0; k < *count; k++ {
		if _, err := c.WriteToUDP(frames.Frame(frames.ToGuest, port, k), peer); err != nil {
			say("FAIL", name, "send frame %d: %v", k, err)
			return
		}
		time.Sleep(*gap)
	}
	got := 0
	for got < *count {
		n, _, err := c.ReadFromUDP(buf)
		if err != nil {
			say("FAIL", name, "%d of %d guest frames arrived: %v", got, *count, err)
			return
		}
		d, p, k, ok := frames.Parse(buf[:n])
		if !ok || d != frames.ToHost {
			continue
		}
		want := frames.Frame(frames.ToHost, port, got)
		switch {
		case p != port:
			say("FAIL", name, "guest frame of port %d arrived on port %d", p, port)
		case k != got:
			say("FAIL", name, "guest frame %d arrived where %d was due", k, got)
		case frames.Diff(buf[:n], want) != "":
			say("FAIL", name, "guest frame %d corrupted: %s", k, frames.Diff(buf[:n], want))
		}
		got++
	}
	say("PASS", name, "%d guest TxBurst frames arrived intact (exchange took %v)", got, time.Since(t0).Round(time.Millisecond))
}
