// Command fecrig runs inside the ARM rig's guest (Debian armmp under
// qemu-system-arm) and drives both ENETs of the board with gopmd's fec
// driver, opened through the pci package's platform backend: a /dev/mem
// window (no kernel driver bound) or UIO (uio_pdrv_genirq), with DMA
// memory from a mem= carve-out or from pagemap'd pages. On each port it
// sends a hello frame, checks that the host's frames arrive intact in
// RxBurst, then sends frames with TxBurst for the host to check. Halfway
// through the host's frames it makes the PHY renegotiate to 10 Mb/s (ANAR
// over MDIO) and back to 100 Mb/s before sending: each change restarts the
// MAC (graceful stop, ETHEREN off, speed bits, restart) with received
// frames waiting in the ring, and none may be lost or reordered.
// It prints PASS/FAIL/INFO/TIME lines; exit status 0 only if all passed.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/fec"
	"github.com/gopmd/gopmd/rigs/arm-fec/frames"
)

var (
	devs      = flag.String("devs", "2188000.ethernet,20b4000.ethernet", "platform nodes of the ENETs, comma-separated")
	carve     = flag.Uint64("carve", 0, "physical base of the carve-out (0: use pagemap memory)")
	carveSize = flag.Uint64("carve-size", 32<<20, "bytes of carve-out per port")
	count     = flag.Int("n", 64, "frames each way per port")
	bd        = flag.String("bd", "enhanced", "descriptor format: legacy or enhanced")
	timeout   = flag.Duration("timeout", 60*time.Second, "how long to wait for the host's frames")
	backend   = flag.String("backend", "", "backend every port must be opened through (devmem or uio; empty: any)")
	irq       = flag.Bool("irq", false, "sleep on the RX interrupt (driver.RxWaiter) until the host's first frames wake the port")
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
	t0 := time.Now()
	names := strings.Split(*devs, ",")
	ports := make([]driver.Port, len(names))
	for i, n := range names {
		spec := fmt.Sprintf("platform:%s?unsafe-noiommu=1&bd=%s&rx-ring=64&tx-ring=64&pool-size=256", n, *bd)
		// QEMU 7.2 only: each ENET has a PHY on its own MDIO bus, while the
		// board's device tree (imx6ul-14x14-evk) puts ENET1's PHY on
		// ENET2's bus, which ENET1 cannot reach; phy=scan takes the PHY the
		// port's own bus has. On the board the tree is right.
		spec += "&phy=scan"
		if *bd == "legacy" {
			// A QEMU-only workaround, never for silicon: QEMU 7.2 ignores
			// RACC.SHIFT16 when it receives into legacy descriptors.
			spec += "&shift16=0"
		}
		if *carve != 0 {
			spec += fmt.Sprintf("&dma-carveout=%#x+%#x", *carve+uint64(i)*(*carveSize), *carveSize)
		} else {
			spec += "&dma-coherent=1" // QEMU's ENET DMA is coherent; pagemap memory is cached
		}
		to := time.Now()
		p, err := driver.Open(spec)
		if err != nil {
			say("FAIL", "open-"+n, "%v", err)
			continue
		}
		inf := p.Info()
		if *backend != "" && inf.Backend != *backend {
			// The rig runs once per access path: a port that fell back to
			// another one (no /dev/uioN for the node, say) proves nothing.
			say("FAIL", "open-"+n, "opened through the %s backend, but this run tests %s (%s)", inf.Backend, *backend, spec)
			p.Close()
			continue
		}
		say("PASS", "open-"+n, "%s via %s, opened by the "+opener+" (%s), MAC %s, %s descriptors, %v", inf.Device, inf.Backend, spec, inf.MAC, *bd, time.Since(to).Round(time.Millisecond))
		if fp, ok := p.(*fec.Port); ok {
			say("INFO", "phy-"+n, "PHY address %d", fp.PHYAddr())
		}
		if err := p.Start(); err != nil {
			say("FAIL", "start-"+n, "%v", err)
			p.Close()
			continue
		}
		say("INFO", "link-"+n, "%v", p.Link())
		ports[i] = p
	}
	var wg sync.WaitGroup
	for i, p := range ports {
		if p == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			exchange(i, names[i], p)
		}()
	}
	wg.Wait()
	for i, p := range ports {
		if p == nil {
			continue
		}
		st := p.Stats()
		say("INFO", "stats-"+names[i], "rx %d frames %d bytes drops %d; tx %d frames %d bytes drops %d", st.Rx.Packets, st.Rx.Bytes, st.Rx.TotalDrops(), st.Tx.Packets, st.Tx.Bytes, st.Tx.TotalDrops())
		if err := p.Close(); err != nil {
			say("FAIL", "close-"+names[i], "%v", err)
		} else {
			say("PASS", "close-"+names[i], "stopped, every buffer back, memory released")
		}
	}
	say("TIME", "guest", "%v", time.Since(t0).Round(time.Millisecond))
	if failures > 0 {
		fmt.Printf("FECRIG RESULT: FAIL (%d)\n", failures)
		os.Exit(1)
	}
	fmt.Println("FECRIG RESULT: PASS")
}

// ANAR values: 10BASE-T full duplex only, and QEMU's reset value (10 and
// 100 Mb/s, both duplexes). QEMU's PHY ORs in 100BASE-TX half, which its
// link partner does not offer, so 10 full is what resolves.
const (
	anar10Full = 0x0041
	anarAll    = 0x01E1
)

