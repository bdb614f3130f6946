package pci

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/irqfd"
	"github.com/gopmd/gopmd/pci/internal/vfio"
)

// VFIOIRQ is one interrupt vector routed to an eventfd with
// VFIO_DEVICE_SET_IRQS: a driver.IRQ. A message-signalled interrupt is an
// edge no controller holds masked, so Unmask does nothing.
type VFIOIRQ struct {
	*irqfd.Eventfd
	dev           *VFIODevice
	index, vector int
	once          sync.Once
}

// OpenIRQ routes vector of interrupt index (vfio.PCIMSIIRQIndex,
// vfio.PCIMSIXIRQIndex) to a fresh eventfd. VFIO enables MSI/MSI-X with
// the vectors 0..vector on the first call; a kernel without dynamic MSI-X
// refuses a later vector past those, so open a device's vectors highest
// first or all at once (EnableIRQs).
func (d *VFIODevice) OpenIRQ(index, vector int) (*VFIOIRQ, error) {
	info, err := d.IRQInfo(index)
	if err != nil {
		return nil, err
	}
	if vector < 0 || uint32(vector) >= info.Count || info.Flags&vfio.IRQInfoEventfd == 0 {
		return nil, &DeviceError{Device: d.Name, Op: fmt.Sprintf("route IRQ index %d vector %d", index, vector),
			Err: fmt.Errorf("the index has %d vectors (flags %#x)", info.Count, info.Flags)}
	}
	e, err := irqfd.NewEventfd()
	if err != nil {
		return nil, &DeviceError{Device: d.Name, Op: "interrupt", Err: err}
	}
	buf := irqSetBuf(uint32(index), uint32(vector), []int32{int32(e.FD())}, vfio.IRQSetDataEventfd|vfio.IRQSetActionTrigger)
	if _, err := vfio.Ioctl(d.fd, vfio.DeviceSetIRQs, unsafe.Pointer(&buf[0]), "VFIO_DEVICE_SET_IRQS"); err != nil {
		e.Close()
		return nil, &DeviceError{Device: d.Name, Op: fmt.Sprintf("route IRQ index %d vector %d to an eventfd", index, vector), Err: err}
	}
	return &VFIOIRQ{Eventfd: e, dev: d, index: index, vector: vector}, nil
}

// Close takes the vector's eventfd back from VFIO (an fd of -1 unroutes
// it) and closes it; a second Close returns nil.
func (q *VFIOIRQ) Close() error {
	var err error
	q.once.Do(func() {
		buf := irqSetBuf(uint32(q.index), uint32(q.vector), []int32{-1}, vfio.IRQSetDataEventfd|vfio.IRQSetActionTrigger)
		if _, e := vfio.Ioctl(q.dev.fd, vfio.DeviceSetIRQs, unsafe.Pointer(&buf[0]), "VFIO_DEVICE_SET_IRQS"); e != nil {
			err = &DeviceError{Device: q.dev.Name, Op: fmt.Sprintf("unroute IRQ index %d vector %d", q.index, q.vector), Err: e}
		}
		err = errors.Join(err, q.Eventfd.Close())
	})
	return err
}

// openIRQFunc is a PCI device's driver.Device.OpenIRQ: MSI-X vector i where
// the function has MSI-X, else MSI vector i.
func (d *VFIODevice) openIRQFunc() func(i int) (driver.IRQ, error) {
	return func(i int) (driver.IRQ, error) {
		index := vfio.PCIMSIXIRQIndex
		if info, err := d.IRQInfo(index); err != nil || info.Count == 0 {
			index = vfio.PCIMSIIRQIndex
		}
		q, err := d.OpenIRQ(index, i)
		if err != nil {
			return nil, err
		}
		return q, nil
	}
}
