//go:build race

package fec_test

// raceEnabled: the race detector does not track memory from mmap (DMA
// regions), so the descriptor status words that order the driver and an
// engine-mode model are invisible to it, while the simulated cache's
// device-side copies live on the Go heap: it reports false races there.
const raceEnabled = true
