package enetc_test

import (
	"fmt"
	"testing"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/drvtest"
)

// TestRestartUnderTrafficKeepsOrder runs drvtest.RestartUnderTraffic on a
// sim:enetcN: a queue goroutine forwards through 20 Stop/Start cycles it
// is not told of, and the port sends no frame twice or out of order, loses
// no buffer and counts every frame.
func TestRestartUnderTrafficKeepsOrder(t *testing.T) {
	t.Parallel()
	s := openSim(t, "mode=engine", driver.Config{})
	drvtest.RestartUnderTraffic(t, drvtest.RestartRig{
		Port:     s.port,
		Receive:  func(f []byte) { s.model.Port().Receive(f) },
		Sent:     s.wire.take,
		Describe: func() string { return fmt.Sprintf("%+v", s.model.Stats()) },
	})
}
