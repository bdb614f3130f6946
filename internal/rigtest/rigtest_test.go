package rigtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFigures(t *testing.T) {
	out := "PASS x: ...\n   INFO cost-figures: a_ns=117108 b=58.5 n=2048 name=edu\nRESULT: PASS\n"
	f, ok := Figures(out, "cost-figures", "a_ns", "b")
	if !ok || f["a_ns"] != 117108 || f["b"] != 58.5 || f["n"] != 2048 {
		t.Fatalf("got %v, %v", f, ok)
	}
	if _, has := f["name"]; has {
		t.Errorf("a non-number was read as a figure: %v", f)
	}
	for _, bad := range []string{
		"RESULT: PASS\n",                                 // no line
		strings.Replace(out, "b=58.5 ", "", 1),           // a needed figure missing
		strings.Replace(out, "b=58.5", "b=x", 1),         // not a number
		strings.Replace(out, "a_ns=117108", "a_ns=0", 1), // not positive
		strings.Replace(out, "cost-figures", "other-figures", 1),
	} {
		if f, ok := Figures(bad, "cost-figures", "a_ns", "b"); ok {
			t.Errorf("accepted %q: %v", bad, f)
		}
	}
}

func TestMedian(t *testing.T) {
	v := []float64{5, 1, 3}
	for _, c := range []struct {
		v    []float64
		want float64
	}{{v, 3}, {[]float64{4, 1, 3, 2}, 2.5}, {nil, 0}, {[]float64{7}, 7}} {
		if got := Median(c.v); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.v, got, c.want)
		}
	}
	if v[0] != 5 || v[1] != 1 {
		t.Errorf("Median reordered its input: %v", v)
	}
}

func TestConf(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rig.conf")
	if err := os.WriteFile(path, []byte("RIG=x86-vfio\n KERNEL = \"6.1\"\nnot a pair\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := confAt(path)
	if len(c) != 2 || c["RIG"] != "x86-vfio" || c["KERNEL"] != "6.1" {
		t.Errorf("confAt = %v, want RIG=x86-vfio KERNEL=6.1", c)
	}
	if c := confAt(filepath.Join(t.TempDir(), "none")); c != nil {
		t.Errorf("a missing file gave %v, want nil", c)
	}
}
