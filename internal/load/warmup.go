package load

import (
	"fmt"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/steady"
	"github.com/iotbench/iotbench/internal/timeline"
)

// DefaultWarmupMax is the most a warm-up until steady lasts when no maximum is given: past a JVM's
// compilation of a web stack on one CPU under load (75 s for Spring MVC on /ingest), short enough
// that a target that never settles costs two minutes per cell.
const DefaultWarmupMax = 2 * time.Minute

// SteadyWindow is how many of the warm-up's last complete seconds must be steady for it to end:
// long enough for a trend test to see a JIT's slow climb through per-second noise (over 10 s, a
// JVM climbing 50% still passed as steady).
const SteadyWindow = 20

// SteadyWarmup says whether a warm-up whose complete seconds so far are seconds may end before a
// measured phase of measured: its last SteadyWindow seconds, its first (cut short by the start)
// left out, are steady (steady.JudgeWarmup), a trend judged over the measured phase to come (at
// least the window).
func SteadyWarmup(seconds []timeline.Second, measured time.Duration) bool {
	if len(seconds) > 0 {
		seconds = seconds[1:]
	}
	if len(seconds) < SteadyWindow {
		return false
	}
	horizon := max(SteadyWindow, int(measured/time.Second))
	return steady.JudgeWarmup(seconds[len(seconds)-SteadyWindow:], horizon).Steady()
}

// Warmup is a warm-up setting as scenarios and the command line write it: a fixed length
// ("10s", "0s" for none), or "auto" (until steady, at most DefaultWarmupMax) and "auto:90s" (at
// most 90 s).
type Warmup struct {
	Length time.Duration // the fixed length; with Auto, the most it lasts
	Auto   bool
}

// ParseWarmup reads a warm-up setting (Warmup).
func ParseWarmup(text string) (Warmup, error) {
	text = strings.TrimSpace(text)
	if rest, ok := strings.CutPrefix(text, "auto"); ok {
		w := Warmup{Length: DefaultWarmupMax, Auto: true}
		if rest == "" {
			return w, nil
		}
		d, err := time.ParseDuration(strings.TrimPrefix(rest, ":"))
		if !strings.HasPrefix(rest, ":") || err != nil || d <= 0 {
			return Warmup{}, fmt.Errorf("warm-up %q: write auto, or auto:DURATION for its maximum (e.g. auto:90s)", text)
		}
		w.Length = d
		return w, nil
	}
	d, err := time.ParseDuration(text)
	if err != nil {
		return Warmup{}, fmt.Errorf("warm-up %q: give a duration (e.g. 10s, 0s for none), auto (until steady, at most %s) or auto:DURATION", text, DefaultWarmupMax)
	}
	return Warmup{Length: d}, nil
}

// String writes w as ParseWarmup reads it.
func (w Warmup) String() string {
	d := w.Length.String()
	if strings.HasSuffix(d, "m0s") {
		d = strings.TrimSuffix(d, "0s")
	}
	switch {
	case w.Auto && w.Length == DefaultWarmupMax:
		return "auto"
	case w.Auto:
		return "auto:" + d
	}
	return d
}

// UnmarshalText reads w as ParseWarmup does (scenario files).
func (w *Warmup) UnmarshalText(b []byte) (err error) {
	*w, err = ParseWarmup(string(b))
	return err
}

// Set implements the command line's flag.Value.
func (w *Warmup) Set(s string) (err error) {
	*w, err = ParseWarmup(s)
	return err
}

// Type implements pflag.Value.
func (*Warmup) Type() string { return "warmup" }
