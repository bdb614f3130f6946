package linkwatch

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/gopmd/gopmd/internal/testnote"
	"golang.org/x/sys/unix"
)

// Setting both ends of a veth pair up, then deleting the pair: the watch
// on one end reports it running, then gone.
func TestNotices(t *testing.T) {
	if os.Geteuid() != 0 {
		testnote.Skip(t, "the link watch test", "needs root (it makes a veth pair); run go test as root to include it")
	}
	a, b := fmt.Sprintf("gplw%da", os.Getpid()%100000), fmt.Sprintf("gplw%db", os.Getpid()%100000)
	if out, err := exec.Command("ip", "link", "add", a, "type", "veth", "peer", "name", b).CombinedOutput(); err != nil {
		t.Skipf("cannot make a veth pair: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("ip", "link", "del", a).Run() })
	ifc, err := net.InterfaceByName(a)
	if err != nil {
		t.Fatal(err)
	}
	w, err := New(ifc.Index)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	type notice struct{ running, gone bool }
	var got []notice
	wait := func(what string, done func() bool) {
		t.Helper()
		fds := []unix.PollFd{{Fd: int32(w.FD()), Events: unix.POLLIN}}
		for deadline := time.Now().Add(20 * time.Second); !done(); { // a bound on a broken watch only
			if time.Now().After(deadline) {
				t.Fatalf("%s: notices %+v", what, got)
			}
			_, _ = unix.Poll(fds, 100)
			w.Read(func(running, gone bool) { got = append(got, notice{running, gone}) })
		}
	}
	for _, c := range [][]string{{"link", "set", b, "up"}, {"link", "set", a, "up"}} {
		if out, err := exec.Command("ip", c...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v: %s", c, err, out)
		}
	}
	wait("setting both ends up", func() bool { return len(got) > 0 && got[len(got)-1].running })
	if out, err := exec.Command("ip", "link", "del", a).CombinedOutput(); err != nil {
		t.Fatalf("ip link del: %v: %s", err, out)
	}
	wait("deleting the pair", func() bool { return len(got) > 0 && got[len(got)-1].gone })
	for _, n := range got[:len(got)-1] {
		if n.gone {
			t.Errorf("gone before the delete: %+v", got)
		}
	}
}
