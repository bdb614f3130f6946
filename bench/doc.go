// Package bench holds benchmarks that reach a driver only through its
// public API (driver.Open on a simulated device), for measurements that
// must not depend on a driver package's internals: scripts/bench-instr
// counts their instructions per packet under callgrind.
package bench
