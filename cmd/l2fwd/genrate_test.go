package main

import "testing"

func TestRateLimitedGeneratorEngineAccounting(t *testing.T) {
	// An engine-mode port fed by a rate-limited generator, forwarding into
	// a sink: every generated frame is received and forwarded, none is
	// dropped and none goes unaccounted. 300 frames fit the 512 RX buffers,
	// so even a worker that does not run for the whole time loses none:
	// the only way to lose one is a frame that reaches the port before it
	// has started (counted as mac_discard, or by no counter at all when it
	// came before the driver had set its counters up).
	const count = 300
	for _, c := range []struct{ name, in, out string }{
		{"fec", "sim:fec70?mode=engine&gen=1&gen-rate=3000&gen-count=300&" + simOpts, "sim:fec71?mode=engine&sink=1&" + simOpts},
		{"enetc", "sim:enetc70?mode=engine&gen=1&gen-rate=3000&gen-count=300&" + simOpts, "sim:enetc71?mode=engine&sink=1&" + simOpts},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runToEnd(t, "--json", "--stats-interval", "0", "--until-done", c.in, c.out)
			s := parseSummary(t, stdout)
			if code != 0 || !s.Accounting.OK {
				t.Fatalf("exit %d, accounting %+v: %s", code, s.Accounting, stderr)
			}
			p0 := s.Ports[0]
			if p0.Generator == nil || p0.Generator.Frames != count {
				t.Fatalf("port 0 generator %+v: want %d frames sent", p0.Generator, count)
			}
			if p0.Rx.Packets != count || len(p0.Rx.Drops) != 0 {
				t.Fatalf("port 0 received %d of %d frames, dropped %v: an idle port with a buffer for each must receive every one", p0.Rx.Packets, count, p0.Rx.Drops)
			}
			if k := s.Ports[1].Sink; k == nil || k.Frames != count || k.Lost != 0 {
				t.Fatalf("sink %+v: want all %d frames, none lost", k, count)
			}
		})
	}
}
