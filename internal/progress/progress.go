// Package progress shows where a run is on a terminal: one status line, rewritten in place under
// the run's log lines (cell i of n, target, phase, the matrix's elapsed and remaining time, the
// last second's rate, errors and p99). Where output is not a terminal (CI logs) the log lines,
// which are plain events, are all there is.
package progress

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/safetext"
	"github.com/iotbench/iotbench/internal/timeline"
	"github.com/iotbench/iotbench/internal/units"
)

// overhead is what a cell costs besides its load, for the first estimate of the time left:
// starting and verifying a container.
const overhead = 10 * time.Second

// Line is a status line on a terminal. As an io.Writer it passes log text through, taking the
// status line away first and drawing it again after. Its methods are safe for concurrent use.
type Line struct {
	w     io.Writer
	width func() int // the terminal's columns
	now   func() time.Time

	mu        sync.Mutex
	shown     bool
	began     time.Time
	i, n      int
	cell      string
	phase     string
	planned   time.Duration // the current cell's warm-up and measured phase
	cellBegan time.Time
	done      int
	doneTime  time.Duration
	last      *timeline.Second
	elapsed   time.Duration // of the phase
	phaseLen  time.Duration
}

// New writes status to w, a terminal width() columns wide.
func New(w io.Writer, width func() int) *Line {
	return &Line{w: w, width: width, now: time.Now}
}

// Write passes p on, keeping the status line under it. Log lines quote what targets said (a
// reason, a log's last lines): their control codes are shown, not obeyed, so that they can
// neither move the cursor over the status line nor rewrite lines above it.
func (l *Line) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.clearLocked()
	_, err := io.WriteString(l.w, safetext.TerminalLines(string(p)))
	l.drawLocked()
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close takes the status line away, for what is printed after the run.
func (l *Line) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.clearLocked()
	l.began = time.Time{}
}

// Cell implements bench.Status.
func (l *Line) Cell(i, n int, c plan.Cell) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if l.began.IsZero() {
		l.began = now
	}
	l.i, l.n = i, n
	l.cell = fmt.Sprintf("%s · %s · trial %d", c.Scenario, c.Target, c.Trial)
	l.phase, l.last, l.elapsed, l.phaseLen = "start", nil, 0, 0
	l.planned = c.Load.Warmup + c.Load.Duration
	l.cellBegan = now
	l.redrawLocked()
}

// Phase implements bench.Status.
func (l *Line) Phase(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.began.IsZero() {
		l.began = l.now()
	}
	l.phase = name
	l.redrawLocked()
}

// Second implements bench.Status.
func (l *Line) Second(p load.Progress) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.phase = string(p.Phase)
	if p.Phase == timeline.Warmup {
		l.phase = "warm-up"
	}
	l.elapsed, l.phaseLen = p.Elapsed, p.Duration
	if p.Last.Sent > 0 || p.Last.Successes > 0 || p.Last.Errors() > 0 {
		s := p.Last
		l.last = &s
	}
	l.redrawLocked()
}

// Done implements bench.Status.
func (l *Line) Done(results.Row) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.done++
	l.doneTime += l.now().Sub(l.cellBegan)
	l.redrawLocked()
}

// Text is the status line as it stands, before it is cut to the terminal's width.
func (l *Line) Text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.textLocked()
}

func (l *Line) textLocked() string {
	var parts []string
	if l.n > 0 {
		parts = append(parts, fmt.Sprintf("[%d/%d] %s", l.i, l.n, l.cell))
	}
	phase := l.phase
	if l.phaseLen > 0 && (phase == "warm-up" || phase == string(timeline.Measure)) {
		phase += fmt.Sprintf(" %s/%s", l.elapsed.Truncate(time.Second), l.phaseLen)
	}
	if phase != "" {
		parts = append(parts, phase)
	}
	if !l.began.IsZero() {
		el := l.now().Sub(l.began).Truncate(time.Second)
		if left, ok := l.leftLocked(); ok {
			parts = append(parts, fmt.Sprintf("%s elapsed, ~%s left", el, left.Round(time.Second)))
		} else {
			parts = append(parts, fmt.Sprintf("%s elapsed", el))
		}
	}
	if s := l.last; s != nil {
		parts = append(parts, fmt.Sprintf("%d rps, %d errors, p99 %s", s.Successes, s.Errors(), units.Millis(s.P99)))
	}
	return strings.Join(parts, " · ")
}

// leftLocked estimates the matrix's time left: the cells to come at the mean time of those done
// (before any, their warm-up and measured phase and a start's overhead), and what remains of this one.
func (l *Line) leftLocked() (time.Duration, bool) {
	if l.n == 0 {
		return 0, false
	}
	per := l.planned + overhead
	if l.done > 0 {
		per = l.doneTime / time.Duration(l.done)
	}
	current := max(per-l.now().Sub(l.cellBegan), 0)
	if l.i <= l.done { // the current cell is done
		current = 0
	}
	return time.Duration(l.n-l.i)*per + current, true
}

func (l *Line) redrawLocked() {
	l.clearLocked()
	l.drawLocked()
}

func (l *Line) drawLocked() {
	if l.began.IsZero() {
		return
	}
	text := safetext.Terminal(l.textLocked())
	if w := l.width(); w > 1 && utf8.RuneCountInString(text) >= w {
		r := []rune(text)
		text = string(r[:w-2]) + "…"
	}
	fmt.Fprint(l.w, text)
	l.shown = true
}

// clearLocked takes the status line away: back to the line's start, erase it.
func (l *Line) clearLocked() {
	if l.shown {
		fmt.Fprint(l.w, "\r\033[K")
		l.shown = false
	}
}
