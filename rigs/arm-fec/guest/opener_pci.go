//go:build !rigown

package main

// The ENETs are opened through the pci package's platform backend (UIO when
// a uio device is bound to the node, else a /dev/mem window).
import _ "github.com/gopmd/gopmd/pci"

const opener = "pci platform backend"
