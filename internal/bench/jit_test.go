package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/results"
)

// compiling serves a health answer whose jitCompileMs grows from before at rate (ms a second of
// wall time) until until, then stays.
func compiling(before int64, rate float64, until time.Duration) (http.HandlerFunc, *atomic.Int64) {
	began := time.Now()
	asked := &atomic.Int64{}
	return func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		busy := min(time.Since(began), until)
		fmt.Fprintf(w, `{"id":1,"status":"UP","jitCompileMs":%d}`, before+int64(rate*busy.Seconds()))
	}, asked
}

func TestJITCompileMs(t *testing.T) {
	for _, c := range []struct {
		health string
		ms     int64
		ok     bool
	}{
		{`{"status":"UP","jitCompileMs":14492}`, 14492, true},
		{`{"status":"UP","jitCompileMs":null}`, 0, false},
		{`{"status":"UP","runtime":"node"}`, 0, false},
		{`not json`, 0, false},
	} {
		if ms, ok := jitCompileMs([]byte(c.health)); ms != c.ms || ok != c.ok {
			t.Errorf("%s: %d %v, want %d %v", c.health, ms, ok, c.ms, c.ok)
		}
	}
}

func TestJITWatchSettlesOnceCompilationStops(t *testing.T) {
	// A JIT compiling at a CPU's worth for 2 s, then not at all: settled once a whole jitSpan
	// has passed with no growth, not before.
	h, asked := compiling(0, 1000, 2*time.Second)
	srv := httptest.NewServer(h)
	defer srv.Close()
	if w := watchJIT(context.Background(), srv.URL, []byte(`{"status":"UP"}`)); w != nil {
		t.Fatal("a target whose health gives no jitCompileMs is watched")
	}
	began := time.Now()
	w := watchJIT(context.Background(), srv.URL, []byte(`{"jitCompileMs":0}`))
	defer w.stop()
	for !w.Settled() {
		if time.Since(began) > 20*time.Second {
			t.Fatalf("not settled after 20 s (%d ms compiled)", w.latest())
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Compiling for 2 s, then quiet for a jitSpan: never before 2 s + jitSpan less the tick's slack.
	if took := time.Since(began); took < 2*time.Second+jitSpan-time.Second {
		t.Errorf("settled after %v, while it compiled until 2 s", took)
	}
	if asked.Load() == 0 || w.latest() < 1500 {
		t.Errorf("asked %d times, %d ms compiled last read: want the 2 s of compiling seen", asked.Load(), w.latest())
	}
}

func TestJITWatchHoldsNothingWhenItCannotAsk(t *testing.T) {
	if w := watchJIT(context.Background(), httptest.NewServer(http.NotFoundHandler()).URL, []byte(`{"jitCompileMs":10}`)); w != nil {
		t.Error("a target whose health endpoint does not answer before the load is watched")
	}
	h, _ := compiling(0, 1000, time.Hour)
	srv := httptest.NewServer(h)
	w := watchJIT(context.Background(), srv.URL, []byte(`{"jitCompileMs":10}`))
	defer w.stop()
	srv.Close()
	began := time.Now()
	for deadline := began.Add(jitBlind + 5*time.Second); !w.Settled(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a health endpoint that stopped answering holds the warm-up")
		}
	}
	// A slow answer or two under load is not a JIT that has settled: only a long silence is.
	if took := time.Since(began); took < jitBlind-time.Second {
		t.Errorf("settled %v after its endpoint stopped answering, want about %v", took, jitBlind)
	}
}

func TestCompilingDuringTheMeasuredPhaseIsAWarning(t *testing.T) {
	// Through a 1-s phase with no warm-up: a JIT compiling 1,000 ms a second is a target still
	// warming up, and its row says so: its figures stand, but carry no verdict; a settled one's odd
	// recompilations, 100 ms a second, are not. Either way the row has the JIT's busy time.
	// The busy time is the phase's own: a container measured before (its JIT 20 s busy since
	// startup, as its startup health answer does not say) counts none of it.
	for _, c := range []struct {
		msPerS float64
		warned bool
		before int64 // ms compiled since startup before the phase
	}{{1000, true, 0}, {100, false, 0}, {100, false, 20000}} {
		h, _ := compiling(c.before, c.msPerS, time.Hour)
		l := &observedLifecycle{fakeLifecycle: fakeLifecycle{handler: map[string]http.HandlerFunc{"t": h}},
			src: &steadyUsage{}, health: `{"status":"UP","jitCompileMs":0}`}
		var recorded []results.Row
		r := &Runner{Lifecycle: l, Log: &strings.Builder{}, Record: func(row results.Row) error { recorded = append(recorded, row); return nil }}
		if _, err := r.Run(context.Background(), planFor("t")); err != nil {
			t.Fatal(err)
		}
		if len(recorded) != 1 {
			t.Fatalf("%v ms/s after %d: rows %+v, want one", c.msPerS, c.before, recorded)
		}
		warned := strings.Contains(recorded[0].Warnings, "the JIT compiled for ") && strings.Contains(recorded[0].Warnings, "still warming up")
		if warned != c.warned {
			t.Errorf("compiling %v ms a second: warned %v (%q), want %v", c.msPerS, warned, recorded[0].Warnings, c.warned)
		}
		row := recorded[0]
		if share := row.JITBusy.Seconds() / row.Duration.Seconds(); !row.JITJudged || share < 0.5*c.msPerS/1000 || share > 2*c.msPerS/1000 {
			t.Errorf("compiling %v ms a second: JIT busy %v over %v (judged %v), want about that share", c.msPerS, row.JITBusy, row.Duration, row.JITJudged)
		}
		if distrusted := row.Distrust() == results.DistrustWarming; distrusted != c.warned {
			t.Errorf("compiling %v ms a second: distrust %q, want %q only when warned", c.msPerS, row.Distrust(), results.DistrustWarming)
		}
	}
}
