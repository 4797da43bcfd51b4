package load

import (
	"time"

	"github.com/iotbench/iotbench/internal/steady"
	"github.com/iotbench/iotbench/internal/timeline"
)

// DefaultWarmupMax is the most a warm-up until steady lasts when no maximum is given: past a JVM's
// compilation of a web stack on one CPU (seconds to tens of seconds), short enough that a target
// that never settles costs a minute per cell.
const DefaultWarmupMax = 60 * time.Second

// SteadyWindow is how many of the warm-up's last complete seconds must be steady (steady.Judge:
// no significant and large trend in throughput, p50, p99 or errors) for it to end.
const SteadyWindow = 10

// SteadyWarmup says whether a warm-up whose complete seconds so far are seconds may end: its last
// SteadyWindow seconds, its first (cut short by the start) left out, are steady.
func SteadyWarmup(seconds []timeline.Second) bool {
	if len(seconds) > 0 {
		seconds = seconds[1:]
	}
	if len(seconds) < SteadyWindow {
		return false
	}
	// Judge leaves out the last second it is given, the one a phase's end cuts short: these
	// are all complete, so one more is given than it judges.
	window := seconds[len(seconds)-SteadyWindow:]
	window = append(window[:SteadyWindow:SteadyWindow], timeline.Second{})
	return steady.Judge(window).Steady()
}
