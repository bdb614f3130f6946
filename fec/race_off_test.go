//go:build !race

package fec_test

// raceOn: see race_on_test.go.
const raceOn = false
