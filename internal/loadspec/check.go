package loadspec

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/protocol"
)

// Error is a setting whose value cannot be used. Its producer says where it was given: the
// command line as `--KEY VALUE: Err`, a file at the setting's line.
type Error struct {
	Key   Key
	Value string
	Err   error
}

func (e *Error) Error() string { return e.Key.Flag() + " " + e.Value + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Value writes the setting's value as the command line would.
func (s Spec) Value(k Key) string {
	if st, ok := settings[k]; ok {
		return st.value(s)
	}
	return ""
}

// bound checks one setting's value against its bounds.
func (s Spec) bound(k Key) error {
	if st, ok := settings[k]; ok && st.bound != nil {
		return st.bound(s)
	}
	return nil
}

// checkStages refuses stages that send nothing or last too long.
func checkStages(stages []load.Stage) error {
	if err := load.CheckStages(stages); err != nil {
		return err
	}
	if d := load.StagesDuration(stages); CheckPhase(d) != nil {
		return fmt.Errorf("they last %s: %w", FormatDuration(d), CheckPhase(d))
	}
	return nil
}

// checkProtocol refuses a protocol the engine does not speak, without repeating its name, which
// the setting's error gives.
func checkProtocol(p protocol.Protocol) error { return unnamed(protocol.Check(p)) }

// Problems are what is wrong with the settings s gives: each against its bounds, then as one
// loop (a rate, stages or connections, one of them; stages that set the phase's length alone).
// Each names its setting.
func (s Spec) Problems() []*Error {
	var out []*Error
	for _, k := range s.Given {
		if err := s.bound(k); err != nil {
			out = append(out, &Error{k, s.Value(k), err})
		}
	}
	loops := 0
	for _, k := range []Key{Rate, Connections, Stages} {
		if s.Gives(k) {
			loops++
		}
	}
	switch {
	case loops > 1 && s.Gives(Stages):
		out = append(out, &Error{Stages, s.Value(Stages), errors.New("give stages, a rate or connections, one of them")})
	case loops > 1:
		out = append(out, &Error{Rate, s.Value(Rate), errors.New("a rate (open loop) or connections (closed loop), not both")})
	case s.Gives(Stages) && s.Gives(Duration):
		out = append(out, &Error{Duration, s.Value(Duration), fmt.Errorf("the stages (%s) set the measured phase's length", load.FormatStages(s.Stages))})
	}
	return out
}

// Misfits are the settings s gives that whole (s itself, or s laid over another spec) has no use
// for: a think time in an open loop, an arrival process in a closed one, a protocol's parameters
// under a protocol without them, a timeout shorter than the expected latency or not above
// minLatency (the least the work takes: a check's min_latency; 0 when none).
func (s Spec) Misfits(whole Spec, minLatency time.Duration) []*Error {
	var out []*Error
	misfit := func(k Key, text string) { out = append(out, &Error{k, s.Value(k), errors.New(text)}) }
	p := whole.Protocol.Or()
	if s.Gives(Think) && whole.Loop() == load.Open {
		misfit(Think, "a think time paces a closed loop: give connections, not a rate")
	}
	if s.Gives(Arrival) && whole.Loop() == load.Closed {
		misfit(Arrival, "an arrival process paces an open loop: give a rate, not connections")
	}
	if s.Gives(H2Streams) && !p.HTTP2() && protocol.Check(p) == nil {
		misfit(H2Streams, fmt.Sprintf("streams belong to HTTP/2 (h2, h2c), not %s: give protocol h2 or h2c", p))
	}
	if s.Gives(TLSResumption) && whole.TLSResumption && !p.TLS() && protocol.Check(p) == nil {
		misfit(TLSResumption, fmt.Sprintf("resumption belongs to a protocol over TLS (https, h2), not %s: give protocol https or h2", p))
	}
	waits := CheckWait(whole.Timeout) == nil && CheckWait(whole.ExpectedLatency) == nil
	if waits && (s.Gives(Timeout) || s.Gives(ExpectedLatency) || minLatency > 0) {
		if err := CheckTimeout(whole.Timeout, whole.ExpectedLatency, minLatency); err != nil {
			out = append(out, &Error{Timeout, whole.Value(Timeout), err})
		}
	}
	return out
}

// Check is the first of s's problems: what can be said before s is laid over the spec it
// changes (Over, which finds its misfits).
func (s Spec) Check() error {
	if e := s.Problems(); len(e) > 0 {
		return e[0]
	}
	return nil
}

// unnamed is a protocol's error without the value the setting's error names already.
func unnamed(err error) error {
	if err == nil {
		return nil
	}
	if _, rest, ok := strings.Cut(err.Error(), ": "); ok {
		return errors.New(rest)
	}
	return err
}

// CheckStreams checks an HTTP/2 connection's streams.
func CheckStreams(n int) error {
	if n < 1 || n > load.MaxStreams {
		return fmt.Errorf("give 1 to %d streams per connection", load.MaxStreams)
	}
	return nil
}
