package loadspec

import (
	"fmt"
	"strconv"
	"time"

	"github.com/iotbench/iotbench/internal/arrival"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/protocol"
)

// setting is how one setting of a Spec is read from its text, written back, bounded and taken
// from one spec into another.
type setting struct {
	parse func(s *Spec, text string) error
	value func(s Spec) string
	bound func(s Spec) error // nil: any value that reads
	take  func(to *Spec, from Spec)
}

// field is the setting of the field at, read by parse, written by format, bounded by bound (nil:
// none).
func field[T any](at func(*Spec) *T, parse func(string) (T, error), format func(T) string, bound func(T) error) setting {
	st := setting{
		parse: func(s *Spec, text string) error {
			v, err := parse(text)
			if err == nil {
				*at(s) = v
			}
			return err
		},
		value: func(s Spec) string { return format(*at(&s)) },
		take:  func(to *Spec, from Spec) { *at(to) = *at(&from) },
	}
	if bound != nil {
		st.bound = func(s Spec) error { return bound(*at(&s)) }
	}
	return st
}

// text reads a setting that is its own text (a name), checked by its bound.
func text[T ~string](t string) (T, error) { return T(t), nil }

// name writes a setting that is its own text.
func name[T ~string](v T) string { return string(v) }

// settings are every setting of a Spec, by Key: adding a setting adds its entry here.
var settings = map[Key]setting{
	Rate:            field(func(s *Spec) *int { return &s.Rate }, strconv.Atoi, strconv.Itoa, CheckRate),
	Connections:     field(func(s *Spec) *int { return &s.Connections }, strconv.Atoi, strconv.Itoa, CheckConnections),
	Stages:          field(func(s *Spec) *[]load.Stage { return &s.Stages }, load.ParseStages, load.FormatStages, checkStages),
	Arrival:         field(func(s *Spec) *arrival.Process { return &s.Arrival }, text[arrival.Process], name[arrival.Process], arrival.Check),
	Think:           field(func(s *Spec) *load.Think { return &s.Think }, load.ParseThink, load.Think.String, nil),
	ExpectedLatency: field(func(s *Spec) *time.Duration { return &s.ExpectedLatency }, time.ParseDuration, FormatDuration, CheckWait),
	Timeout:         field(func(s *Spec) *time.Duration { return &s.Timeout }, time.ParseDuration, FormatDuration, CheckWait),
	Warmup:          field(func(s *Spec) *load.Warmup { return &s.Warmup }, load.ParseWarmup, load.Warmup.String, func(w load.Warmup) error { return CheckWarmup(w.Length) }),
	Duration:        field(func(s *Spec) *time.Duration { return &s.Duration }, time.ParseDuration, FormatDuration, CheckPhase),
	Trials:          field(func(s *Spec) *int { return &s.Trials }, strconv.Atoi, strconv.Itoa, CheckTrials),
	Compat:          field(func(s *Spec) *load.Compat { return &s.Compat }, text[load.Compat], name[load.Compat], load.CheckCompat),
	Protocol:        field(func(s *Spec) *protocol.Protocol { return &s.Protocol }, text[protocol.Protocol], name[protocol.Protocol], checkProtocol),
	H2Streams:       field(func(s *Spec) *int { return &s.H2Streams }, strconv.Atoi, strconv.Itoa, CheckStreams),
	TLSResumption:   field(func(s *Spec) *bool { return &s.TLSResumption }, strconv.ParseBool, strconv.FormatBool, nil),
	NewConnection:   field(func(s *Spec) *bool { return &s.NewConnection }, strconv.ParseBool, strconv.FormatBool, nil),
}

// Set reads one setting as the command line writes it (30s:500,60s:500-5000 for stages,
// exp:100ms for a think time) and marks it given; its bounds are Check's.
func (s *Spec) Set(k Key, text string) error {
	st, ok := settings[k]
	if !ok {
		return fmt.Errorf("%q is no load setting", k)
	}
	if err := st.parse(s, text); err != nil {
		return &Error{k, text, err}
	}
	s.Give(k)
	return nil
}
