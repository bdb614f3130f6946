package pci_test

import (
	"fmt"

	"github.com/gopmd/gopmd/pci"
)

// A PCI address is parsed as lspci -D prints it; a bad one gets an error
// that says what is wrong and what a good one looks like.
func ExampleParseAddress() {
	a, err := pci.ParseAddress("0000:00:1F.6")
	fmt.Println(a, err)
	_, err = pci.ParseAddress("0000:00:00.8")
	fmt.Println(err)
	// Output:
	// 0000:00:1f.6 <nil>
	// PCI address "0000:00:00.8": function "8" must be one digit 0-7 (want domain:bus:device.function in hex, e.g. 0000:01:00.0; lspci -D lists them)
}

// A Window is bounds-checked register access to a mapped region: a read
// outside it is not performed and returns all ones, as a PCI bus error
// does; Err keeps the first such access.
func ExampleWindow() {
	mem := make([]byte, 0x4000) // in a program: a BAR or UIO map mmapped by the backend
	w := pci.NewWindow("2188000.ethernet reg0", mem)
	w.Write32(0xe4, 0x11223344) // PALR
	fmt.Printf("%#x\n", w.Read32(0xe4))
	fmt.Printf("%#x %v\n", w.Read32(0x4000), w.Err() != nil)
	// Output:
	// 0x11223344
	// 0xffffffff true
}
