package sim

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestOptionsReference fails when docs/sim-options.md is not what the
// option table makes: CI catches a reference that drifted from the code.
func TestOptionsReference(t *testing.T) {
	var b bytes.Buffer
	if err := WriteReference(&b); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "docs", "sim-options.md"))
	if err != nil {
		t.Fatalf("%v (go generate ./sim writes it)", err)
	}
	if !bytes.Equal(got, b.Bytes()) {
		t.Fatal("docs/sim-options.md differs from the option table in sim/options.go: run go generate ./sim and commit the result")
	}
}

// TestOptionsTableCoversTheCode: every option key the simulator's code
// reads from a spec is in the table, in the group of the devices that
// read it, so the reference lists every option there is.
func TestOptionsTableCoversTheCode(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	keyRE := regexp.MustCompile(`(?:Options\.(?:Get|Has)|\bo\.(?:Get|Has)|boolOption\(spec,|\bbad)\(?\s*"([a-z][a-z0-9-]*)"`)
	groupOf := map[string][]string{"enetc.go": {"model", "enetc"}, "fec.go": {"model", "fec"}, "backend.go": {"model"}, "attach.go": {"wiring"}, "view.go": {"wiring"},
		"clock.go": {"fec", "enetc-timer"}, "enetctimer.go": {"enetc-timer"}}
	seen := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range keyRE.FindAllSubmatch(src, -1) {
			key := string(m[1])
			seen++
			groups, ok := groupOf[f]
			if !ok {
				t.Errorf("%s reads option %q: say which devices take it in this test's groupOf", f, key)
				continue
			}
			if !slices.ContainsFunc(Options, func(o Option) bool { return o.Name == key && slices.Contains(groups, o.Group) }) {
				t.Errorf("%s reads option %q, which the table in options.go does not list for %v", f, key, groups)
			}
		}
	}
	if seen < 20 {
		t.Fatalf("found only %d option reads: the pattern no longer matches the code", seen)
	}
	// And every option of the table is one a device takes.
	for _, o := range Options {
		var takes []string
		switch o.Group {
		case "enetc":
			takes = enetcOptions
		case "fec":
			takes = fecOptions
		case "enetc-timer":
			takes = enetcTimerOptions
		default:
			takes = append(append([]string(nil), enetcOptions...), attachOptions...)
		}
		if !slices.Contains(takes, o.Name) {
			t.Errorf("option %s (%s) is in the table but no device takes it", o.Name, o.Group)
		}
	}
}
