package metrics_test

import (
	"bufio"
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/gopmd/gopmd/driver"
	_ "github.com/gopmd/gopmd/fec" // the FEC driver
	"github.com/gopmd/gopmd/metrics"
	"github.com/gopmd/gopmd/pool"
	_ "github.com/gopmd/gopmd/sim" // the sim: scheme
)

// An appliance exports its ports' counters with one call: here through
// Handler, served by an httptest recorder; metrics.Serve("127.0.0.1:9100",
// ports...) listens on an address instead.
func Example() {
	p, err := driver.Open("sim:fec85?gen=1&gen-count=10")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	if err := p.Start(); err != nil {
		fmt.Println(err)
		return
	}
	burst := make([]*pool.Packet, 32)
	for i := 0; i < 1000 && p.Stats().Rx.Packets < 10; i++ {
		n := p.RxQueue(0).RxBurst(burst)
		pool.FreeBulk(burst[:n])
	}
	p.Stop()
	rec := httptest.NewRecorder()
	metrics.Handler(p).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	sc := bufio.NewScanner(rec.Body)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "gopmd_port_packets_total{") {
			fmt.Println(sc.Text())
		}
	}
	// Output:
	// gopmd_port_packets_total{dir="rx",port="sim:fec85?gen=1&gen-count=10"} 10
	// gopmd_port_packets_total{dir="tx",port="sim:fec85?gen=1&gen-count=10"} 0
}
