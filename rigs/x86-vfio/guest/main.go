// Command gopmd-rig runs as root inside the x86-vfio rig's guest (q35 with
// an emulated Intel IOMMU, QEMU's edu and ivshmem-plain devices) and drives
// edu through gopmd's own pci and dma packages:
//
//   - finds edu in the inventory and binds it to vfio-pci (pci.Sys.Bind);
//   - opens it with the "pci" backend (type1 container, BAR0 window, bus
//     mastering), allocates DMA memory with dma.Alloc through the
//     container, routes edu's MSI to an eventfd;
//   - has edu's DMA engine copy RAM -> edu -> RAM through the IOMMU and
//     compares the bytes; aims one DMA at an IOVA nothing is mapped at and
//     finds the IOMMU's fault for that address in the kernel log;
//   - opens ivshmem-plain as a second device in the same container;
//   - times a per-packet map + unmap of one buffer through the container
//     against a recycle through a pool mapped once (mapcost.go);
//   - moves edu to uio_pci_generic and repeats register access and a DMA
//     with physical addresses from pagemap (unsafe-noiommu);
//   - pairs QEMU's NVMe controller (SR-IOV, one VF) as a PF on vfio-pci
//     with its VF through a VF token (vftoken.go).
//
// It prints one PASS, FAIL or INFO line per check and a RESULT line.
package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gopmd/gopmd/dma"
	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/irqfd"
	"github.com/gopmd/gopmd/pci"
)

// edu registers (QEMU docs/specs/edu.rst).
const (
	eduID       = 0x00
	eduLiveness = 0x04
	eduIRQStat  = 0x24
	eduIRQAck   = 0x64
	eduDMASrc   = 0x80
	eduDMADst   = 0x88
	eduDMACount = 0x90
	eduDMACmd   = 0x98
	eduBuf      = 0x40000 // edu's 4 KiB internal buffer, as a DMA address

	cmdStart = 1
	cmdToRAM = 2
	cmdIRQ   = 4

	// edu's DMA mask is 28 bits.
	eduDMALimit = 1<<28 - 1
	// QEMU 7.2's edu aborts on a transfer that ends exactly at the end of
	// its buffer (an off-by-one in its range check): move 2 KiB.
	xfer = 2048
)

var failures int

func pass(name, f string, a ...any) { fmt.Printf("PASS %s: %s\n", name, fmt.Sprintf(f, a...)) }
func info(name, f string, a ...any) { fmt.Printf("INFO %s: %s\n", name, fmt.Sprintf(f, a...)) }
func fail(name, f string, a ...any) {
	failures++
	fmt.Printf("FAIL %s: %s\n", name, fmt.Sprintf(f, a...))
}

func finish() {
	if failures == 0 {
		fmt.Println("GOPMD-RIG RESULT: PASS")
		os.Exit(0)
	}
	fmt.Printf("GOPMD-RIG RESULT: FAIL (%d)\n", failures)
	os.Exit(1)
}

func find(inv []*pci.Device, vendor, device uint16) *pci.Device {
	for _, d := range inv {
		if d.VendorID == vendor && d.DeviceID == device {
			return d
		}
	}
	return nil
}

// runDMA programs one edu transfer and waits for the engine to finish.
func runDMA(w *pci.Window, src, dst uint64, cmd uint32) bool {
	w.Write64(eduDMASrc, src)
	w.Write64(eduDMADst, dst)
	w.Write64(eduDMACount, xfer)
	dma.DoorbellBarrier() // the buffer contents before the start bit
	w.Write32(eduDMACmd, cmd|cmdStart)
	for t0 := time.Now(); time.Since(t0) < 10*time.Second; time.Sleep(time.Millisecond) {
		if w.Read32(eduDMACmd)&cmdStart == 0 {
			return true
		}
	}
	return false
}

func pattern(seed byte) []byte {
	p := make([]byte, xfer)
	for i := range p {
		p[i] = byte(i*7) + seed
	}
	copy(p, "GOPMD-DMA-THROUGH-pci-AND-dma")
	return p
}

