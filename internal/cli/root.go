// Package cli is iotbench's command line: each command parses its flags into an options struct and
// hands it to a run function, so that parsing and behaviour are tested apart.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/iotbench/iotbench/internal/container"
	"github.com/iotbench/iotbench/internal/exitcode"
	"github.com/iotbench/iotbench/internal/safetext"
	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"
)

// Exit codes, documented in the README, docs/ci.md and `iotbench --help` (internal/exitcode:
// an error carries its status from where it arose).
const (
	ExitOK           = exitcode.OK
	ExitInvalid      = exitcode.Invalid
	ExitUsage        = exitcode.Usage
	ExitCouldNotRun  = exitcode.CouldNotRun
	ExitInconclusive = exitcode.Inconclusive
	ExitInterrupted  = exitcode.Interrupted
)

// Streams is where commands read and write.
type Streams struct {
	In     io.Reader
	Out    io.Writer // results: tables
	ErrOut io.Writer // progress and errors
	// ErrWidth, when set, is the width of the terminal ErrOut is; nil when ErrOut is not a
	// terminal (a file, a pipe, CI), where progress is plain lines.
	ErrWidth func() int
	// ErrTerminal is that terminal as it is, for the status line's own control codes; ErrOut
	// shows the control codes of what it is given (text quoted from input may hold them).
	ErrTerminal io.Writer
}

// usageError is err as a usage error (ExitUsage).
func usageError(err error) error { return exitcode.With(exitcode.Usage, err) }

func usagef(format string, args ...any) error { return exitcode.Usagef(format, args...) }

// tableFormat is format with "text", the terminal format's old name in compare, history changes
// and claims, read as "table", its name in every command; a note on errOut says so.
func tableFormat(format string, errOut io.Writer) string {
	if format != "text" {
		return format
	}
	fmt.Fprintln(errOut, "iotbench: --format text is now called table")
	return "table"
}

// noArgs refuses arguments to a command that takes none: a usage error, such as a flag's value
// given apart from a flag that takes none.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("%s takes no arguments; got %q (a flag's value goes after it, or after = for --flag=value)", cmd.CommandPath(), strings.Join(args, " "))
	}
	return nil
}

// errInvalidCells is returned when the run completed but not every cell is valid.
var errInvalidCells = exitcode.ErrInvalidCells

// NewRoot builds the command tree.
func NewRoot(s Streams) *cobra.Command {
	root := &cobra.Command{
		Use:   "iotbench",
		Short: "Benchmark server runtimes in pinned containers with honest, open-loop load",
		Long: `iotbench builds each server target in Docker, pins it to its own CPUs and memory, drives it
with open-loop load from the embedded vegeta library, and writes tables and CSV.

Numbers first: errors are never throughput, latency counts from when a request was due, a load
generator that falls behind invalidates its cell, and every target gets the same CPUs.

Exit status:
  0    every cell valid; a gate passed (every gated metric equivalent or improved)
  1    a cell failed or is invalid (a run of one side); a gate failed: a gated metric regressed
       (a paired run, compare)
  2    usage or configuration error
  3    could not run: no Docker engine, a results file that cannot be written
  4    a gate could not decide: a gated metric inconclusive or untestable (0 with
       --allow-inconclusive); compare's --fail-on or history changes resting on missing or
       invalid trials, or on too few for the test to reach its alpha: never 0
  130  interrupted (Ctrl-C, SIGTERM, SIGHUP: the running container is removed; a second one
       exits at once after a best-effort removal)`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(s.Out)
	root.SetErr(s.ErrOut)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError(err) })
	run, verify := NewCmdRun(s, nil), NewCmdVerify(s, nil)
	completeNames(run)
	completeNames(verify)
	root.AddCommand(run, verify, NewCmdList(s), NewCmdCompare(s, nil), NewCmdClean(s, nil), NewCmdReport(s, nil), NewCmdVersion(s),
		NewCmdReproduce(s, nil), NewCmdClaims(s, nil), NewCmdShard(os.Stdin, s), NewCmdReference(os.Stdin, s), NewCmdDownstream(os.Stdin, s), NewCmdK8s(s, nil))
	root.AddCommand(NewCmdHistory(s, nil))
	root.Version = strings.TrimSpace(versionLine())
	root.SetVersionTemplate("{{.Version}}\n")
	return root
}

// Main runs the command line and returns the process's exit status. ctx's cancellation is an
// interrupt (see WithInterrupts): whatever the command returns then, the run did not complete.
func Main(ctx context.Context, args []string, s Streams) int {
	return execute(ctx, NewRoot(s), args, s)
}