// renegotiate makes the port's PHY advertise speed (10 or 100) and has
// the driver read it: the port must report the new speed and have
// restarted its MAC the restarts-th time. QEMU ignores the MAC's speed
// bits, so frames go on flowing; what the rig shows is the restart itself
// on QEMU's ENET registers (GTS/GRA, ETHEREN rewinding the rings).
func renegotiate(name string, p driver.Port, speed int, restarts uint64) {
	fp, ok := p.(*fec.Port)
	if !ok || fp.PHYAddr() < 0 {
		say("FAIL", "speed-"+name, "no PHY to renegotiate")
		return
	}
	anar := uint16(anarAll)
	if speed == 10 {
		anar = anar10Full
	}
	if err := fp.MDIOWrite(fp.PHYAddr(), 4, anar); err != nil {
		say("FAIL", "speed-"+name, "ANAR write: %v", err)
		return
	}
	l := fp.UpdateLink()
	if !l.Up || l.SpeedMbps != speed || fp.MACRestarts() != restarts {
		say("FAIL", "speed-"+name, "after advertising %d Mb/s only: link %v, %d MAC restarts (want %d)", speed, l, fp.MACRestarts(), restarts)
		return
	}
	say("PASS", "speed-"+name, "PHY renegotiated to %v; MAC restart %d", l, restarts)
}

// send transmits one frame built by build from the RX queue's pool.
func send(p driver.Port, data []byte) bool {
	pk := p.RxQueue(0).Pool().Alloc()
	if pk == nil {
		return false
	}
	copy(pk.Append(len(data)), data)
	pk.PktLen = len(data)
	pkts := []*driver.Packet{pk}
	for p.TxQueue(0).TxBurst(pkts) == 0 {
		time.Sleep(time.Millisecond)
	}
	return true
}

func exchange(idx int, name string, p driver.Port) {
	rxq, txq := p.RxQueue(0), p.TxQueue(0)
	var waiter *driver.RxWaiter
	if *irq {
		// Arm before the hello: the host sends nothing until it sees it,
		// so the ring is empty now and only the interrupt can end the wait.
		var err error
		if waiter, err = driver.NewRxWaiter(rxq); err == nil {
			err = waiter.Arm()
		}
		if err != nil {
			say("FAIL", "irq-"+name, "arm the RX interrupt: %v", err)
			return
		}
		if n := rxq.RxBurst(make([]*driver.Packet, 8)); n != 0 {
			say("FAIL", "irq-"+name, "%d frames in the ring before the hello", n)
			return
		}
	}
	// Hello: tells the host this port receives now.
	if !send(p, frames.Frame(frames.Hello, idx, 0)) {
		say("FAIL", "hello-"+name, "no buffer for the hello frame")
		return
	}
	if waiter != nil {
		ts := time.Now()
		woke, err := waiter.Wait(*timeout)
		waiter.Disarm()
		switch {
		case err != nil:
			say("FAIL", "irq-"+name, "wait: %v", err)
			return
		case !woke:
			say("FAIL", "irq-"+name, "no RX interrupt within %v of the hello", *timeout)
			return
		}
		say("PASS", "irq-"+name, "slept on the UIO interrupt descriptor; the host's frames woke it after %v", time.Since(ts).Round(time.Millisecond))
	}
	t0 := time.Now()
	got := 0
	renegotiated := false
	pkts := make([]*driver.Packet, 32)
	deadline := time.Now().Add(*timeout)
	for got < *count && time.Now().Before(deadline) {
		if got >= *count/2 && !renegotiated {
			renegotiated = true
			renegotiate(name, p, 10, 1)
		}
		n := rxq.RxBurst(pkts)
		if n == 0 {
			time.Sleep(200 * time.Microsecond)
			continue
		}
		for _, pk := range pkts[:n] {
			data := pk.Data()
			dir, port, k, ok := frames.Parse(data)
			if !ok || dir != frames.ToGuest {
				say("INFO", "rx-"+name, "ignored a %d-byte frame that is not the host's", len(data))
				pk.Free()
				continue
			}
			if port != idx {
				say("FAIL", "rx-"+name, "frame %d of port %d arrived on port %d", k, port, idx)
			} else if k != got {
				say("FAIL", "rx-"+name, "frame %d arrived where %d was due", k, got)
			} else if d := frames.Diff(data, frames.Frame(frames.ToGuest, idx, k)); d != "" {
				say("FAIL", "rx-"+name, "frame %d corrupted: %s", k, d)
			}
			got++
			pk.Free()
		}
	}
	if got < *count {
		say("FAIL", "rx-"+name, "%d of %d host frames arrived within %v", got, *count, *timeout)
		return
	}
	say("PASS", "rx-"+name, "%d host frames arrived intact in RxBurst in %v", got, time.Since(t0).Round(time.Millisecond))
	renegotiate(name, p, 100, 2)
	t1 := time.Now()
	batch := make([]*driver.Packet, 0, 8)
	for k := 0; k < *count; k++ {
		data := frames.Frame(frames.ToHost, idx, k)
		pk := rxq.Pool().Alloc()
		if pk == nil {
			txq.Reclaim()
			if pk = rxq.Pool().Alloc(); pk == nil {
				say("FAIL", "tx-"+name, "pool empty at frame %d", k)
				return
			}
		}
		copy(pk.Append(len(data)), data)
		pk.PktLen = len(data)
		batch = append(batch, pk)
		if len(batch) == cap(batch) || k == *count-1 {
			for sent := 0; sent < len(batch); {
				sent += txq.TxBurst(batch[sent:])
				if sent < len(batch) {
					txq.Reclaim()
				}
			}
			batch = batch[:0]
		}
	}
	for i := 0; txq.Pending() > 0 && i < 1000; i++ {
		txq.Reclaim()
		time.Sleep(time.Millisecond)
	}
	say("PASS", "tx-"+name, "%d frames handed to TxBurst in bursts of 8 and reclaimed in %v", *count, time.Since(t1).Round(time.Millisecond))
}