// kmsgLine returns the first kernel log record containing s, "" if none.
func kmsgLine(s string) string {
	fd, err := unix.Open("/dev/kmsg", unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return ""
	}
	defer unix.Close(fd)
	buf := make([]byte, 8192)
	for {
		n, err := unix.Read(fd, buf)
		if err == unix.EPIPE {
			continue
		}
		if err != nil || n <= 0 {
			return ""
		}
		if i := bytes.Index(buf[:n], []byte(s)); i >= 0 {
			rec := string(buf[:n])
			if _, msg, ok := strings.Cut(rec, ";"); ok {
				return msg
			}
			return rec
		}
	}
}

// dumpSysfs prints the PCI part of sysfs as the kernel shows it before
// gopmd binds anything, one "SYSFS" line per directory, file or symlink
// (values Go-quoted); run.sh collects them into sysfs.txt, the source of
// pci/testdata/x86-rig-sysfs.txt.
func dumpSysfs() {
	emit := func(kind, p, v string) { fmt.Printf("SYSFS %s %s %s\n", kind, p, strconv.Quote(v)) }
	link := func(p string) {
		if t, err := os.Readlink(p); err == nil {
			emit("l", p, t)
		}
	}
	file := func(p string) {
		if b, err := os.ReadFile(p); err == nil {
			emit("f", p, string(b))
		}
	}
	emit("f", "/sys/bus/pci/drivers_probe", "")
	drvs, _ := os.ReadDir("/sys/bus/pci/drivers")
	for _, d := range drvs {
		for _, a := range []string{"bind", "unbind", "new_id"} {
			if _, err := os.Stat("/sys/bus/pci/drivers/" + d.Name() + "/" + a); err == nil {
				emit("f", "/sys/bus/pci/drivers/"+d.Name()+"/"+a, "")
			}
		}
	}
	devs, _ := os.ReadDir("/sys/bus/pci/devices")
	for _, d := range devs {
		l := "/sys/bus/pci/devices/" + d.Name()
		t, err := os.Readlink(l)
		if err != nil {
			continue
		}
		link(l)
		dir := path.Join(path.Dir(l), t)
		for _, a := range []string{"vendor", "device", "subsystem_vendor", "subsystem_device", "class", "revision", "driver_override", "numa_node", "resource", "modalias", "irq", "enable"} {
			file(dir + "/" + a)
		}
		link(dir + "/driver")
		link(dir + "/iommu_group")
	}
	groups, _ := os.ReadDir("/sys/kernel/iommu_groups")
	for _, g := range groups {
		members, _ := os.ReadDir("/sys/kernel/iommu_groups/" + g.Name() + "/devices")
		for _, m := range members {
			link("/sys/kernel/iommu_groups/" + g.Name() + "/devices/" + m.Name())
		}
	}
	if b, err := os.ReadFile("/proc/version"); err == nil {
		fmt.Printf("SYSFS # %s", b)
	}
}

func main() {
	dumpSysfs()
	inv, err := pci.Host.Inventory()
	if err != nil {
		fail("inventory", "%v", err)
		finish()
	}
	edu := find(inv, 0x1234, 0x11e8)
	if edu == nil {
		fail("inventory", "no edu (1234:11e8) among %d devices", len(inv))
		finish()
	}
	pass("inventory", "%d PCI functions; edu at %s, BAR0 %#x bytes, IOMMU group %s, driver %q", len(inv), edu.Address, edu.BARs[0].Size, edu.IOMMUGroup, edu.Driver)

	b, err := pci.Host.Bind(edu.Address, pci.DriverVFIO)
	if err != nil {
		fail("bind", "%v", err)
		finish()
	}
	pass("bind", "%s bound to %s through driver_override + drivers_probe (was %q)", edu.Address, b.Driver, b.Original)

	vfioChecks(edu)
	mapCostChecks(edu)

	// Same device, no IOMMU: uio_pci_generic and pagemap.
	if _, err := pci.Host.Bind(edu.Address, pci.DriverUIO); err != nil {
		fail("uio-bind", "%v", err)
		finish()
	}
	pass("uio-bind", "%s moved from vfio-pci to uio_pci_generic", edu.Address)
	uioChecks(edu)
	vfTokenChecks()
	finish()
}