// execute runs root with args and maps its outcome to an exit status: the one its error carries
// (internal/exitcode), its message printed unless the outcome said it already.
func execute(ctx context.Context, root *cobra.Command, args []string, s Streams) int {
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	switch {
	case ctx.Err() != nil:
		fmt.Fprintln(s.ErrOut, "iotbench: interrupted")
		return ExitInterrupted
	case err != nil && !exitcode.Quiet(err):
		fmt.Fprintf(s.ErrOut, "iotbench: %s\n", safetext.TerminalLines(err.Error()))
	}
	return exitcode.Of(err)
}

// DefaultStreams are the process's standard streams.
func DefaultStreams() Streams {
	s := Streams{In: os.Stdin, Out: os.Stdout, ErrOut: safetext.Lines{W: os.Stderr}}
	fd := int(os.Stderr.Fd())
	if _, err := unix.IoctlGetTermios(fd, unix.TCGETS); err == nil {
		s.ErrTerminal = os.Stderr
		s.ErrWidth = func() int {
			if ws, err := unix.IoctlGetWinsize(fd, unix.TIOCGWINSZ); err == nil && ws.Col > 0 {
				return int(ws.Col)
			}
			return 80
		}
	}
	return s
}

// Interrupts are the signals iotbench handles as Ctrl-C: a service manager's stop (SIGTERM) and a
// closed terminal (SIGHUP) must not leave a container behind either.
var Interrupts = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// WithInterrupts returns a context that the first of Interrupts cancels: the run stops, keeps its
// rows and removes its container. The second exits the process at once with ExitInterrupted,
// after removing what this process started (best effort, bounded). stop restores the signals'
// default behaviour.
//
// A standard stream whose reader has gone (`iotbench run | head`) is the first interrupt too, with
// the streams it returns: SIGPIPE, which a write to a closed standard stream raises and which
// would end the process with its container running, is ignored for good, so that the write fails
// with EPIPE instead. It is not notified: a load generator's socket that its server closed raises
// it too.
func WithInterrupts(parent context.Context, s Streams) (ctx context.Context, streams Streams, stop func()) {
	sigs := make(chan os.Signal, 3)
	signal.Notify(sigs, Interrupts...)
	signal.Ignore(syscall.SIGPIPE)
	streams = onBrokenPipe(s, sigs)
	ctx, stopWatching := onInterrupt(parent, sigs, streams.ErrOut, container.RemoveMine, os.Exit)
	return ctx, streams, func() { signal.Stop(sigs); stopWatching() }
}

// onBrokenPipe is s whose writers send SIGPIPE to sigs on the first write that fails with EPIPE,
// once for all of them: stdout and stderr are often the same pipe, and a second interrupt would
// exit at once.
func onBrokenPipe(s Streams, sigs chan<- os.Signal) Streams {
	var once sync.Once
	broken := func() {
		once.Do(func() {
			select {
			case sigs <- syscall.SIGPIPE:
			default: // two signals are already waiting: the process is exiting anyway
			}
		})
	}
	wrap := func(w io.Writer) io.Writer {
		if w == nil {
			return nil
		}
		return pipeWriter{w, broken}
	}
	s.Out, s.ErrOut, s.ErrTerminal = wrap(s.Out), wrap(s.ErrOut), wrap(s.ErrTerminal)
	return s
}

// pipeWriter is w that calls broken when a write fails because its reader has gone.
type pipeWriter struct {
	w      io.Writer
	broken func()
}

func (p pipeWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	if errors.Is(err, syscall.EPIPE) {
		p.broken()
	}
	return n, err
}

// removeMineTimeout bounds the removal before an immediate exit: the user asked to stop now.
const removeMineTimeout = 15 * time.Second

// onInterrupt is WithInterrupts on a channel of signals, with its side effects given.
func onInterrupt(parent context.Context, sigs <-chan os.Signal, errOut io.Writer,
	removeMine func(context.Context) ([]string, error), exit func(int)) (context.Context, func()) {
	ctx, cancel := context.WithCancel(parent)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-sigs:
			fmt.Fprintf(errOut, "iotbench: %v: stopping, removing the running container (again to exit at once)\n", sig)
			cancel()
		case <-done:
			return
		}
		select {
		case sig := <-sigs:
			fmt.Fprintf(errOut, "iotbench: %v again: removing this process's containers and exiting\n", sig)
			rctx, cancelRemove := context.WithTimeout(context.Background(), removeMineTimeout)
			names, err := removeMine(rctx)
			cancelRemove()
			for _, n := range names {
				fmt.Fprintf(errOut, "removed %s\n", n)
			}
			if err != nil {
				fmt.Fprintf(errOut, "iotbench: removing this process's containers: %v (`iotbench clean` removes them once this process is gone)\n", err)
			}
			exit(ExitInterrupted)
		case <-done:
		}
	}()
	var once sync.Once
	return ctx, func() { once.Do(func() { close(done) }); cancel() }
}
