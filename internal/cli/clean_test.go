package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/container"
)

// fakeEngine holds containers as the engine would list them; RemoveLeftovers selects as
// container.Docker does and fails on the names in broken.
type fakeEngine struct {
	found  []container.Found
	broken map[string]bool
	got    *container.Cleanup
	closed bool
}

func (e *fakeEngine) RemoveLeftovers(_ context.Context, c container.Cleanup) ([]container.Found, error) {
	e.got = &c
	var out []container.Found
	var errs []error
	for _, f := range e.found {
		if !c.Every && f.Owner != container.OwnerGone {
			continue
		}
		if !c.DryRun && e.broken[f.Name] {
			errs = append(errs, fmt.Errorf("removing container %s: engine says no", f.Name))
			continue
		}
		out = append(out, f)
	}
	return out, errors.Join(errs...)
}

func (e *fakeEngine) Close() error { e.closed = true; return nil }

var cleanNow = time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)

func leftovers() []container.Found {
	return []container.Found{
		{Name: "iotbench-fastify-4242-17", Target: "fastify", RunID: "20260304T093000Z-4242", PID: 4242, Created: cleanNow.Add(-150 * time.Minute), State: "running", Owner: container.OwnerGone},
		{Name: "iotbench-koa-4242-18", Target: "koa", RunID: "20260304T093000Z-4242", PID: 4242, Created: cleanNow.Add(-149 * time.Minute), State: "exited", Owner: container.OwnerGone},
		{Name: "iotbench-express-977-3", Target: "express", RunID: "20260304T115900Z-977", PID: 977, Created: cleanNow.Add(-40 * time.Second), State: "running", Owner: container.OwnerAlive},
		{Name: "iotbench-nestjs-12-5", Target: "nestjs", Created: cleanNow.Add(-50 * time.Hour), State: "exited", Owner: container.OwnerUnknown},
	}
}

// TestCleanGolden runs `iotbench clean` against a fake engine and checks its whole output and exit
// status against a golden file per case (-update rewrites them).
func TestCleanGolden(t *testing.T) {
	cases := []struct {
		name   string
		args   string
		found  []container.Found
		broken string
	}{
		{"leftovers", "", leftovers(), ""},
		{"dry-run", "--dry-run", leftovers(), ""},
		{"all", "--all", leftovers(), ""},
		{"all-dry-run", "--all --dry-run", leftovers(), ""},
		{"nothing-left", "", leftovers()[2:], ""},
		{"nothing-at-all", "--all", nil, ""},
		{"one-fails", "", leftovers(), "iotbench-koa-4242-18"},
	}
	dir := filepath.Join("testdata", "clean")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, out, errOut := streams()
			engine := &fakeEngine{found: c.found, broken: map[string]bool{c.broken: true}}
			root := NewRoot(s)
			for _, cmd := range root.Commands() {
				if cmd.Name() == "clean" {
					root.RemoveCommand(cmd)
				}
			}
			root.AddCommand(NewCmdClean(s, func(ctx context.Context, o *CleanOptions) error {
				o.Engine = func(context.Context) (Cleaner, error) { return engine, nil }
				o.Now = func() time.Time { return cleanNow }
				return cleanRun(ctx, o)
			}))
			code := execute(context.Background(), root, append([]string{"clean"}, strings.Fields(c.args)...), s)
			got := fmt.Sprintf("$ %s\n%s--- stderr\n%s--- exit %d\n", strings.TrimSpace("iotbench clean "+c.args), out, errOut, code)
			golden := filepath.Join(dir, c.name+".golden")
			checkGolden(t, golden, got)
			if !engine.closed {
				t.Error("the engine was not closed")
			}
		})
	}
}

