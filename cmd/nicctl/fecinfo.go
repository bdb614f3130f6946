package main

import (
	"fmt"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/fec"
	"github.com/gopmd/gopmd/pci"
)

// mdioInfo is how a FEC port reaches the MDIO bus its PHY sits on.
type mdioInfo struct {
	// Path is "own", "shared" (another port of the process drives the
	// bus) or "kernel" (the kernel's MII ioctls on Interface).
	Path      string `json:"path"`
	Bus       string `json:"bus,omitempty"` // device-tree node of the MAC whose bus it is
	Port      string `json:"port,omitempty"`
	Interface string `json:"interface,omitempty"`
	Text      string `json:"text"`
}

// irqInfo is one RX ring's interrupt line on a FEC.
type irqInfo struct {
	Ring      int    `json:"ring"`
	Line      string `json:"line"`      // int0, int1, int2
	Interrupt int    `json:"interrupt"` // index into the node's interrupts
	From      string `json:"from"`
	Delivered bool   `json:"delivered"`
	Problem   string `json:"problem,omitempty"`
}

// fecPort is what a FEC port tells about its MDIO path, fixed link and
// interrupt lines.
type fecPort interface {
	MDIOPath() fec.MDIOPath
	FixedLink() (driver.Link, string, bool)
	IRQLines() []fec.IRQLine
	ProbeIRQ(ring int) error
}

// fecInfo fills r's FEC fields from an open port (nothing for others).
func fecInfo(r *infoResult, p driver.Port) {
	f, ok := p.(fecPort)
	if !ok {
		return
	}
	m := f.MDIOPath()
	r.MDIO = &mdioInfo{Path: m.Kind, Bus: m.Node, Port: m.Port, Interface: m.Interface, Text: m.String()}
	if l, from, ok := f.FixedLink(); ok {
		r.FixedLink = fmt.Sprintf("%s, from %s", l, from)
	}
	for _, l := range f.IRQLines() {
		in := irqInfo{Ring: l.Ring, Line: l.Line, Interrupt: l.Index, From: l.From, Delivered: true}
		if err := f.ProbeIRQ(l.Ring); err != nil {
			in.Delivered, in.Problem = false, oneLine(err.Error())
		}
		r.IRQLines = append(r.IRQLines, in)
	}
}

// fecNodeLines fills r's interrupt lines from a FEC node's device tree and
// its binding, before any port is opened (an open port's probe replaces
// them): uio_pdrv_genirq delivers the node's first interrupt only,
// vfio-platform every one, /dev/mem and the kernel's own driver none.
func fecNodeLines(r *infoResult, pd *pci.PlatformDevice) {
	lines, ok := fec.NodeIRQLines(pd.Compatible, pd.Node)
	if !ok {
		return
	}
	r.IRQLines = nil
	for _, l := range lines {
		in := irqInfo{Ring: l.Ring, Line: l.Line, Interrupt: l.Index, From: l.From}
		switch {
		case len(pd.UIO) > 0:
			in.Delivered = l.Index == 0
			if !in.Delivered {
				in.Problem = fmt.Sprintf("uio_pdrv_genirq (%s) delivers only the node's first interrupt", pd.UIO[0])
			}
		case pd.Driver == "vfio-platform":
			in.Delivered = true
		case pd.Driver != "":
			in.Problem = "the kernel's " + pd.Driver + " driver holds the device"
		default:
			in.Problem = "no driver is bound: the /dev/mem backend delivers no interrupt"
		}
		r.IRQLines = append(r.IRQLines, in)
	}
}

// fecText prints the FEC fields.
func (r *infoResult) fecText(p func(k, f string, a ...any)) {
	if r.MDIO != nil {
		p("mdio", "%s", r.MDIO.Text)
	}
	if len(r.IRQLines) > 0 {
		p("irq lines", "%s", r.IRQLines[0].From)
	}
	for _, l := range r.IRQLines {
		st := "delivered"
		switch {
		case l.Delivered:
		case r.Backend != "":
			st = fmt.Sprintf("NOT delivered by the %s backend: rx%d cannot sleep on it; bind the node to vfio-platform (every interrupt) or poll rx%d", r.Backend, l.Ring, l.Ring)
		default:
			st = fmt.Sprintf("NOT delivered: %s; bind the node to vfio-platform (every interrupt) or poll rx%d", l.Problem, l.Ring)
		}
		p(fmt.Sprintf("irq rx%d", l.Ring), "%s = interrupt %d of the node: %s", l.Line, l.Interrupt, st)
	}
}
