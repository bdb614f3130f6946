//go:build !amd64

package dma

func writeBarrier()
func readBarrier()
