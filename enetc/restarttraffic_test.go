package enetc_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/internal/drvtest"
)

// TestRestartUnderTrafficKeepsOrder runs drvtest.RestartUnderTraffic on a
// sim:enetcN: a queue goroutine forwards through 20 Stop/Start cycles it
// is not told of, and the port sends no frame twice or out of order, loses
// no buffer and counts every frame. Stop may wait long for TX to drain (a
// loaded machine runs the model's engine late): its bound is not what is
// tested.
func TestRestartUnderTrafficKeepsOrder(t *testing.T) {
	t.Parallel()
	s := openSim(t, "mode=engine", driver.Config{StopTimeout: 20 * time.Second})
	drvtest.RestartUnderTraffic(t, drvtest.RestartRig{
		Port:     s.port,
		Receive:  func(f []byte) { s.model.Port().Receive(f) },
		Sent:     s.wire.take,
		Describe: func() string { return fmt.Sprintf("%+v", s.model.Stats()) },
	})
}
