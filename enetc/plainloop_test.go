package enetc_test

import (
	"testing"

	_ "github.com/gopmd/gopmd/enetc"
	"github.com/gopmd/gopmd/internal/drvtest"
	_ "github.com/gopmd/gopmd/sim"
)

// TestPlainLoopReceivesGenerated: a plain RxBurst/TxBurst loop over two
// default simulated ports receives every generated frame (drvtest.PlainLoop).
func TestPlainLoopReceivesGenerated(t *testing.T) {
	t.Parallel()
	drvtest.PlainLoop(t, "enetc", 9090)
}
