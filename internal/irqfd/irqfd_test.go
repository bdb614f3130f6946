package irqfd

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The ABI sizes: eventfd(2) reads and writes 8 bytes; drivers/uio/uio.c
// reads and writes a 4-byte (s32) count.
func TestABISizes(t *testing.T) {
	if EventfdCount != 8 || UIOCount != 4 {
		t.Fatalf("eventfd %d, UIO %d bytes: want 8 and 4", EventfdCount, UIOCount)
	}
}

func TestEventfdSignalAck(t *testing.T) {
	e, err := NewEventfd()
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if n, err := e.Ack(); err != nil || n != 0 {
		t.Fatalf("fresh eventfd: Ack = %d, %v; want 0, nil", n, err)
	}
	fds := []unix.PollFd{{Fd: int32(e.FD())}}
	if ok, _ := Poll(fds, 0); ok {
		t.Fatal("a fresh eventfd polls readable")
	}
	for i := 0; i < 3; i++ {
		if err := e.Signal(); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := Poll(fds, 1000); !ok || err != nil {
		t.Fatalf("signalled eventfd: poll = %v, %v", ok, err)
	}
	if n, _ := e.Ack(); n != 3 {
		t.Fatalf("Ack = %d after 3 signals", n)
	}
	if ok, _ := Poll(fds, 0); ok {
		t.Fatal("readable after Ack")
	}
	// A signal from another goroutine ends a wait.
	sig := make(chan struct{})
	go func() { time.Sleep(10 * time.Millisecond); e.Signal(); close(sig) }()
	if ok, _ := Poll(fds, 5000); !ok {
		t.Fatal("wait not ended by a signal")
	}
	<-sig
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestOpenUIOMissing(t *testing.T) {
	_, err := OpenUIO(t.TempDir() + "/uio9")
	if err == nil {
		t.Fatal("opened a missing UIO device")
	}
}
