package progress

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/timeline"
)

// clock is a test's time, moved by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func cell(target string, trial int) plan.Cell {
	c := plan.Cell{Scenario: "io-heavy", Target: target, Trial: trial}
	c.Load.Warmup, c.Load.Duration = 10*time.Second, 30*time.Second
	return c
}

func TestStatusText(t *testing.T) {
	clk := &clock{t: time.Unix(1_700_000_000, 0)}
	var out bytes.Buffer
	l := New(&out, func() int { return 200 })
	l.now = clk.now
	steps := []struct {
		do   func()
		want string
	}{
		{func() { l.Phase("build 1/1 iotbench/js:latest") }, "build 1/1 iotbench/js:latest · 0s elapsed"},
		{func() { clk.t = clk.t.Add(20 * time.Second); l.Cell(1, 4, cell("fastify", 1)) },
			// 4 cells of 10 s + 30 s + 10 s start each: 200 s, none done.
			"[1/4] io-heavy · fastify · trial 1 · start · 20s elapsed, ~3m20s left"},
		{func() {
			clk.t = clk.t.Add(5 * time.Second)
			l.Second(load.Progress{Phase: timeline.Warmup, Elapsed: 2 * time.Second, Duration: 10 * time.Second,
				Last: timeline.Second{Sent: 1000, Successes: 998, Status: 2, P99: 3200 * time.Microsecond}})
		}, "[1/4] io-heavy · fastify · trial 1 · warm-up 2s/10s · 25s elapsed, ~3m15s left · 998 rps, 2 errors, p99 3.20 ms"},
		{func() {
			clk.t = clk.t.Add(55 * time.Second)
			l.Done(results.Row{})
			l.Cell(2, 4, cell("koa", 1))
		},
			// The first cell took 60 s: three more at 60 s.
			"[2/4] io-heavy · koa · trial 1 · start · 1m20s elapsed, ~3m0s left"},
	}
	for i, s := range steps {
		s.do()
		if got := l.Text(); got != s.want {
			t.Errorf("step %d: %q, want %q", i, got, s.want)
		}
	}
}

func TestLogLinesPassUnderTheStatusLine(t *testing.T) {
	var out bytes.Buffer
	l := New(&out, func() int { return 30 })
	l.Cell(1, 2, cell("fastify", 1))
	out.Reset()
	if _, err := l.Write([]byte("  healthy in 1.2s\n")); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	// Erased, the log line, then the status line again, cut to the terminal's 30 columns.
	if !strings.HasPrefix(got, "\r\033[K  healthy in 1.2s\n[1/2] io-heavy") || !strings.HasSuffix(got, "…") {
		t.Errorf("wrote %q", got)
	}
	if n := len([]rune(got[strings.LastIndex(got, "\n")+1:])); n != 29 {
		t.Errorf("status line of %d columns on a 30-column terminal", n)
	}
	out.Reset()
	l.Close()
	if out.String() != "\r\033[K" {
		t.Errorf("Close wrote %q, want the line erased", out.String())
	}
}

// TestLogLinesShowControlCodes: a log line quoting a target (its reason, its log) cannot move the
// cursor over the status line or erase what was printed; its line ends stay line ends.
func TestLogLinesShowControlCodes(t *testing.T) {
	var out bytes.Buffer
	l := New(&out, func() int { return 200 })
	l.Cell(1, 2, cell("fastify", 1))
	l.Phase("verify \x1b[1A")
	out.Reset()
	line := "  last lines of the target's log:\n\x1b[2J\x1b[Hcandidate: equivalent\r\n"
	if n, err := l.Write([]byte(line)); err != nil || n != len(line) {
		t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(line))
	}
	want := "\r\033[K  last lines of the target's log:\n\\x1b[2J\\x1b[Hcandidate: equivalent\\r\n" +
		"[1/2] io-heavy · fastify · trial 1 · verify \\x1b[1A"
	if got := out.String(); !strings.HasPrefix(got, want) {
		t.Errorf("wrote %q, want it to begin %q", got, want)
	}
}
