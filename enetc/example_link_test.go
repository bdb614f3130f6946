package enetc_test

import (
	"fmt"

	"github.com/gopmd/gopmd/driver"
	"github.com/gopmd/gopmd/enetc"
	"github.com/gopmd/gopmd/sim" // the sim: scheme and its device models
)

// Link changes arrive as events: the link watcher (link-poll=, default
// once a second) or an UpdateLink call that sees a change calls every
// subscriber. Here the simulated device's cable is pulled and put back.
func ExamplePort_OnLinkChange() {
	p, err := driver.Open("sim:enetc44?link-poll=0")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	if err := p.Start(); err != nil {
		fmt.Println(err)
		return
	}
	cancel := p.OnLinkChange(func(e driver.LinkEvent) { fmt.Println(e) })
	defer cancel()
	ep := p.(*enetc.Port)
	sim.ENETCModel("enetc44").SetLink(false) // the cable is pulled
	ep.UpdateLink()
	sim.ENETCModel("enetc44").SetLink(true)
	ep.UpdateLink()
	// Output:
	// sim:enetc44?link-poll=0: link down (was up 1000 Mb/s full duplex)
	// sim:enetc44?link-poll=0: link up 1000 Mb/s full duplex (was down)
}
