package fec_test

import (
	"fmt"
	"testing"

	"github.com/gopmd/gopmd/internal/drvtest"
)

// TestRestartUnderTrafficKeepsOrder runs drvtest.RestartUnderTraffic on a
// sim:fecN: a queue goroutine forwards through 20 Stop/Start cycles it is
// not told of, and the port sends no frame twice or out of order, loses
// no buffer and counts every frame.
func TestRestartUnderTrafficKeepsOrder(t *testing.T) {
	t.Parallel()
	p, m := openSim(t, "mode=engine&link-poll=0")
	w := &capture{}
	m.SetWire(w)
	drvtest.RestartUnderTraffic(t, drvtest.RestartRig{
		Port:     p,
		Receive:  func(f []byte) { m.Port().Receive(f) },
		Sent:     w.take,
		Describe: func() string { return fmt.Sprintf("%+v, last error %v", m.Stats(), m.LastModelError()) },
	})
}
