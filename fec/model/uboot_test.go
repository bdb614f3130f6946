package model

import (
	"testing"

	"github.com/gopmd/gopmd/internal/mii"
)

// TestUBootOpenSetsSpeedBeforeFirstRDAR replays U-Boot's bring-up on a
// gigabit ENET (drivers/net/fec_mxc.c: fecmxc_init with fec_reg_setup,
// then fec_open): the MAC is enabled (ECR.ETHEREN), the PHY started over
// MDIO, and only then are ECR.SPEED and RCR.RMII_10T set for the speed the
// PHY resolved, all before the first RDAR hands a ring to the DMA. The
// reference restricts only TCR.FDEN while the MAC runs, so this is no
// running reconfiguration; frames then pass both ways. The MIB clearing
// and FRSR writes U-Boot makes on older parts are left out (they are not
// part of the rule).
func TestUBootOpenSetsSpeedBeforeFirstRDAR(t *testing.T) {
	t.Parallel()
	for _, soc := range []string{"imx6q", "imx8mp"} {
		t.Run(soc, func(t *testing.T) {
			td := newTDrv(t, tOpts{soc: soc, nrx: 4, ntx: 4, noStart: true})
			d := td.d
			w := &capture{}
			d.SetWire(w)
			// fecmxc_init: MAC address, fec_reg_setup (no interrupts, EIR
			// cleared, RCR = 1518 max, FCE, MII_MODE, RGMII), MSCR, OPD,
			// TFWR, group hash, MRBR, TDSR, RDSR.
			d.Write32(regPALR, 0x02000000)
			d.Write32(regPAUR, 0x00010000)
			d.Write32(regEIMR, 0)
			d.Write32(regEIR, 0xFFFFFFFF)
			d.Write32(regRCR, 1518<<rcr_MAX_FL_SHIFT|1<<5|1<<2|1<<6)
			d.Write32(regMSCR, 0x1A)
			d.Write32(regOPD, 0x00010020)
			d.Write32(regTFWR, 0x2)
			d.Write32(regGAUR, 0)
			d.Write32(regGALR, 0)
			d.Write32(regMRBR, 1536)
			d.Write32(regTDSR, uint32(td.ring.IOVAAt(td.txBD(0, 0))))
			d.Write32(regRDSR, uint32(td.ring.IOVAAt(td.rxBD(0, 0))))
			// fec_open: full duplex, DBSWP, store and forward, ETHEREN.
			d.Write32(regTCR, 1<<2)
			d.Write32(regECR, d.Read32(regECR)|ecr_DBSWP)
			d.Write32(regTFWR, d.Read32(regTFWR)|tfwr_STRFWD)
			d.Write32(regECR, d.Read32(regECR)|ecr_ETHEREN)
			// phy_startup: BMSR over MDIO.
			d.Write32(regEIR, eir_MII)
			d.Write32(regMMFR, 0x60020000|uint32(d.phy.addr)<<23|mii.BMSR<<18)
			if d.Read32(regEIR)&eir_MII == 0 || d.Read32(regMMFR)&mii.BMSR_LINK == 0 {
				t.Fatalf("PHY BMSR %#x: no link", d.Read32(regMMFR)&0xFFFF)
			}
			// The speed the PHY resolved (1000), then the first RDAR.
			d.Write32(regECR, d.Read32(regECR)&^ecr_SPEED|ecr_SPEED)
			d.Write32(regRCR, d.Read32(regRCR)&^rcr_RMII_10T)
			d.Write32(regRDAR, 0)
			if st := d.Stats(); st.RunningReconfig != 0 || st.ModelErrors != 0 {
				t.Fatalf("U-Boot's fec_open flagged: %d running reconfigurations, %d model errors: %v", st.RunningReconfig, st.ModelErrors, d.LastModelError())
			}
			out := testFrame([6]byte{2, 0, 0, 0, 0, 9}, 60, 1)
			td.send(0, out)
			if got := w.get(); len(got) != 1 {
				t.Fatalf("%d frames on the wire, want 1", len(got))
			} else {
				mustEqual(t, "TX frame", got[0][:len(out)], out)
			}
			in := testFrame(ourMAC, 60, 2)
			if !d.Receive(in) {
				t.Fatal("RX frame not taken")
			}
			f, ok := td.recv(0)
			if !ok {
				t.Fatal("no RX frame in the ring")
			}
			mustEqual(t, "RX frame", f.data[:len(in)], in)
			// Once the DMA owns a ring the rule holds: a speed change
			// without a graceful stop is a running reconfiguration.
			d.Write32(regECR, d.Read32(regECR)&^ecr_SPEED)
			if n := d.Stats().RunningReconfig; n != 1 {
				t.Fatalf("speed change with the ring given to the DMA: %d running reconfigurations, want 1", n)
			}
		})
	}
}

// TestSpeedRuleStartsAtFirstRing: ECR.SPEED and RCR.RMII_10T may change
// while ETHEREN is set until RDAR or TDAR hands a ring to the DMA; from
// then until ETHEREN is cleared (or TX gracefully stopped) a change counts
// as a running reconfiguration. TCR.FDEN counts whenever ETHEREN is set.
func TestSpeedRuleStartsAtFirstRing(t *testing.T) {
	t.Parallel()
	td := newTDrv(t, tOpts{soc: "imx8mp", noStart: true})
	d := td.d
	flip := func() {
		d.Write32(regECR, d.Read32(regECR)^ecr_SPEED)
		d.Write32(regRCR, d.Read32(regRCR)^rcr_RMII_10T)
	}
	d.Write32(regECR, d.Read32(regECR)|ecr_ETHEREN)
	flip()
	if n := d.Stats().RunningReconfig; n != 0 {
		t.Fatalf("speed changes before the first RDAR counted: %d", n)
	}
	d.Write32(regRDAR, 0)
	flip()
	if n := d.Stats().RunningReconfig; n != 2 {
		t.Fatalf("speed changes after RDAR: %d running reconfigurations, want 2", n)
	}
	// A restart (ETHEREN cleared and set) starts over.
	d.Write32(regECR, d.Read32(regECR)&^ecr_ETHEREN)
	d.Write32(regECR, d.Read32(regECR)|ecr_ETHEREN)
	flip()
	if n := d.Stats().RunningReconfig; n != 2 {
		t.Fatalf("speed changes after a restart, before RDAR, counted: %d", n)
	}
	d.Write32(regTDAR, 0)
	flip()
	if n := d.Stats().RunningReconfig; n != 4 {
		t.Fatalf("speed changes after TDAR: %d running reconfigurations, want 4", n)
	}
	d.Write32(regTCR, d.Read32(regTCR)^1<<2)
	if n := d.Stats().RunningReconfig; n != 5 {
		t.Fatalf("TCR.FDEN change with ETHEREN set: %d running reconfigurations, want 5", n)
	}
}
