package fec_test

import (
	"testing"

	"github.com/gopmd/gopmd/internal/drvtest"
)

// TestTxCauses runs drvtest.TxCauses on a sim:fecN with enhanced BDs (the
// only ones that carry a transmit error).
func TestTxCauses(t *testing.T) {
	t.Parallel()
	p, m := openSim(t, "soc=imx8mp&bd=enhanced&link-poll=0")
	w := &capture{}
	m.SetWire(w)
	drvtest.TxCauses(t, drvtest.TxRig{
		Port: p,
		Wire: func() int {
			w.mu.Lock()
			defer w.mu.Unlock()
			return len(w.frames)
		},
		InjectDMAFault: m.InjectTxDMAFault,
		SetLink: func(up bool) {
			m.SetLink(up)
			p.UpdateLink()
		},
		SetStall: m.SetTxStall,
		TooBig:   p.Info().MTU + 100,
	})
}
