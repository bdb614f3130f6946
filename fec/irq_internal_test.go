package fec

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/devtree"
)

// Arming opens the queue's handle once; a frame while armed is one
// interrupt the handle sees; a frame while disarmed is none (EIMR masks
// it), and the next arm starts from a clean EIR.
func TestInterruptCounts(t *testing.T) {
	p, m := openInternal(t, "soc=imx8mp&link-poll=0")
	q := p.rx[0]
	if err := q.ArmInterrupt(); err != nil {
		t.Fatal(err)
	}
	m.Port().Receive(patternFrame(64, 1))
	q.DisarmInterrupt()
	if armed, fired := q.interruptStats(); armed != 1 || fired != 1 {
		t.Fatalf("one frame while armed: armed %d, fired %d; want 1, 1", armed, fired)
	}
	m.Port().Receive(patternFrame(64, 2)) // disarmed: masked
	if err := q.ArmInterrupt(); err != nil {
		t.Fatal(err)
	}
	q.DisarmInterrupt()
	if armed, fired := q.interruptStats(); armed != 2 || fired != 1 {
		t.Fatalf("a frame while disarmed, then arm and disarm: armed %d, fired %d; want 2, 1", armed, fired)
	}
	if p.regs.Read32(regEIMR) != 0 {
		t.Fatalf("EIMR %#x after disarm; want 0", p.regs.Read32(regEIMR))
	}
}

// TestRingLinesFromInterruptNames: the node's interrupt-names decide which
// device interrupt is each ring's line (a tree that names int0 first on
// an i.MX8MP, as the binding asks); without names the SoC's tree order
// serves (int1, int2, int0 on the i.MX8M); a tree naming only int0 puts
// every ring on it.
func TestRingLinesFromInterruptNames(t *testing.T) {
	t.Parallel()
	imx8mp, _ := lookupProfile([]string{"fsl,imx8mp-fec"})
	for _, c := range []struct {
		names string // "" : no property
		want  [3]int
		lines [3]string
	}{
		{"", [3]int{2, 0, 1}, [3]string{"int0", "int1", "int2"}},
		{"int0\x00int1\x00int2\x00pps\x00", [3]int{0, 1, 2}, [3]string{"int0", "int1", "int2"}},
		{"int1\x00int2\x00int0\x00pps\x00", [3]int{2, 0, 1}, [3]string{"int0", "int1", "int2"}},
		{"pps\x00int0\x00", [3]int{1, 1, 1}, [3]string{"int0", "int0", "int0"}},
	} {
		node := t.TempDir()
		if c.names != "" {
			if err := os.WriteFile(filepath.Join(node, "interrupt-names"), []byte(c.names), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		p := &Port{prof: imx8mp, dev: &driver.Device{Node: devtree.At(node)}}
		p.setRingLines()
		if p.irq.ringIRQ != c.want || p.irq.ringLine != c.lines {
			t.Errorf("interrupt-names %q: interrupts %v lines %v, want %v %v", c.names, p.irq.ringIRQ, p.irq.ringLine, c.want, c.lines)
		}
	}
}
