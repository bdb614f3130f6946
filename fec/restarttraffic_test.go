package fec_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/drvtest"
	"github.com/gopmd/gopmd/sim"
)

// TestRestartUnderTrafficKeepsOrder runs drvtest.RestartUnderTraffic on a
// sim:fecN: a queue goroutine forwards through 20 Stop/Start cycles it is
// not told of, and the port sends no frame twice or out of order, loses
// no buffer and counts every frame. Stop may wait long for TX to drain (a
// loaded machine runs the model's engine late): its bound is not what is
// tested.
func TestRestartUnderTrafficKeepsOrder(t *testing.T) {
	t.Parallel()
	name := fmt.Sprintf("fec%d", 200+simSeq.Add(1))
	spec := "sim:" + name + "?mode=engine&link-poll=0"
	p, err := driver.OpenConfig(spec, driver.Config{StopTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	m := sim.FECModel(name)
	w := &capture{}
	m.SetWire(w)
	drvtest.RestartUnderTraffic(t, drvtest.RestartRig{
		Port:     p,
		Receive:  func(f []byte) { m.Port().Receive(f) },
		Sent:     w.take,
		Describe: func() string { return fmt.Sprintf("%+v, last error %v", m.Stats(), m.LastModelError()) },
	})
}
