package exitcode

import (
	"errors"
	"fmt"
	"testing"
)

func TestOf(t *testing.T) {
	plain := errors.New("disk full")
	for _, tc := range []struct {
		name  string
		err   error
		code  int
		quiet bool
	}{
		{"nil", nil, OK, false},
		{"an error without a status", plain, CouldNotRun, false},
		{"usage", Usagef("--rate %d: give a positive rate", -1), Usage, false},
		{"wrapped keeps its status", fmt.Errorf("experiment x: %w", Usagef("bad")), Usage, false},
		{"the outermost status wins", With(Inconclusive, fmt.Errorf("gate: %w", With(Invalid, plain))), Inconclusive, false},
		{"invalid cells are quiet", fmt.Errorf("run: %w", ErrInvalidCells), Invalid, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Of(tc.err); got != tc.code {
				t.Errorf("Of(%v) = %d, want %d", tc.err, got, tc.code)
			}
			if got := Quiet(tc.err); got != tc.quiet {
				t.Errorf("Quiet(%v) = %v, want %v", tc.err, got, tc.quiet)
			}
		})
	}
	if With(Usage, nil) != nil {
		t.Error("With(code, nil) is not nil")
	}
	if !errors.Is(With(Usage, plain), plain) {
		t.Error("With hides the error it wraps")
	}
}
