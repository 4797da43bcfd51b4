// Package exitcode attaches the process's exit status to an error where the error arises (as k6's
// errext does), so that a command returns errors and the command line maps any of them to its
// status in one place, without a switch that knows every kind of failure.
package exitcode

import (
	"errors"
	"fmt"
)

// The exit statuses, documented in the README, docs/ci.md and `iotbench --help`.
const (
	// OK: every cell valid; a gate passed (every gated metric equivalent or improved).
	OK = 0
	// Invalid: a run of one side completed with a cell failed or invalid; a gate failed (a gated
	// metric regressed).
	Invalid = 1
	// Usage: a usage or configuration error.
	Usage = 2
	// CouldNotRun: nothing or not everything could be measured for a reason outside the inputs
	// (no Docker engine, a results file that cannot be written). Errors without a status get it.
	CouldNotRun = 3
	// Inconclusive: a gate could not decide (a gated metric neither equivalent nor regressed; a
	// verdict resting on missing or invalid trials, or on too few for its test to reach alpha).
	Inconclusive = 4
	// Interrupted: stopped by Ctrl-C, SIGTERM or SIGHUP; 128 + SIGINT, as a shell reports it.
	Interrupted = 130
)

// Error is an error with the exit status it calls for.
type Error struct {
	Code int
	Err  error
	// Quiet: the outcome was printed already (a table of invalid cells), so the message is not.
	Quiet bool
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// With gives err the exit status code; nil stays nil.
func With(code int, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: code, Err: err}
}

// Usagef is a usage error: the input is wrong, and the message says how to mend it.
func Usagef(format string, args ...any) error { return With(Usage, fmt.Errorf(format, args...)) }

// ErrInvalidCells is a run that completed with a cell failed or invalid: its rows say why.
var ErrInvalidCells error = &Error{Code: Invalid, Err: errors.New("not every cell is valid"), Quiet: true}

// Of is err's exit status: OK for nil, the outermost status attached, else CouldNotRun.
func Of(err error) int {
	if err == nil {
		return OK
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CouldNotRun
}

// Quiet tells whether err's message was printed with the outcome already.
func Quiet(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Quiet
}

// FlagError is a flag's value that cannot be used: what the domain says of the value, named by
// the flag (cli/cli's FlagError).
type FlagError struct {
	Flag, Value string
	Err         error
}

func (e *FlagError) Error() string {
	if e.Value == "" { // a list of terms: the error names the one at fault
		return fmt.Sprintf("--%s %v", e.Flag, e.Err)
	}
	return fmt.Sprintf("--%s %s: %v", e.Flag, e.Value, e.Err)
}
func (e *FlagError) Unwrap() error { return e.Err }

// Flag is a usage error of flag's value.
func Flag(flag, value string, err error) error {
	return With(Usage, &FlagError{Flag: flag, Value: value, Err: err})
}
