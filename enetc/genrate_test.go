package enetc_test

import (
	"fmt"
	"testing"

	"github.com/gopmd/gopmd/internal/drvtest"
	"github.com/gopmd/gopmd/sim"
)

// TestEngineRateLimitedGeneratorAccounting runs
// drvtest.GeneratorAccounting on an engine-mode sim:enetcN: every frame of
// a rate-limited generator that ran before and after Start is received,
// none dropped (no RDRP for frames that came before the port was started).
func TestEngineRateLimitedGeneratorAccounting(t *testing.T) {
	t.Parallel()
	const count = 300 // fewer than the 512 RX buffers: all fit at once
	simSeq.Lock()
	simSeq.n++
	name := fmt.Sprintf("enetc%d", 100+simSeq.n)
	simSeq.Unlock()
	spec := fmt.Sprintf("sim:%s?mode=engine&gen=1&gen-rate=3000&gen-count=%d&link-poll=0&chip=%s", name, count, testChip(t))
	drvtest.GeneratorAccounting(t, spec, count, sim.ViewOf, "RDRP")
}
