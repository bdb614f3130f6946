// Command spin is a fixture for internal/benchinstr's plugin test: it runs
// spin(n), whose instruction count is known exactly (spin_arm64.s), once.
package main

import (
	"os"
	"strconv"
)

// spin executes 2n+2 instructions for n >= 1.
func spin(n uint64)

func main() {
	n, err := strconv.ParseUint(os.Args[1], 10, 64)
	if err != nil || n == 0 {
		os.Exit(2)
	}
	spin(n)
}
