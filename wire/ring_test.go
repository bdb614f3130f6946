package wire

import "testing"

// frameN is a 60-byte frame numbered i.
func frameN(i int) []byte {
	b := make([]byte, 60)
	b[0], b[58], b[59] = byte(i), byte(i>>16), byte(i>>8)
	return b
}

func TestFrameRing(t *testing.T) {
	r := NewFrameRing(3, 100) // rounds up to 4
	for i := 0; i < 4; i++ {
		if !r.Put(frameN(i)) {
			t.Fatalf("put %d refused", i)
		}
	}
	if r.Put(frameN(9)) || r.Full.Load() != 1 {
		t.Fatal("a full ring took a frame")
	}
	if r.Put(make([]byte, 101)) || r.TooBig.Load() != 1 {
		t.Fatal("an oversized frame was taken")
	}
	// A frame longer than the destination is dropped and counted, never
	// cut: Get hands over the next one that fits.
	var dst [10]byte
	if n, ok := r.Get(dst[:]); ok || n != 0 || r.TooLong.Load() != 4 || r.Len() != 0 {
		t.Fatalf("get into a short buffer: n=%d ok=%v too long %d", n, ok, r.TooLong.Load())
	}
	for i := 0; i < 4; i++ {
		r.Put(frameN(i))
	}
	var big [100]byte
	if n, ok := r.Get(big[:]); !ok || n != 60 || big[0] != 0 {
		t.Fatalf("get 0: n=%d ok=%v", n, ok)
	}
	for i := 1; i < 4; i++ {
		if n, ok := r.Get(big[:]); !ok || n != 60 || big[0] != byte(i) {
			t.Fatalf("get %d: n=%d ok=%v first byte %d", i, n, ok, big[0])
		}
	}
	if _, ok := r.Get(big[:]); ok {
		t.Fatal("empty ring returned a frame")
	}
	f := frameN(1)
	if a := testing.AllocsPerRun(1000, func() { r.Put(f); r.Get(big[:]) }); a != 0 {
		t.Fatalf("ring allocates %v per frame", a)
	}
}
