package xdp

import (
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// A veth reports its XDP features over the netdev family: native XDP
// with redirect and no AF_XDP zero-copy, so a port gets native mode and
// copies; Netdevs lists it and not loopback; a program attached shows.
func TestNetdevFeaturesAndPlan(t *testing.T) {
	v := newPair(t, false)
	ns, err := Netdevs()
	if err != nil {
		t.Fatal(err)
	}
	var n *Netdev
	for i := range ns {
		if ns[i].Name == "lo" {
			t.Errorf("Netdevs lists loopback")
		}
		if ns[i].Name == v.host {
			n = &ns[i]
		}
	}
	if n == nil {
		t.Fatalf("Netdevs does not list %s: %+v", v.host, ns)
	}
	t.Logf("%+v, features %v", *n, n.Features.Names())
	if n.FeaturesErr != "" {
		t.Skipf("this kernel reports no XDP features: %s", n.FeaturesErr)
	}
	if n.Driver != "veth" || !n.Up || n.RxQueues != 1 {
		t.Errorf("%s: driver %q, up %v, %d RX queues", v.host, n.Driver, n.Up, n.RxQueues)
	}
	if n.Features&(FeatureBasic|FeatureRedirect) != FeatureBasic|FeatureRedirect || n.Features&FeatureXSKZeroCopy != 0 {
		t.Errorf("veth features %v, want basic and redirect without xsk-zerocopy", n.Features.Names())
	}
	pl := n.Plan()
	if pl.Mode != "native" || pl.ZeroCopy != "no" || !strings.Contains(pl.ZeroCopyWhy, "xsk-zerocopy") || pl.Program != "" {
		t.Errorf("plan %+v", pl)
	}
	// Features with neither bit: generic mode, and why.
	g := Netdev{Name: "x", Driver: "dummy"}
	if pl := g.Plan(); pl.Mode != "generic" || pl.ZeroCopy != "no" || !strings.Contains(pl.ModeWhy, "dummy") {
		t.Errorf("plan without features %+v", pl)
	}
	u := Netdev{Name: "x", FeaturesErr: "old kernel"}
	if pl := u.Plan(); pl.ZeroCopy != "unknown" || !strings.Contains(pl.ModeWhy, "old kernel") {
		t.Errorf("plan with unknown features %+v", pl)
	}

	p := openPort(t, "xdp:"+v.host+"?mode=generic")
	m, err := LookupNetdev(v.host)
	if err != nil {
		t.Fatal(err)
	}
	if m.ProgName != progName || m.ProgMode != "generic" || !strings.Contains(m.Plan().Program, "gopmd's") {
		t.Errorf("with a port open: program %q (%s mode), plan %q", m.ProgName, m.ProgMode, m.Plan().Program)
	}
	p.Close()
	// Another program: the plan says an open needs force=1.
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: "foreign_pass", Type: ebpf.XDP, License: "BSD",
		Instructions: asm.Instructions{asm.Mov.Imm(asm.R0, xdpPass), asm.Return()}})
	if err != nil {
		t.Fatal(err)
	}
	id := attach(t, m.Index, prog)
	prog.Close()
	if m, err = LookupNetdev(v.host); err != nil || m.ProgID != id || m.ProgName != "foreign_pass" || !strings.Contains(m.Plan().Program, "force=1") {
		t.Errorf("with a foreign program %d: %+v, plan %q, %v", id, m, m.Plan().Program, err)
	}
	if _, err := LookupNetdev("lo"); err == nil {
		t.Errorf("LookupNetdev takes loopback")
	}
}
