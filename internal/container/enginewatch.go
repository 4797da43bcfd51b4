package container

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/moby/moby/client"
)

// An engine that goes down stops its containers as `docker stop` does: a target that handles
// SIGTERM exits with code 0, and its row would read as if the target had quit by itself. The
// engine records nothing of it in the container's state, so each instance holds the engine's
// event stream open from its start: the engine closes it when it goes down, and a container
// found stopped after that was stopped by the engine.
type engineWatch struct {
	cancel context.CancelFunc
	done   chan struct{}
	// lost is when the stream broke while the instance was watched; nil while it holds.
	lost atomic.Pointer[time.Time]
	stop sync.Once
}

// watchEngine opens the engine's event stream of container id. It returns at once: the stream is
// opened and held in a goroutine, until stop.
func (d *Docker) watchEngine(id string) *engineWatch {
	ctx, cancel := context.WithCancel(context.Background())
	w := &engineWatch{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		ev := d.c.Events(ctx, client.EventsListOptions{Filters: make(client.Filters).Add("container", id)})
		for {
			select {
			case <-ev.Messages:
			case <-ev.Err:
				if ctx.Err() == nil {
					w.lost.Store(ptrTo(time.Now()))
				}
				return
			}
		}
	}()
	return w
}

func ptrTo[T any](v T) *T { return &v }

// engineLost says whether the engine's stream broke while the instance was watched.
func (w *engineWatch) engineLost() bool { return w != nil && w.lost.Load() != nil }

// close ends the watch; a stream broken by it is not the engine's doing.
func (w *engineWatch) close() {
	if w == nil {
		return
	}
	w.stop.Do(func() {
		w.cancel()
		<-w.done
	})
}
