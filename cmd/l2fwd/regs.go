package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"

	"github.com/gopmd/gopmd/driver"
)

// regsHandler serves GET /regs on the metrics listener: the named
// registers of every running port (or of ?port=N), read through the
// driver that owns the port. It is the live counterpart of nicctl regs,
// which cannot open a port l2fwd holds and, through VFIO, would reset the
// function by opening it. Register values say much about a device, so the
// dump is served to loopback listeners only.
func regsHandler(a *app, loopback bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if !loopback {
			http.Error(w, "l2fwd: /regs is served on a loopback --metrics address only (this one is not); read it on the machine", http.StatusForbidden)
			return
		}
		ports := a.livePorts()
		from, to := 0, len(ports)
		if v := r.URL.Query().Get("port"); v != "" || r.URL.Query().Has("port") {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n >= len(ports) {
				http.Error(w, fmt.Sprintf("l2fwd: /regs?port=%q: give a port number from 0 to %d", v, len(ports)-1), http.StatusBadRequest)
				return
			}
			from, to = n, n+1
		}
		for i := from; i < to; i++ {
			dumpRegs(w, i, a.specs[i], ports[i])
		}
	}
}

// dumpRegs writes one port's registers, one per line with decoded fields,
// through driver.RegisterDumper.
func dumpRegs(w io.Writer, i int, spec string, p driver.Port) {
	d, ok := p.(driver.RegisterDumper)
	if !ok {
		fmt.Fprintf(w, "# port %d %s: its driver (%s) offers no register dump\n", i, spec, p.Info().Driver)
		return
	}
	fmt.Fprintf(w, "# port %d %s (%s)\n", i, spec, p.Info().Driver)
	for _, v := range d.Registers() {
		fmt.Fprintln(w, v.String())
	}
}

// isLoopback reports whether a listener's address is a loopback one.
func isLoopback(addr net.Addr) bool {
	ta, ok := addr.(*net.TCPAddr)
	return ok && ta.IP.IsLoopback()
}
