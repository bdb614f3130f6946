package model

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// The VSI-to-PSI mailbox (docs/hardware-enetc.md §2.10): a VF sends its PF
// a message of up to 1024 bytes from its own memory; the device copies it
// into the PF's receive buffer for that VF and flags it in PSIMSGRR; the
// PF answers by writing a code into PSIMSGRR with the VF's flag (write 1
// to clear), which the VF sees in VSIMSGSR.

// MaxVFs is how many VFs a PF has (ENETC_MAX_NUM_VFS: PF0 and PF1 have two).
const MaxVFs = 2

// MsgMaxSize is the largest message (and the PF's receive buffer size).
const MsgMaxSize = 1024

// Mailbox register bits.
const (
	vsimsgsr_MB    = 1 << 0 // VF: message busy (sent, no answer yet)
	vsimsgsr_MS    = 1 << 1 // VF: the PF answered with an error code
	msgCodeShift   = 16     // message code, bits 31:16 of PSIMSGRR / VSIMSGSR
	msgSizeMask    = 0x1F   // SNDAR0 bits 4:0: size / 32, 0 meaning 1024
	psimsgrr_MMASK = 0x6    // PF: MR bits of VSI 1 and 2
)

// mailbox is a device's side of it.
type mailbox struct {
	mu sync.Mutex
	// VF side.
	parent   atomic.Pointer[Device] // the PF answering this VF
	vsi      int                    // VF index at the PF (0 or 1)
	vsimsgsr atomic.Uint32
	pending  bool // a message waits for a PF receive buffer
	src      uint64
	size     int
	// PF side.
	vfs [MaxVFs]atomic.Pointer[Device]
}

// AttachVF makes vf the PF's VF number n (0 or 1): its messages reach d,
// and what d writes into PSIPMAR0/1(n+1) becomes vf's SIPMAR0/1.
func (d *Device) AttachVF(vf *Device, n int) error {
	if !d.pf || vf.pf {
		return fmt.Errorf("enetc model: AttachVF(%s to %s): needs a VF attached to a PF", vf.name, d.name)
	}
	if n < 0 || n >= MaxVFs {
		return fmt.Errorf("enetc model: AttachVF(%s, %d): a PF has VFs 0 and 1", vf.name, n)
	}
	if !d.mbox.vfs[n].CompareAndSwap(nil, vf) {
		return fmt.Errorf("enetc model: %s already has a VF %d (%s)", d.name, n, d.mbox.vfs[n].Load().name)
	}
	vf.mbox.vsi = n
	vf.mbox.parent.Store(d)
	return nil
}

// DetachVF undoes AttachVF (the VF's function goes away).
func (d *Device) DetachVF(vf *Device) {
	for i := range d.mbox.vfs {
		d.mbox.vfs[i].CompareAndSwap(vf, nil)
	}
	vf.mbox.parent.CompareAndSwap(d, nil)
}

// vfSend is a VF's write of VSIMSGSNDAR0: the message at SNDAR1:SNDAR0's
// address, of the size its low bits encode, goes to the PF.
func (d *Device) vfSend(v uint32) {
	m := &d.mbox
	m.mu.Lock()
	if m.vsimsgsr.Load()&vsimsgsr_MB != 0 {
		m.mu.Unlock()
		d.recordErr("VSIMSGSNDAR0 written while the previous message is still busy (VSIMSGSR.MB): wait for the PF's answer first")
		return
	}
	size := int(v&msgSizeMask) * 32
	if size == 0 {
		size = MsgMaxSize
	}
	m.src = uint64(d.get(regPSIVMSGRCVAR1))<<32 | uint64(v&^msgSizeMask)
	m.size = size
	m.pending = true
	m.vsimsgsr.Store(vsimsgsr_MB)
	m.mu.Unlock()
	if pf := m.parent.Load(); pf != nil {
		pf.deliverMsg(m.vsi)
	}
}

// deliverMsg copies VF n's pending message into the PF's receive buffer for
// it, if the PF has set one, and flags it in PSIMSGRR and PSIIDR.
func (d *Device) deliverMsg(n int) {
	vf := d.mbox.vfs[n].Load()
	if vf == nil {
		return
	}
	dst := uint64(d.get(regPSIVMSGRCVAR1+8*uint32(n)))<<32 | uint64(d.get(regPSIVMSGRCVAR0+8*uint32(n)))
	if dst == 0 {
		return // no receive buffer yet: the message waits
	}
	m := &vf.mbox
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.pending {
		return
	}
	buf := make([]byte, m.size)
	if !vf.iommu.Read(m.src, buf) {
		vf.recordErr("VF message at IOVA %#x (%d bytes) is not mapped", m.src, m.size)
	} else if !d.iommu.Write(dst&^msgSizeMask, buf) {
		d.recordErr("PF receive buffer for VF %d at IOVA %#x cannot take %d bytes", n, dst, m.size)
	}
	m.pending = false
	bit := uint32(1) << (n + 1)
	d.regs[regPSIMSGRR>>2].Or(bit)
	d.regs[regPSIIDR>>2].Or(bit)
}

// pfAnswer is the PF's write of PSIMSGRR: each set MR bit clears and its
// VF's VSIMSGSR gets the code of bits 31:16, MB cleared, MS set for a code
// other than 0 (Linux's ENETC_MSG_CMD_STATUS_OK).
func (d *Device) pfAnswer(v uint32) {
	code := v >> msgCodeShift
	for n := 0; n < MaxVFs; n++ {
		bit := uint32(1) << (n + 1)
		if v&bit == 0 || d.get(regPSIMSGRR)&bit == 0 {
			continue
		}
		d.regs[regPSIMSGRR>>2].And(^bit)
		if vf := d.mbox.vfs[n].Load(); vf != nil {
			st := code << msgCodeShift
			if code != 0 {
				st |= vsimsgsr_MS
			}
			vf.mbox.vsimsgsr.Store(st)
		}
	}
}

// pfSetVFMAC mirrors a PF write of PSIPMAR0/1(n), n >= 1, into VF n-1's
// SIPMAR0/1.
func (d *Device) pfSetVFMAC(off, v uint32) {
	si := int((off - regPSIPMAR0) / PSIPMARStride)
	if si < 1 || si > MaxVFs {
		return
	}
	if vf := d.mbox.vfs[si-1].Load(); vf != nil {
		vf.set(regSIPMAR0+(off-regPSIPMAR0)%PSIPMARStride, v)
	}
}
