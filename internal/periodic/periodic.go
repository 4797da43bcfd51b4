// Package periodic reads a source through a phase: once at its start, every interval, and once at
// its end. The samplers of a measured phase (a cgroup's resources, a runtime's signals) share it.
package periodic

import (
	"sync"
	"time"
)

// Watch reads a source through a phase; each reading goes to its add, under the watch's lock.
type Watch[T any] struct {
	read func() (T, error)
	add  func(T)
	stop chan struct{}
	done chan struct{}

	mu  sync.Mutex
	err error
}

// Start reads once at once, then every interval until Stop. The first read's failure is Start's:
// a source that cannot be read at the start of a phase has nothing to say of it.
func Start[T any](every time.Duration, read func() (T, error), add func(T)) (*Watch[T], error) {
	first, err := read()
	if err != nil {
		return nil, err
	}
	w := &Watch[T]{read: read, add: add, stop: make(chan struct{}), done: make(chan struct{})}
	w.Locked(func() { add(first) })
	go func() {
		defer close(w.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-t.C:
				w.take()
			}
		}
	}()
	return w, nil
}

func (w *Watch[T]) take() {
	v, err := w.read()
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		if w.err == nil {
			w.err = err
		}
		return
	}
	w.add(v)
}

// Stop reads once more, at the phase's end. A read that failed on the way is its error: what the
// readings say would miss part of the phase.
func (w *Watch[T]) Stop() error {
	close(w.stop)
	<-w.done
	w.take()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Locked runs f under the lock the readings are added under.
func (w *Watch[T]) Locked(f func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	f()
}
