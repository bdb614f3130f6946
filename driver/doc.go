// Package driver is gopmd's device-independent API: the Port, RxQueue and
// TxQueue that the ENETC and FEC drivers implement and applications use, the
// Packet header, the Action verdicts, statistics, and Open, which turns a
// spec string ("pci:0000:00:00.0", "platform:2188000.ethernet",
// "sim:enetc0?peer=sim:enetc1", ...) into a running port.
//
// Two registries meet in Open. A Backend reaches a device (VFIO, UIO,
// /dev/mem, or a simulated device model) and returns a Device: register
// windows, a DMA mapper and the device's identity. A Driver claims a Device
// by PCI ID or device-tree compatible string and builds a Port on it. A
// driver therefore never knows whether it talks to silicon or to a model.
//
// # Misuse the drivers refuse
//
// After Close every method of the port and of its queues fails closed
// without touching the device, whose register window is unmapped by then:
// methods with an error return ErrClosed;
// Info, Link and MAC return zero values; RxQueue and TxQueue return nil;
// RxBurst, TxBurst, Reclaim and Pending return 0 (TxBurst takes nothing);
// OnLinkChange subscribes nothing and returns a no-op cancel.
// Counters stay readable: Port.Stats returns the last counters, read by
// Close just before it released the device, and a queue's Stats its own.
// A queue's Pool stays valid for leak inspection (InFlight).
//
// Close waits up to Config.StopTimeout for buffers the application still
// holds; those it reports by holder in a *pool.LeakError (errors.As), and
// it keeps their memory mapped for the rest of the process, so Data on a
// packet kept past Close stays safe and its Free is accepted. Memory with no
// buffer out is unmapped. A buffer left on another port's TX ring (a frame
// forwarded there and not yet reclaimed) is reported as held by that ring,
// with its port.
//
// A queue belongs to one goroutine at a time. A burst (RxBurst, TxBurst,
// Reclaim) entered while another goroutine is inside one on the same queue
// panics with a *ConcurrentUse naming the queue, before it touches the
// ring: the one atomic swap of the queue's busy word that every burst does
// anyway detects it, so the ring is never corrupted silently.
//
// A TX queue refuses, frees and counts as CauseUnreachable a buffer whose
// pool lives in memory mapped for another DMA domain (another IOMMU
// container, another device's mapper), which the device would fault on; the
// FEC also refuses a buffer above 4 GiB, which its 32-bit descriptors cannot
// address.
package driver