func TestCleanFlagsFillOptions(t *testing.T) {
	cases := []struct {
		args        []string
		all, dryRun bool
	}{
		{[]string{}, false, false},
		{[]string{"--all"}, true, false},
		{[]string{"--dry-run"}, false, true},
		{[]string{"--all", "--dry-run"}, true, true},
	}
	for _, c := range cases {
		s, _, _ := streams()
		var got *CleanOptions
		cmd := NewCmdClean(s, func(_ context.Context, o *CleanOptions) error { got = o; return nil })
		cmd.SetArgs(c.args)
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		if got.All != c.all || got.DryRun != c.dryRun || got.Engine == nil || got.Now == nil {
			t.Errorf("%v: options %+v", c.args, got)
		}
	}
}

// TestInterrupts: the first signal cancels the run; the second removes this process's
// containers and exits with 130.
func TestInterrupts(t *testing.T) {
	sigs := make(chan os.Signal, 2)
	var errOut strings.Builder
	removed := make(chan struct{})
	exited := make(chan int, 1)
	ctx, stop := onInterrupt(context.Background(), sigs, &errOut,
		func(ctx context.Context) ([]string, error) {
			if _, ok := ctx.Deadline(); !ok {
				t.Error("the removal has no deadline")
			}
			close(removed)
			return []string{"iotbench-koa-1-2"}, nil
		},
		func(code int) { exited <- code })
	defer stop()

	sigs <- syscall.SIGTERM
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("SIGTERM did not cancel the run")
	}
	select {
	case <-removed:
		t.Fatal("the first signal removed containers itself: the run does that")
	default:
	}
	sigs <- syscall.SIGHUP
	select {
	case code := <-exited:
		if code != ExitInterrupted {
			t.Errorf("exit %d, want %d", code, ExitInterrupted)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a second signal did not exit")
	}
	for _, want := range []string{"terminated: stopping", "hangup again: removing", "removed iotbench-koa-1-2"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut.String())
		}
	}
}

// TestBrokenPipeIsAnInterrupt: the first write to a standard stream whose reader has gone sends
// one SIGPIPE to the interrupts, however many writes fail after it and on which stream; a write
// failing otherwise sends none.
func TestBrokenPipeIsAnInterrupt(t *testing.T) {
	broken := func(t *testing.T) *os.File {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		t.Cleanup(func() { w.Close() })
		return w
	}
	closed := func(t *testing.T) *os.File {
		f := broken(t)
		f.Close()
		return f
	}
	cases := []struct {
		name   string
		out    func(*testing.T) *os.File
		errOut func(*testing.T) *os.File
		want   int
	}{
		{"stdout gone", broken, nil, 1},
		{"stdout and stderr gone", broken, broken, 1},
		{"stderr gone", nil, broken, 1},
		{"a write failing otherwise", closed, nil, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var s Streams
			var errOut strings.Builder
			s.Out, s.ErrOut = io.Discard, &errOut
			if c.out != nil {
				s.Out = c.out(t)
			}
			if c.errOut != nil {
				s.ErrOut = c.errOut(t)
			}
			sigs := make(chan os.Signal, 3)
			s = onBrokenPipe(s, sigs)
			if s.ErrTerminal != nil {
				t.Error("a stream that was not there is there")
			}
			for range 3 {
				fmt.Fprintln(s.Out, "a table row")
				fmt.Fprintln(s.ErrOut, "a progress line")
			}
			if got := len(sigs); got != c.want {
				t.Fatalf("%d signals, want %d", got, c.want)
			}
			if c.want > 0 {
				if sig := <-sigs; sig != syscall.SIGPIPE {
					t.Errorf("signal %v, want SIGPIPE", sig)
				}
			}
		})
	}
}

// TestInterruptedRunExits130: whatever a cancelled command returns, the process says it was
// interrupted and exits 130.
func TestInterruptedRunExits130(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s, _, errOut := streams()
	code := Main(ctx, []string{"run", "--url", "http://127.0.0.1:1/x", "--rate", "10", "--duration", "1s", "--out", t.TempDir()}, s)
	if code != ExitInterrupted || !strings.Contains(errOut.String(), "iotbench: interrupted") {
		t.Errorf("exit %d, stderr %q; want %d and the interruption named", code, errOut, ExitInterrupted)
	}
}