func vfioChecks(edu *pci.Device) {
	spec, _ := driver.ParseSpec("pci:" + edu.Address.String())
	dev, err := pci.Host.OpenPCI(spec, driver.Config{})
	if err != nil {
		fail("open", "%v", err)
		finish()
	}
	defer dev.Release()
	vd := dev.Extra.(*pci.VFIODevice)
	c, ok := dev.Mapper.(*pci.Container)
	if !ok {
		fail("open", "mapper is %T (%s), want the type1 container", dev.Mapper, dev.Mapper.Name())
		finish()
	}
	pass("open", "backend %s, mapper %s, IOMMU page sizes %#x, IOVA ranges %v, device flags %#x, %d regions, reset %v",
		dev.Backend, c.Name(), c.PageSizes, c.Ranges, vd.Info.Flags, vd.Info.NumRegions, dev.Reset != nil)
	var cmd [2]byte
	vd.ConfigRead(4, cmd[:])
	if v := binary.LittleEndian.Uint16(cmd[:]); v&4 != 0 {
		pass("bus-master", "command register %#04x after open (Bus Master Enable set by the backend)", v)
	} else {
		fail("bus-master", "command register %#04x", v)
	}

	w := dev.Regions[0].(*pci.Window)
	id := w.Read32(eduID)
	w.Write32(eduLiveness, 0x12345678)
	live := w.Read32(eduLiveness)
	if id&0xff == 0xed && live == ^uint32(0x12345678) {
		pass("bar0", "%s: %#x bytes; id %#08x, liveness ~0x12345678 = %#08x", w.Name(), w.Size(), id, live)
	} else {
		fail("bar0", "id %#08x liveness %#08x", id, live)
	}
	if v := w.Read32(uint32(w.Size())); v != 0xffffffff || w.Err() == nil {
		fail("bar0-bounds", "read past the BAR gave %#x, err %v", v, w.Err())
	} else {
		pass("bar0-bounds", "read at the BAR's end refused: %v", w.Err())
	}

	c.DMALimit = eduDMALimit
	r, err := dma.Alloc(c, 2<<20, dma.Options{Attr: dma.Attr{Name: "edu-buf", Contiguous: true}})
	if err != nil {
		fail("dma-map", "%v", err)
		finish()
	}
	pass("dma-map", "%d bytes (huge page: %v) mapped through %s at IOVA %#x", r.Len(), r.Huge(), c.Name(), r.IOVA())

	efds, err := vd.EnableIRQs(1, 0, 1) // MSI vector 0
	if err != nil {
		info("irq", "%v", err)
	}

	mem := r.Bytes()
	p := pattern(3)
	copy(mem, p)
	clear(mem[4096 : 4096+xfer])
	ok1 := runDMA(w, r.IOVA(), eduBuf, 0)
	ok2 := runDMA(w, eduBuf, r.IOVA()+4096, cmdToRAM|cmdIRQ)
	if ok1 && ok2 && bytes.Equal(mem[4096:4096+xfer], p) {
		pass("edu-dma", "%d bytes RAM(IOVA %#x) -> edu -> RAM(IOVA %#x) match", xfer, r.IOVA(), r.IOVA()+4096)
	} else {
		fail("edu-dma", "done %v/%v, bytes back %q", ok1, ok2, mem[4096:4096+24])
	}
	if len(efds) == 1 {
		pfd := []unix.PollFd{{Fd: int32(efds[0]), Events: unix.POLLIN}}
		n, _ := unix.Poll(pfd, 2000)
		var cnt [8]byte
		if n == 1 {
			unix.Read(efds[0], cnt[:])
		}
		st := w.Read32(eduIRQStat)
		w.Write32(eduIRQAck, st)
		if n == 1 {
			pass("irq", "MSI delivered to the eventfd (count %d), edu status %#x", binary.NativeEndian.Uint64(cnt[:]), st)
		} else {
			fail("irq", "no MSI within 2 s (edu status %#x)", st)
		}
		vd.DisableIRQs(1)
	}

	// The same MSI through the path the drivers take: a driver.IRQ from
	// the backend's OpenIRQ (one VFIO_DEVICE_SET_IRQS per vector), polled
	// and acknowledged through its descriptor.
	if irq, err := vd.OpenIRQ(1, 0); err != nil {
		fail("irq-driver", "open MSI vector 0: %v", err)
	} else {
		var h driver.IRQ = irq
		if n, _ := h.Ack(); n != 0 {
			fail("irq-driver", "a fresh handle had %d interrupts pending", n)
		}
		clear(mem[4096 : 4096+xfer])
		ok := runDMA(w, eduBuf, r.IOVA()+4096, cmdToRAM|cmdIRQ)
		fired, _ := irqfd.Poll([]unix.PollFd{{Fd: int32(h.FD())}}, 2000)
		n, _ := h.Ack()
		st := w.Read32(eduIRQStat)
		w.Write32(eduIRQAck, st)
		if err := h.Close(); err != nil {
			fail("irq-driver", "close: %v", err)
		}
		if ok && fired && n >= 1 {
			pass("irq-driver", "MSI through OpenIRQ's eventfd: %d interrupt acked, edu status %#x; unrouted on Close", n, st)
		} else {
			fail("irq-driver", "DMA done %v, descriptor readable %v, acked %d (edu status %#x)", ok, fired, n, st)
		}
	}

	iommuBlocks(w, r, p)

	// A second device in the same container.
	if iv := findIvshmem(); iv != nil {
		if _, err := pci.Host.Bind(iv.Address, pci.DriverVFIO); err != nil {
			fail("ivshmem", "%v", err)
		} else {
			s2, _ := driver.ParseSpec("pci:" + iv.Address.String())
			d2, err := pci.Host.OpenPCI(s2, driver.Config{})
			switch {
			case err != nil:
				fail("ivshmem", "%v", err)
			case d2.Mapper != dev.Mapper || !dma.SameDomain(d2.Mapper, dev.Mapper):
				fail("ivshmem", "second device got its own mapper (%p vs %p)", d2.Mapper, dev.Mapper)
				d2.Release()
			default:
				w2 := d2.Regions[2].(*pci.Window)
				host := make([]byte, 24)
				w2.ReadBytes(0, host)
				w2.WriteBytes(4096, []byte("GOPMD-IVSHMEM-FROM-GUEST"))
				pass("ivshmem", "%s in group %s shares the container; BAR2 %#x bytes; host wrote %q", iv.Address, iv.IOMMUGroup, w2.Size(), host)
				d2.Release()
			}
		}
	}

	if err := r.Close(); err != nil {
		fail("dma-unmap", "%v", err)
	} else {
		pass("dma-unmap", "region unmapped from the container")
	}
}

