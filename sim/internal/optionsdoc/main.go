// Command optionsdoc writes the reference of the simulated devices' spec
// options (docs/sim-options.md) from the table in sim/options.go:
//
//	go generate ./sim
package main

import (
	"bytes"
	"fmt"
	"os"

	"github.com/gopmd/gopmd/sim"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: optionsdoc FILE (go generate ./sim writes docs/sim-options.md)")
		os.Exit(2)
	}
	var b bytes.Buffer
	if err := sim.WriteReference(&b); err != nil {
		fmt.Fprintln(os.Stderr, "optionsdoc:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(os.Args[1], b.Bytes(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "optionsdoc:", err)
		os.Exit(1)
	}
}
