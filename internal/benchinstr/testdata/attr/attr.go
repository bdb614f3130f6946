// Package attr is a fixture for internal/benchinstr's symbol tests: a
// function in a plain file and one in a _test.go file.
package attr

// Work is a function defined outside the tests.
//
//go:noinline
func Work(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i * i
	}
	return s
}
