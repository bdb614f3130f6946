package enetc

import (
	"fmt"

	"github.com/gopmd/gopmd/driver"
)

// The IERB (docs/hardware-enetc.md §2.7) holds, per port, the TX byte
// credit (TXBCR), the TX memory allocation (TXMBAR) and the RX credit
// (RXBCR) of the ENETC's shared FIFO, and the chip's free-buffer depletion
// threshold (FMBDTR). Their power-on values assume frames of at most 1536
// bytes; Linux's fsl-enetc-ierb driver writes FMBDTR when it probes the
// IERB, and the three per-port values, sized for 9600-byte frames, when
// fsl-enetc probes that port's PF (enetc_ierb_register_pf). The PF loads
// them at its next FLR and cannot write them. The IERB is platform MMIO
// outside every BAR, so gopmd, reaching the PF through VFIO, cannot set
// them: a PF whose longest frame exceeds 1536 bytes is refused unless
// ierb=prepared says the kernel did it.

// ierbFrameMax is the longest frame the IERB's power-on values are sized
// for (Linux enetc_ierb.c: the power-on TX credit assumes 1536 bytes).
const ierbFrameMax = 1536

// parseIERB reads ierb=.
func (p *Port) parseIERB() error {
	o := p.dev.Spec.Options
	if o == nil || !o.Has("ierb") {
		return nil
	}
	v := o.Get("ierb")
	if v != "prepared" {
		return driver.BadOption("ierb", v, "not a state of the IERB gopmd knows", "prepared (Linux's fsl-enetc probed this PF since the IERB was last reset, so its FIFO credits are sized for jumbo frames)")
	}
	if !p.pf {
		return driver.BadOption("ierb", v, "a VF's frames are bounded by its PF", "no ierb= on a VF; give it to the PF")
	}
	p.ierbPrepared = true
	return nil
}

// checkJumbo refuses an MTU whose frames exceed what the IERB's power-on
// values are sized for on a PF, unless ierb=prepared.
func (p *Port) checkJumbo(mtu int) error {
	if !p.pf || p.ierbPrepared || mtu+ethOverhead <= ierbFrameMax {
		return nil
	}
	return fmt.Errorf("MTU %d means frames of up to %d bytes, and the IERB's power-on TX credit and TX memory allocation for this port are sized for %d: the IERB (platform MMIO at 0x1F0800000) is in no BAR of the PF, so gopmd cannot set them. Linux's fsl-enetc sets them for jumbo frames when it probes the PF (with the fsl-enetc-ierb driver bound to the IERB's device-tree node), and the PF loads them at the FLR that opening it through VFIO performs: let fsl-enetc probe this PF once after boot before binding it to vfio-pci (nicctl bind; not vfio-pci.ids= or a driver_override at boot), then give ierb=prepared; or use an MTU of at most %d", mtu, mtu+ethOverhead, ierbFrameMax, ierbFrameMax-ethOverhead)
}
