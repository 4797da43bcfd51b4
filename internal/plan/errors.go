package plan

import (
	"fmt"

	"github.com/iotbench/iotbench/internal/scenario"
)

// OverrideError is a value of Overrides that cannot be used. Setting is its name in lower case,
// as the command line's flag is (targets, cpus, memory); the command line adds the flag.
type OverrideError struct {
	Setting, Value string
	Err            error
}

func (e *OverrideError) Error() string { return e.Setting + " " + e.Value + ": " + e.Err.Error() }
func (e *OverrideError) Unwrap() error { return e.Err }

// settingError names a setting that cannot be used where it was given: the command line's
// override when there is one, else the scenario file at the setting's line.
func settingError(f *scenario.File, s scenario.Settings, where, key, override, value string, err error) error {
	if override != "" {
		return &OverrideError{Setting: key, Value: override, Err: err}
	}
	if line := s.Lines[key]; line > 0 {
		return fmt.Errorf("%s:%d: %s: %s %s: %w", f.Path, line, where, key, value, err)
	}
	return fmt.Errorf("%s: %s: %s %s: %w", f.Path, where, key, value, err)
}
