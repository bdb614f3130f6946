package pci

import (
	"fmt"
	"unsafe"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/pci/internal/vfio"
)

// VFIOPlatformIRQ is interrupt i of a device bound to vfio-platform: IRQ
// index i, the node's i-th interrupt in device-tree order, one vector
// (drivers/vfio/platform). A level-triggered line is automasked: the
// kernel masks it each time it fires, and Unmask re-enables it
// (VFIO_DEVICE_SET_IRQS with ACTION_UNMASK), as a write of 1 does for
// uio_pdrv_genirq.
type VFIOPlatformIRQ struct {
	*VFIOIRQ
	automasked bool
}

// Unmask re-enables an automasked line; a no-op for an edge-triggered one.
func (q *VFIOPlatformIRQ) Unmask() error {
	if !q.automasked {
		return nil
	}
	buf := unmaskBuf(q.index)
	if _, err := vfio.Ioctl(q.dev.fd, vfio.DeviceSetIRQs, unsafe.Pointer(&buf[0]), "VFIO_DEVICE_SET_IRQS"); err != nil {
		return &DeviceError{Device: q.dev.Name, Op: fmt.Sprintf("unmask interrupt %d", q.index), Err: err}
	}
	return nil
}

// openPlatformIRQFunc is a vfio-platform device's driver.Device.OpenIRQ:
// interrupt i of the node, each of them (0..NumIRQs-1).
func (d *VFIODevice) openPlatformIRQFunc() func(i int) (driver.IRQ, error) {
	return func(i int) (driver.IRQ, error) {
		if i < 0 || uint32(i) >= d.Info.NumIRQs {
			return nil, &DeviceError{Device: d.Name, Op: fmt.Sprintf("open interrupt %d", i),
				Err: fmt.Errorf("vfio-platform reports %d interrupts for the node", d.Info.NumIRQs)}
		}
		info, err := d.IRQInfo(i)
		if err != nil {
			return nil, err
		}
		q, err := d.OpenIRQ(i, 0)
		if err != nil {
			return nil, err
		}
		return &VFIOPlatformIRQ{VFIOIRQ: q, automasked: info.Flags&vfio.IRQInfoAutomasked != 0}, nil
	}
}

// unmaskBuf is the vfio_irq_set that unmasks interrupt index: no data,
// action unmask, start 0, count 1 (vfio-platform takes nothing else).
func unmaskBuf(index int) []byte {
	buf := irqSetBuf(uint32(index), 0, nil, vfio.IRQSetDataNone|vfio.IRQSetActionUnmask)
	(*vfio.IRQSet)(unsafe.Pointer(&buf[0])).Count = 1
	return buf
}
