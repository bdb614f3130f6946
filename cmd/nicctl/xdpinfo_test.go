package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/testnote"
)

// newVeth makes a veth pair in this namespace (both ends down), or skips.
func newVeth(t *testing.T) (a, b string) {
	t.Helper()
	if os.Geteuid() != 0 {
		testnote.Skip(t, "the xdp: list and info tests", "need root (they make a veth pair); run go test as root to include them")
	}
	a, b = fmt.Sprintf("gpn%da", os.Getpid()%100000), fmt.Sprintf("gpn%db", os.Getpid()%100000)
	if out, err := exec.Command("ip", "link", "add", a, "type", "veth", "peer", "name", b).CombinedOutput(); err != nil {
		t.Skipf("cannot make a veth pair (ip link add: %v: %s)", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", a).Run() })
	return a, b
}

// nicctl list shows the interfaces xdp: ports can serve, down ones too,
// with their XDP features and the mode a port gets; not loopback.
func TestListNetdevs(t *testing.T) {
	a, _ := newVeth(t)
	m := listJSON(t)
	if _, ok := m["xdp:lo"]; ok {
		t.Errorf("list shows loopback")
	}
	e, ok := m["xdp:"+a]
	if !ok {
		t.Fatalf("list does not show xdp:%s: %v", a, m)
	}
	if strings.Join(e.XDPFeatures, ",") == "unknown" {
		t.Skipf("this kernel does not report XDP features: %+v", e)
	}
	if e.Bus != "netdev" || e.Driver != "veth" || !e.Usable || !strings.Contains(e.Why, "down") || !strings.Contains(e.Why, "native mode, copy") ||
		!strings.Contains(strings.Join(e.XDPFeatures, ","), "basic,redirect") {
		t.Errorf("xdp:%s: %+v", a, e)
	}
	if out := mustRun(t, "list"); !strings.Contains(out, "xdp:"+a) || !strings.Contains(out, "xdp features basic,redirect") {
		t.Errorf("list text:\n%s", out)
	}
}

// nicctl info xdp:IF says what mode and zero-copy a port gets and why,
// from the features, and attaches nothing.
func TestInfoXDP(t *testing.T) {
	a, _ := newVeth(t)
	var r infoResult
	if err := json.Unmarshal([]byte(mustRun(t, "info", "--json", "xdp:"+a)), &r); err != nil {
		t.Fatal(err)
	}
	if r.XDP == nil {
		t.Fatalf("info xdp:%s has no xdp section: %+v", a, r)
	}
	if strings.Join(r.XDP.Features, ",") == "unknown" {
		t.Skipf("this kernel does not report XDP features: %+v", r.XDP)
	}
	x := r.XDP
	if r.KernelDriver != "veth" || x.Mode != "native" || x.ZeroCopy != "no" || !strings.Contains(x.ZeroCopyWhy, "xsk-zerocopy") || x.Up || x.RxQueues != 1 {
		t.Errorf("info xdp:%s: %+v, xdp %+v", a, r, *x)
	}
	out := mustRun(t, "info", "xdp:"+a)
	for _, w := range []string{"xdp features:  basic, redirect", "xdp mode:      native", "zero-copy:     no: driver veth"} {
		if !strings.Contains(out, w) {
			t.Errorf("info text lacks %q:\n%s", w, out)
		}
	}
	if l, _ := exec.Command("ip", "link", "show", a).CombinedOutput(); strings.Contains(string(l), "xdp") {
		t.Errorf("info left a program on %s: %s", a, l)
	}
	if code, _, errOut := nicctl(t, "info", "xdp:lo"); code == 0 || !strings.Contains(errOut, "lo") {
		t.Errorf("info xdp:lo: exit %d, %q", code, errOut)
	}
}

// A port running on an interface holds its steering program: list says
// which process, and that an open needs force=1 while it runs; info says
// the same in its program line.
func TestListNetdevHeldProgram(t *testing.T) {
	a, _ := newVeth(t)
	if out, err := exec.Command("ip", "link", "set", a, "up").CombinedOutput(); err != nil {
		t.Fatalf("ip link set %s up: %v: %s", a, err, out)
	}
	p, err := driver.Open("xdp:" + a + "?mode=generic")
	if err != nil {
		testnote.Skip(t, "the held-program list test", fmt.Sprintf("no xdp: port on a veth here: %v", err))
	}
	defer p.Close()
	e := listJSON(t)["xdp:"+a]
	pid := fmt.Sprintf("in use by process %d", os.Getpid())
	if e.Usable || !strings.Contains(e.Why, `"gopmd_xsk"`) || !strings.Contains(e.Why, pid) || !strings.Contains(e.Why, "force=1") {
		t.Errorf("list with a port running on xdp:%s: %+v", a, e)
	}
	if out := mustRun(t, "info", "xdp:"+a); !strings.Contains(out, "is gopmd's, "+pid) {
		t.Errorf("info with a port running:\n%s", out)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if e := listJSON(t)["xdp:"+a]; !e.Usable || strings.Contains(e.Why, "gopmd_xsk") {
		t.Errorf("list after the port closed: %+v", e)
	}
}
