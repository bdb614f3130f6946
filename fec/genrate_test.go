package fec_test

import (
	"fmt"
	"testing"

	"github.com/gopmd/gopmd/internal/drvtest"
	"github.com/gopmd/gopmd/sim"
)

// TestEngineRateLimitedGeneratorAccounting runs
// drvtest.GeneratorAccounting on an engine-mode sim:fecN: every frame of a
// rate-limited generator that ran before and after Start is received, none
// dropped (no RMON_R_DROP for frames that came before the MAC was started,
// none lost before the driver could count it).
func TestEngineRateLimitedGeneratorAccounting(t *testing.T) {
	t.Parallel()
	const count = 300 // fewer than the 512 RX buffers: all fit at once
	name := fmt.Sprintf("fec%d", 200+simSeq.Add(1))
	spec := fmt.Sprintf("sim:%s?mode=engine&gen=1&gen-rate=3000&gen-count=%d", name, count)
	drvtest.GeneratorAccounting(t, spec, count, sim.ViewOf, "RMON_R_DROP")
}
