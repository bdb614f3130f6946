package enetc_test

import (
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/enetc"
)

// TestVFSetMACThroughPF: a VF of a started gopmd PF sets its MAC by asking
// the PF (VSI-to-PSI message): the PF writes PSIPMAR0/1(1), the VF's
// SIPMAR shows it, and the port filter of the PF's model sees the VF's
// address there.
func TestVFSetMACThroughPF(t *testing.T) {
	pf := openSim(t, "", pcsCfg)
	vf := openSim(t, "vf=1&pf="+strings.TrimPrefix(strings.Split(pf.spec, "?")[0], "sim:"), pcsCfg)
	mac := net.HardwareAddr{0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0x01}
	if err := vf.port.SetMAC(mac); err != nil {
		t.Fatalf("VF SetMAC: %v", err)
	}
	if vf.port.MAC().String() != mac.String() {
		t.Fatalf("VF MAC %v after SetMAC", vf.port.MAC())
	}
	lo, hi := pf.model.Read32(0x10108), pf.model.Read32(0x1010C)
	if lo != 0xccbbaa02 || hi != 0x01dd {
		t.Fatalf("PF PSIPMAR0/1(1) = %#x/%#x", lo, hi)
	}
	if vf.model.Read32(0x80) != lo || vf.model.Read32(0x84) != hi {
		t.Fatal("the VF's SIPMAR does not show what the PF set")
	}
	if pf.port.VFMessages() != 1 {
		t.Fatalf("PF answered %d messages, want 1", pf.port.VFMessages())
	}
	// A multicast address is refused before any message.
	if err := vf.port.SetMAC(net.HardwareAddr{0x01, 0, 0x5e, 0, 0, 1}); err == nil || !strings.Contains(err.Error(), "multicast") {
		t.Fatalf("multicast VF MAC: %v", err)
	}
	vf.close(false)
	pf.close(false)
}

// TestVFSetMACWithoutPF: with no PF answering (a standalone VF, or a PF
// that is not started) SetMAC fails with ErrNoPFAnswer saying what to do,
// and the MAC stays what it was.
func TestVFSetMACWithoutPF(t *testing.T) {
	vf := openSim(t, "vf=1", pcsCfg)
	before := vf.port.MAC()
	err := vf.port.SetMAC(net.HardwareAddr{0x02, 1, 2, 3, 4, 5})
	if !errors.Is(err, enetc.ErrNoPFAnswer) || !strings.Contains(err.Error(), "02:01:02:03:04:05") || !strings.Contains(err.Error(), "ip link set") || !strings.Contains(err.Error(), "start the PF") {
		t.Fatalf("SetMAC with no PF: %v", err)
	}
	if vf.port.MAC().String() != before.String() {
		t.Fatalf("MAC changed to %v after a failed SetMAC", vf.port.MAC())
	}
	// The busy message is still pending: a second SetMAC says so at once.
	if err := vf.port.SetMAC(net.HardwareAddr{0x02, 1, 2, 3, 4, 6}); !errors.Is(err, enetc.ErrNoPFAnswer) || !strings.Contains(err.Error(), "unanswered") {
		t.Fatalf("second SetMAC with no PF: %v", err)
	}
	vf.close(false)

	pf := openSim(t, "", pcsCfg)
	if err := pf.port.Stop(); err != nil {
		t.Fatal(err)
	}
	vf = openSim(t, "vf=1&pf="+strings.TrimPrefix(strings.Split(pf.spec, "?")[0], "sim:"), pcsCfg)
	if err := vf.port.SetMAC(net.HardwareAddr{0x02, 1, 2, 3, 4, 7}); !errors.Is(err, enetc.ErrNoPFAnswer) {
		t.Fatalf("SetMAC with the PF stopped: %v", err)
	}
	vf.close(false)
	pf.close(false)
}