// iommuBlocks aims edu's DMA engine at an IOVA nothing is mapped at, chosen
// so that it is the physical address of a page of ours: without an IOMMU
// translating edu's addresses the write would land in that page. The
// block shows as the page left untouched, the IOMMU's fault for exactly
// that address and edu's BDF in the kernel log (absent before), and, as a
// control, the same transfer reaching memory at a mapped IOVA right after.
func iommuBlocks(w *pci.Window, r *dma.Region, p []byte) {
	var victim *dma.Region
	var spare []*dma.Region
	for i := 0; i < 256 && victim == nil; i++ {
		v, err := dma.Alloc(&dma.Pagemap{}, 4096, dma.Options{Attr: dma.Attr{Name: "victim"}, Hugepages: dma.HugeNever})
		if err != nil {
			fail("iommu-blocks", "victim page: %v", err)
			return
		}
		pa := v.IOVA()
		inMapped := pa+4096 > r.IOVA() && pa < r.IOVA()+uint64(r.Len())
		if pa+xfer-1 <= eduDMALimit && !inMapped {
			victim = v
		} else {
			spare = append(spare, v)
		}
	}
	for _, v := range spare {
		v.Close()
	}
	if victim == nil {
		fail("iommu-blocks", "no page below edu's 28-bit DMA limit outside the mapped IOVAs among 256")
		return
	}
	defer victim.Close()
	bad := victim.IOVA()
	vb := victim.Bytes()
	for i := range vb {
		vb[i] = 0x5a
	}
	want := fmt.Sprintf("fault addr %#x", bad)
	if kmsgLine(want) != "" {
		fail("iommu-blocks", "the kernel log has %q before the DMA", want)
		return
	}
	// edu's buffer still holds p from the round trip above.
	done := runDMA(w, eduBuf, bad, cmdToRAM)
	time.Sleep(50 * time.Millisecond)
	untouched := bytes.Count(vb, []byte{0x5a}) == len(vb)
	line := kmsgLine(want)
	bdf := "[00:01.0]"
	mem := r.Bytes()[8192 : 8192+xfer]
	clear(mem)
	ctl := runDMA(w, eduBuf, r.IOVA()+8192, cmdToRAM) && bytes.Equal(mem, p)
	switch {
	case !untouched:
		fail("iommu-blocks", "DMA to unmapped IOVA %#x reached the page at that physical address (IOMMU not translating?)", bad)
	case line == "" || !strings.Contains(line, "DMA Write") || !strings.Contains(line, bdf):
		fail("iommu-blocks", "no DMA Write fault for %s at %#x in the kernel log (found %q; engine done %v)", bdf, bad, line, done)
	case !ctl:
		fail("iommu-blocks", "the control transfer to mapped IOVA %#x did not arrive: the engine, not the IOMMU, may have failed", r.IOVA()+8192)
	default:
		pass("iommu-blocks", "DMA to unmapped IOVA %#x (= phys of our page, left untouched) blocked: %q; the same transfer to mapped IOVA %#x arrives", bad, strings.TrimSpace(line), r.IOVA()+8192)
	}
}

