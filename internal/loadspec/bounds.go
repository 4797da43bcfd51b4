package loadspec

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/load"
)

// The bounds of the load settings, whoever gives them: a scenario file, the command line, an
// experiment's run. Each check says what is wrong with a value and what to do, without naming the
// setting: the file's errors read `file:line: scenario "s": duration 0s: …`, the command line's
// `--duration 0s: …`. docs/scenarios.md explains each bound.
const (
	// MinPhase is the shortest measured phase: rates are per second, and at the least rate, 1 rps,
	// a shorter phase may send no request at all.
	MinPhase = time.Second
	// MaxDuration bounds every duration and timeout: longer is a typo (30000s for 300s); a phase
	// of a day, repeated per trial and target, is no benchmark run.
	MaxDuration = 24 * time.Hour
	// MaxTrials bounds the trials per target: each starts a fresh container.
	MaxTrials = 1000
)

// FormatDuration writes a duration without its zero minutes and seconds: 24h, not 24h0m0s.
func FormatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// CheckPhase checks the length of a measured phase (duration, a find-max step).
func CheckPhase(d time.Duration) error {
	switch {
	case d <= 0:
		return errors.New("must be positive, e.g. 30s")
	case d < MinPhase:
		return fmt.Errorf("under %s: rates are per second, and at 1 rps a shorter phase may send no request; give %s or more", FormatDuration(MinPhase), FormatDuration(MinPhase))
	}
	return checkRecorded(d)
}

// CheckWarmup checks a warm-up's length; 0 is none.
func CheckWarmup(d time.Duration) error {
	if d < 0 {
		return errors.New("must not be negative (0s for no warm-up)")
	}
	return checkRecorded(d)
}

// checkRecorded bounds a duration that rows record, in seconds to the millisecond.
func checkRecorded(d time.Duration) error {
	switch {
	case d > MaxDuration:
		return fmt.Errorf("over %s, the longest iotbench measures (a typo?)", FormatDuration(MaxDuration))
	case d%time.Millisecond != 0:
		return errors.New("a fraction of a millisecond, which results do not record: give whole milliseconds")
	}
	return nil
}

// CheckWait checks a timeout or an expected latency.
func CheckWait(d time.Duration) error {
	switch {
	case d <= 0:
		return errors.New("must be positive, e.g. 10s")
	case d > MaxDuration:
		return fmt.Errorf("over %s, the longest iotbench waits (a typo?)", FormatDuration(MaxDuration))
	}
	return nil
}

// CheckTimeout checks a request timeout against what an answer is expected to take (expected
// latency) and must take (a check's min_latency; 0 when none): either above it makes every such
// answer an error.
func CheckTimeout(timeout, expected, minLatency time.Duration) error {
	switch {
	case minLatency > 0 && timeout <= minLatency:
		return fmt.Errorf("not above the work's minimum latency %s: every successful answer would time out; give a longer timeout", FormatDuration(minLatency))
	case timeout < expected:
		return fmt.Errorf("shorter than the expected latency %s: an answer as slow as expected would time out; give a longer timeout or a shorter expected latency", FormatDuration(expected))
	}
	return nil
}

// CheckRate checks an open loop's rate, in requests per second.
func CheckRate(n int) error {
	if n < 1 {
		return errors.New("must be at least 1 (requests per second)")
	}
	return nil
}

// CheckConnections checks a closed loop's connections: each is a socket and a worker of the
// generator, which keeps at most load.MaxInFlight requests in flight.
func CheckConnections(n int) error {
	switch {
	case n < 1:
		return errors.New("must be at least 1")
	case n > load.MaxInFlight:
		return fmt.Errorf("over %d, the most requests the load generator keeps in flight", load.MaxInFlight)
	}
	return nil
}

// CheckTrials checks the trials per target.
func CheckTrials(n int) error {
	switch {
	case n < 1:
		return errors.New("must be at least 1 (5 or more to rank targets)")
	case n > MaxTrials:
		return fmt.Errorf("over %d, each a fresh container per target (a typo?)", MaxTrials)
	}
	return nil
}