// TestVFMACOptionNeedsPF: mac= on a VF is a request to the PF at open:
// without a PF the open fails naming ErrNoPFAnswer; with one it works.
func TestVFMACOptionNeedsPF(t *testing.T) {
	_, err := driver.OpenConfig("sim:enetc93?vf=1&mac=02:00:00:00:09:03&link-poll=0", pcsCfg)
	if !errors.Is(err, enetc.ErrNoPFAnswer) {
		t.Fatalf("VF with mac= and no PF: %v", err)
	}
	pf := openSim(t, "", pcsCfg)
	vf := openSim(t, "vf=1&mac=02:00:00:00:09:04&pf="+strings.TrimPrefix(strings.Split(pf.spec, "?")[0], "sim:"), pcsCfg)
	if vf.port.MAC().String() != "02:00:00:00:09:04" {
		t.Fatalf("VF MAC %v", vf.port.MAC())
	}
	vf.close(false)
	pf.close(false)
}

// TestVFRingsFromGopmdPF: a gopmd PF keeps 8 rings each way and splits the
// rest of the port's over its two VF SIs, as Linux's
// enetc_port_si_configure does; a VF opened after it owns its share.
func TestVFRingsFromGopmdPF(t *testing.T) {
	pf := openSim(t, "", pcsCfg)
	if got := pf.model.Read32(0x10940 + 0xC); got != 4|4<<16 {
		t.Fatalf("PSICFGR0(1) = %#x after the PF started, want 4 TX | 4 RX", got)
	}
	if got := pf.model.Read32(0x10940 + 2*0xC); got != 4|4<<16 {
		t.Fatalf("PSICFGR0(2) = %#x after the PF started, want 4 TX | 4 RX", got)
	}
	vf := openSim(t, "vf=1&pf="+strings.TrimPrefix(strings.Split(pf.spec, "?")[0], "sim:"), pcsCfg)
	if in := vf.port.Info(); in.MaxTxQueues != 4 || in.MaxRxQueues != 4 {
		t.Fatalf("VF owns %d TX / %d RX rings, want 4 / 4", in.MaxTxQueues, in.MaxRxQueues)
	}
	if in := pf.port.Info(); in.MaxTxQueues != 8 || in.MaxRxQueues != 8 {
		t.Fatalf("PF owns %d TX / %d RX rings, want 8 / 8", in.MaxTxQueues, in.MaxRxQueues)
	}
	vf.close(false)
	pf.close(false)
}

// TestVFWithoutRings: a VF whose PF assigned it no ring (PSICFGR0(VF+1)
// zero: a PF reset and not started again, or one that kept every ring)
// fails to open with an error naming its PF and what to do.
func TestVFWithoutRings(t *testing.T) {
	pf := openSim(t, "", pcsCfg)
	pfName := strings.TrimPrefix(strings.Split(pf.spec, "?")[0], "sim:")
	pf.model.Write32(0x10940+0xC, 0)
	pf.model.Write32(0x10940+2*0xC, 0)
	p, err := driver.OpenConfig("sim:enetc94?vf=1&link-poll=0&pf="+pfName+"&chip="+testChip(t), pcsCfg)
	if err == nil {
		p.Close()
		t.Fatal("a VF with no rings opened")
	}
	for _, want := range []string{"owns 0 TX and 0 RX rings", "its PF (" + pfName + ")", "PSICFGR0(VF+1)", "open that PF with gopmd first", "fsl-enetc"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("VF with no rings: %v\nwant it to say %q", err, want)
		}
	}
	pf.close(false)
}

// TestPortMemoriesZeroed: a PF's open writes every entry of the port's RFS
// memory and its whole RSS memory, as Linux's enetc_psi_create does at PF
// probe, even with one RX queue (no RSS of its own); the model counts no
// entry left unwritten since its power-on.
func TestPortMemoriesZeroed(t *testing.T) {
	s := openSim(t, "", pcsCfg)
	if rfs, rss := s.model.UninitializedMemories(); rfs != 0 || rss != 0 {
		t.Fatalf("after the PF opened: %d RFS and %d RSS entries never written", rfs, rss)
	}
	s.close(false)
}