func findIvshmem() *pci.Device {
	inv, _ := pci.Host.Inventory()
	return find(inv, 0x1af4, 0x1110)
}

func uioChecks(edu *pci.Device) {
	spec, _ := driver.ParseSpec("pci:" + edu.Address.String())
	if _, err := pci.Host.OpenPCI(spec, driver.Config{}); err == nil || !strings.Contains(err.Error(), "unsafe-noiommu") {
		fail("uio-optin", "opened without opt-in: %v", err)
	} else {
		pass("uio-optin", "refused without opt-in: %v", err)
	}
	dev, err := pci.Host.OpenPCI(spec, driver.Config{UnsafeNoIOMMU: true})
	if err != nil {
		fail("uio-open", "%v", err)
		return
	}
	defer dev.Release()
	w := dev.Regions[0].(*pci.Window)
	w.Write32(eduLiveness, 0xcafe0000)
	if id, live := w.Read32(eduID), w.Read32(eduLiveness); id&0xff == 0xed && live == ^uint32(0xcafe0000) {
		pass("uio-bar0", "%s via sysfs resource0, backend %s, mapper %s: id %#08x liveness ok", w.Name(), dev.Backend, dev.Mapper.Name(), id)
	} else {
		fail("uio-bar0", "id %#08x liveness %#08x", id, live)
	}
	// DMA with physical addresses: two 4 KiB pages below edu's 28-bit limit.
	var src, dst *dma.Region
	var spare []*dma.Region
	for i := 0; i < 512 && (src == nil || dst == nil); i++ {
		r, err := dma.Alloc(dev.Mapper, 4096, dma.Options{Attr: dma.Attr{Name: "uio-page"}, Hugepages: dma.HugeNever})
		if err != nil {
			fail("uio-dma", "%v", err)
			return
		}
		switch {
		case r.IOVA()+4096 > eduDMALimit:
			spare = append(spare, r)
		case src == nil:
			src = r
		default:
			dst = r
		}
	}
	for _, r := range spare {
		r.Close()
	}
	if src == nil || dst == nil {
		info("uio-dma", "no two pages below 256 MiB among 512; skipped")
		return
	}
	p := pattern(9)
	copy(src.Bytes(), p)
	clear(dst.Bytes())
	ok1 := runDMA(w, src.IOVA(), eduBuf, 0)
	ok2 := runDMA(w, eduBuf, dst.IOVA(), cmdToRAM)
	if ok1 && ok2 && bytes.Equal(dst.Bytes()[:xfer], p) {
		pass("uio-dma", "%d bytes phys %#x -> edu -> phys %#x match (pagemap addresses, no IOMMU)", xfer, src.IOVA(), dst.IOVA())
	} else {
		fail("uio-dma", "done %v/%v bytes back %q", ok1, ok2, dst.Bytes()[:24])
	}
	src.Close()
	dst.Close()
}
