//go:build race

package fec_test

// raceOn: the race detector's runtime allocates on its own (shadow state
// for the goroutines and channels a wait touches), so allocation counts
// are asserted only without it.
const raceOn = true
