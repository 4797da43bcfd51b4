package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/iotbench/iotbench/internal/load"
)

// A JVM on one CPU compiles under load for tens of seconds, its compiler threads taking the
// request threads' CPU: the per-second figures can sit on a plateau while it does, then step up
// when the hot paths are compiled. A target whose /health gives its JIT's compilation time so far
// (jitCompileMs, docs/contract.md) is asked for it during a warm-up until steady, which ends
// only once that time has stopped growing.

// jitQuiet is the most compilation time, over jitSpan, of a JIT that has settled: 5% of the span.
// The time is the compiler threads' busy time (docs/contract.md): running, or waiting for a CPU to
// run on, which a compiler thread starved by hundreds of request threads does most of the time.
// Compiling, Spring MVC's compilers were busy 1–2 s a second on one CPU; settled, 0–130 ms a
// second. A target that has not told its time for jitBlind (its health endpoint answering slower
// than jitAsk under the load, or not at all) holds nothing back.
const (
	jitSpan  = 5 * time.Second
	jitQuiet = 250 * time.Millisecond
	jitAsk   = 5 * time.Second
	jitBlind = 15 * time.Second
)

// jitWatch follows a target's compilation time by asking its health endpoint once a second.
type jitWatch struct {
	url    string
	client *http.Client
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	samples []jitSample // the last jitSpan's, oldest first
}

type jitSample struct {
	at time.Time
	ms int64
}

// jitCompileMs reads jitCompileMs from a /health answer; false when it has none.
func jitCompileMs(health []byte) (int64, bool) {
	var h struct {
		JITCompileMs *int64 `json:"jitCompileMs"`
	}
	if json.Unmarshal(health, &h) != nil || h.JITCompileMs == nil {
		return 0, false
	}
	return *h.JITCompileMs, true
}

// watchJIT starts asking url (the target's health endpoint) for its compilation time; nil when
// health, its answer at startup, does not give it, or when url does not answer now. The first
// reading is taken now, not from startup: a container serves many phases, and a phase measured
// from its first request (no warm-up) would count all the compiling since startup as its own.
func watchJIT(ctx context.Context, url string, health []byte) *jitWatch {
	if _, ok := jitCompileMs(health); !ok {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &jitWatch{url: url, client: &http.Client{Timeout: jitAsk, CheckRedirect: load.NoRedirects},
		cancel: cancel, done: make(chan struct{})}
	ms, err := w.ask(ctx)
	if err != nil {
		cancel()
		return nil
	}
	w.samples = []jitSample{{time.Now(), ms}}
	go w.poll(ctx)
	return w
}

// watchJIT watches the instance's JIT, when its health answer gives its compilation time.
func (in *instance) watchJIT(ctx context.Context) *jitWatch {
	return watchJIT(ctx, in.ctr.URL()+in.c.Spec.Health, in.ctr.Health())
}

func (w *jitWatch) poll(ctx context.Context) {
	defer close(w.done)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		ms, err := w.ask(ctx)
		if err != nil {
			continue
		}
		w.mu.Lock()
		now := time.Now()
		w.samples = append(w.samples, jitSample{now, ms})
		for len(w.samples) > 1 && now.Sub(w.samples[1].at) >= jitSpan {
			w.samples = w.samples[1:]
		}
		w.mu.Unlock()
	}
}

// ask reads the compilation time from the health endpoint.
func (w *jitWatch) ask(ctx context.Context) (int64, error) {
	body, err := healthBody(ctx, w.client, w.url)
	if err != nil {
		return 0, err
	}
	ms, ok := jitCompileMs(body)
	if !ok {
		return 0, fmt.Errorf("%s: no jitCompileMs", w.url)
	}
	return ms, nil
}

// Settled says the JIT compiled less than jitQuiet over the last jitSpan (load.Config.Settled);
// true too when its time has not been read for jitBlind, which must not hold a warm-up to its
// maximum.
func (w *jitWatch) Settled() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	first, last := w.samples[0], w.samples[len(w.samples)-1]
	if time.Since(last.at) >= jitBlind {
		return true
	}
	return last.at.Sub(first.at) >= jitSpan-time.Second/2 && last.ms-first.ms < jitQuiet.Milliseconds()
}

// latest is the compilation time last read, in ms.
func (w *jitWatch) latest() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.samples[len(w.samples)-1].ms
}

// compiledDuring is how long the JIT compiled since it had compiled before ms, as the target says
// now; false when it does not answer.
func (w *jitWatch) compiledDuring(ctx context.Context, before int64) (time.Duration, bool) {
	after, err := w.ask(context.WithoutCancel(ctx))
	if err != nil {
		return 0, false
	}
	return time.Duration(after-before) * time.Millisecond, true
}

// busySince is the share of the time since from that the JIT compiled, as the target says now,
// counted from its last reading at or before from (the oldest it keeps when none is); false when
// it does not answer.
func (w *jitWatch) busySince(ctx context.Context, from time.Time) (float64, bool) {
	w.mu.Lock()
	since := w.samples[0]
	for _, s := range w.samples[1:] {
		if s.at.After(from) {
			break
		}
		since = s
	}
	w.mu.Unlock()
	busy, ok := w.compiledDuring(ctx, since.ms)
	if !ok {
		return 0, false
	}
	return busy.Seconds() / time.Since(since.at).Seconds(), true
}

// stop ends the asking.
func (w *jitWatch) stop() {
	w.cancel()
	<-w.done
}
