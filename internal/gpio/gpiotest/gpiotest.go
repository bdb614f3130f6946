// Package gpiotest is a GPIO chip in memory for tests: it refuses lines
// marked held, as the kernel's character device does, and tells the test
// every level a line is driven to (to hold a model PHY in reset).
package gpiotest

import (
	"fmt"
	"sync"

	"github.com/gopmd/gopmd/internal/gpio"
)

// Chip is a fake GPIO chip.
type Chip struct {
	mu sync.Mutex
	// Held are lines someone else holds, with the holder's name.
	Held map[uint32]string
	// OnSet is called with each level driven (true: active), in order.
	OnSet func(offset uint32, active bool)
	// Log is every level driven, as "offset=active".
	Log []string
}

// Opener returns an opener that opens c for the controller node ctrl and
// refuses any other.
func (c *Chip) Opener(ctrl string) gpio.Opener {
	return func(node string) (gpio.Chip, error) {
		if node != ctrl {
			return nil, fmt.Errorf("GPIO controller %s: no such chip", node)
		}
		return c, nil
	}
}

func (c *Chip) Close() error { return nil }

func (c *Chip) RequestOutput(offset uint32, activeLow bool, consumer string) (gpio.Line, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if who, ok := c.Held[offset]; ok {
		return nil, &gpio.BusyError{Chip: "gpiotest", Offset: offset, Consumer: who}
	}
	return &line{c: c, offset: offset}, nil
}

type line struct {
	c      *Chip
	offset uint32
}

func (l *line) Set(active bool) error {
	l.c.mu.Lock()
	l.c.Log = append(l.c.Log, fmt.Sprintf("%d=%v", l.offset, active))
	f := l.c.OnSet
	l.c.mu.Unlock()
	if f != nil {
		f(l.offset, active)
	}
	return nil
}

func (l *line) Close() error { return nil }
