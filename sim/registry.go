package sim

import (
	"fmt"
	"sync"
)

// registry holds the open models of one kind by device name ("enetc0"), so
// a name is open once at a time and tests can reach a model by name.
type registry[T any] struct {
	kind string // "enetc", "fec": for messages
	mu   sync.Mutex
	m    map[string]*T
}

func newRegistry[T any](kind string) *registry[T] {
	return &registry[T]{kind: kind, m: map[string]*T{}}
}

// get is the open model under name, or nil.
func (r *registry[T]) get(name string) *T {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.m[name]
}

// reserve claims name while its model is built, or says it is taken.
func (r *registry[T]) reserve(name string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, taken := r.m[name]; taken {
		return fmt.Errorf("sim:%s is already open: close it first or use another number (sim:%sN)", name, r.kind)
	}
	r.m[name] = nil
	return nil
}

// set publishes the model of a reserved name.
func (r *registry[T]) set(name string, v *T) {
	r.mu.Lock()
	r.m[name] = v
	r.mu.Unlock()
}

// forget frees name.
func (r *registry[T]) forget(name string) {
	r.mu.Lock()
	delete(r.m, name)
	r.mu.Unlock()
}
