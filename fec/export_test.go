package fec

import "github.com/gopmd/gopmd/internal/gpio"

// SetGPIOOpener makes New open GPIO chips with o until restore is called.
// Tests that call it do not run in parallel with other tests that give a
// reset line.
func SetGPIOOpener(o gpio.Opener) (restore func()) {
	old := gpioOpen
	gpioOpen = o
	return func() { gpioOpen = old }
}
