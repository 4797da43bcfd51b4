// Package cli is iotbench's command line: each command parses its flags into an options struct and
// hands it to a run function, so that parsing and behaviour are tested apart.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

// Exit codes, documented in the README and in `iotbench --help`.
const (
	ExitOK      = 0 // every cell valid
	ExitInvalid = 1 // a cell failed or is invalid, or the run could not complete
	ExitUsage   = 2 // usage or configuration error
)

// Streams is where commands read and write.
type Streams struct {
	In     io.Reader
	Out    io.Writer // results: tables
	ErrOut io.Writer // progress and errors
}

// usageError marks errors that exit with ExitUsage.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// errInvalidCells is returned when the run completed but not every cell is valid.
var errInvalidCells = errors.New("not every cell is valid")

// NewRoot builds the command tree.
func NewRoot(s Streams) *cobra.Command {
	root := &cobra.Command{
		Use:   "iotbench",
		Short: "Benchmark server runtimes in pinned containers with honest, open-loop load",
		Long: `iotbench builds each server target in Docker, pins it to its own CPUs and memory, drives it
with open-loop load from the embedded vegeta library, and writes tables and CSV.

Numbers first: errors are never throughput, latency counts from when a request was due, a load
generator that falls behind invalidates its cell, and every target gets the same CPUs.

Exit status: 0 every cell valid; 1 a cell failed or is invalid; 2 usage or configuration error.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(s.Out)
	root.SetErr(s.ErrOut)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(NewCmdRun(s, nil), NewCmdVerify(s), NewCmdList(s), NewCmdCompare(s, nil), NewCmdVersion(s))
	return root
}

// Main runs the command line and returns the process's exit status.
func Main(ctx context.Context, args []string, s Streams) int {
	root := NewRoot(s)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	var ue usageError
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, errInvalidCells):
		return ExitInvalid
	case errors.As(err, &ue):
		fmt.Fprintf(s.ErrOut, "iotbench: %v\n", err)
		return ExitUsage
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(s.ErrOut, "iotbench: interrupted")
		return ExitInvalid
	default:
		fmt.Fprintf(s.ErrOut, "iotbench: %v\n", err)
		return ExitInvalid
	}
}

// DefaultStreams are the process's standard streams.
func DefaultStreams() Streams { return Streams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr} }
