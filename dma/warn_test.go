package dma

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestWarnLogsThroughSlog: the library's one warning goes to the program's
// slog logger, at level WARN, so an appliance's log collects it.
func TestWarnLogsThroughSlog(t *testing.T) {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	defer slog.SetDefault(old)
	Warn("dma: no 2 MiB huge pages")
	if got := buf.String(); !strings.Contains(got, `level=WARN msg="gopmd: dma: no 2 MiB huge pages"`) {
		t.Fatalf("slog got %q", got)
	}
}
