package gpio

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/gopmd/gopmd/internal/devtree"
)

// The device tree's GPIO flags cell (include/dt-bindings/gpio/gpio.h).
const dtGPIOActiveLow = 1 << 0

// Limits of the FEC binding's phy-reset-duration and phy-reset-post-delay
// (ms): fec_main.c takes more than 1000 ms as a mistake and uses 1.
const fecResetMaxMs = 1000

// Reset is a PHY's reset line and its timings, as the device tree gives
// them.
type Reset struct {
	Ctrl      string // the GPIO controller's node (its directory)
	Offset    uint32 // the line on it
	ActiveLow bool
	// Assert is how long the line is held active; Deassert how long the
	// PHY is left after release before it is spoken to.
	Assert, Deassert time.Duration
	From             string // the property: "PHYNODE/reset-gpios" or "MACNODE/phy-reset-gpios"
}

// ReadReset reads the reset line of a PHY: the PHY node's reset-gpios
// with reset-assert-us and reset-deassert-us (ethernet-phy.yaml; 0 when
// absent, as mdio_device.c takes them), else the MAC node's phy-reset-gpios
// with phy-reset-duration (ms, 1 when absent) and phy-reset-post-delay (ms,
// 0 when absent) and phy-reset-active-high (fsl,fec.yaml). ok is false
// when neither names one. Either node may be the zero Node.
func ReadReset(phyNode, macNode devtree.Node) (r Reset, ok bool, err error) {
	if phyNode.Exists() {
		if r, ok, err = readLine(phyNode, "reset-gpios"); err != nil || ok {
			if ok {
				r.Assert, err = us(phyNode, "reset-assert-us")
				if err == nil {
					r.Deassert, err = us(phyNode, "reset-deassert-us")
				}
			}
			return r, ok, err
		}
	}
	if !macNode.Exists() {
		return r, false, nil
	}
	if r, ok, err = readLine(macNode, "phy-reset-gpios"); err != nil || !ok {
		return r, ok, err
	}
	if macNode.Has("phy-reset-active-high") {
		r.ActiveLow = false
	}
	r.Assert, r.Deassert = time.Millisecond, 0
	if v, e := macNode.U32("phy-reset-duration"); e == nil && v <= fecResetMaxMs {
		r.Assert = time.Duration(v) * time.Millisecond
	} else if e != nil && !errors.Is(e, fs.ErrNotExist) {
		return r, false, fmt.Errorf("device-tree %s/phy-reset-duration: %w", macNode, e)
	}
	if v, e := macNode.U32("phy-reset-post-delay"); e == nil && v <= fecResetMaxMs {
		r.Deassert = time.Duration(v) * time.Millisecond
	} else if e != nil && !errors.Is(e, fs.ErrNotExist) {
		return r, false, fmt.Errorf("device-tree %s/phy-reset-post-delay: %w", macNode, e)
	}
	return r, true, nil
}

// readLine reads a one-line GPIO specifier <&controller offset flags>.
func readLine(node devtree.Node, prop string) (Reset, bool, error) {
	path := node.Prop(prop)
	b, err := node.Bytes(prop)
	if errors.Is(err, fs.ErrNotExist) {
		return Reset{}, false, nil
	}
	if err != nil {
		return Reset{}, false, fmt.Errorf("device-tree %s: %w", path, err)
	}
	if len(b) != 12 {
		return Reset{}, false, fmt.Errorf("device-tree %s: %d bytes; gopmd reads one line of a controller with two cells, <&gpioN offset flags> (12 bytes)", path, len(b))
	}
	ph := binary.BigEndian.Uint32(b)
	ctrl, err := node.ByPhandle(prop, ph)
	if err != nil {
		return Reset{}, false, fmt.Errorf("device-tree %s = %#x: %w", path, ph, err)
	}
	return Reset{Ctrl: ctrl.Path(), Offset: binary.BigEndian.Uint32(b[4:]),
		ActiveLow: binary.BigEndian.Uint32(b[8:])&dtGPIOActiveLow != 0, From: path}, true, nil
}

// us reads a duration in microseconds, 0 when absent.
func us(node devtree.Node, prop string) (time.Duration, error) {
	v, err := node.U32(prop)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("device-tree %s/%s: %w", node, prop, err)
	}
	return time.Duration(v) * time.Microsecond, nil
}

// Pulse resets the PHY: it requests the line (driven inactive), drives it
// active for r.Assert, inactive again, waits r.Deassert and releases the
// line, as the kernel's PHY layer does at probe. sleep waits (time.Sleep
// outside tests).
func (r Reset) Pulse(open Opener, consumer string, sleep func(time.Duration)) error {
	chip, err := open(r.Ctrl)
	if err != nil {
		return fmt.Errorf("PHY reset line (%s): %w", r.From, err)
	}
	defer chip.Close()
	line, err := chip.RequestOutput(r.Offset, r.ActiveLow, consumer)
	if err != nil {
		return fmt.Errorf("PHY reset line (%s): %w", r.From, err)
	}
	defer line.Close()
	if err := line.Set(true); err != nil {
		return fmt.Errorf("PHY reset line (%s): %w", r.From, err)
	}
	sleep(r.Assert)
	if err := line.Set(false); err != nil {
		return fmt.Errorf("PHY reset line (%s): %w", r.From, err)
	}
	sleep(r.Deassert)
	return nil
}

// String says the line and its timings for a log or nicctl.
func (r Reset) String() string {
	pol := "active high"
	if r.ActiveLow {
		pol = "active low"
	}
	return fmt.Sprintf("line %d of %s (%s, %s), held %v, then %v", r.Offset, filepath.Base(r.Ctrl), r.From, pol, r.Assert, r.Deassert)
}
