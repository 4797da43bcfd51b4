// Package profile samples a target's CPU from the host with Linux perf, over the processes of
// its container, and names the code its runtime compiled at run time from the runtime's own
// symbol map (/tmp/perf-<PID>.map, which perf reads): V8's (Node, with its interpreted frames on the native stack) written as it compiles, the
// JVM's written as it exits. The samples become a flame.Profile, kept beside the run's results
// as folded stacks (files.go).
//
// This host gives perf software events only (cpu-clock) and no perf_event cgroup, so the
// container's processes are sampled by PID. Bun's JavaScriptCore writes no perf map: its
// JIT-compiled frames stay unnamed ("[unknown]"), and the profile says so by their share.
package profile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/iotbench/iotbench/internal/flame"
)

// Hz is how often perf samples each CPU the target runs on: 2,000 samples over a 4 s step at one
// busy core, enough for a function of 1% to show with ±0.5%, at a few thousand interrupts a
// second on the target's CPU.
const Hz = 499

// nodeOptions and javaOptions make each runtime's JIT code nameable and its stacks walkable by
// frame pointers (perf -g): V8 writes its map as it compiles; HotSpot keeps the frame pointer
// (a register less for its compiler: the profile's container is not the one measured) and dumps
// its map at exit.
const (
	nodeOptions = "--perf-basic-prof --interpreted-frames-native-stack"
	javaOptions = "-XX:+PreserveFramePointer -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit"
)

// Env is env with the runtimes' profiling options added to what it sets already. Each runtime
// reads its own variable and ignores the other's.
func Env(env map[string]string) map[string]string {
	out := maps.Clone(env)
	if out == nil {
		out = map[string]string{}
	}
	for k, v := range map[string]string{"NODE_OPTIONS": nodeOptions, "JAVA_TOOL_OPTIONS": javaOptions} {
		out[k] = strings.TrimSpace(out[k] + " " + v)
	}
	return out
}

// ErrNoPerf says perf is not installed: a run asked for a profile learns how to get it.
var ErrNoPerf = errors.New("perf is not installed: on Debian, apt-get install linux-perf (scripts/ensure-perf.sh)")

// Recording is perf sampling a set of processes, into a file of its own.
type Recording struct {
	perf   string // perf's path, as Start found it
	cmd    *exec.Cmd
	data   string
	began  time.Time
	stderr bytes.Buffer
	done   chan error
}

// Start samples the processes pids (host PIDs) with their call stacks until Stop; the data goes
// to a file in dir.
func Start(pids []int, dir string) (*Recording, error) {
	perf, err := exec.LookPath("perf")
	if err != nil {
		return nil, ErrNoPerf
	}
	if len(pids) == 0 {
		return nil, errors.New("no process to sample")
	}
	ids := make([]string, len(pids))
	for i, p := range pids {
		ids[i] = strconv.Itoa(p)
	}
	r := &Recording{perf: perf, data: filepath.Join(dir, "perf.data"), done: make(chan error, 1)}
	// Not tied to a context: Stop ends it with SIGINT, which makes perf write a whole file.
	r.cmd = exec.Command(perf, "record", "--quiet", "-e", "cpu-clock", "-F", strconv.Itoa(Hz), "-g",
		"-p", strings.Join(ids, ","), "-o", r.data)
	r.cmd.Stdout, r.cmd.Stderr = &r.stderr, &r.stderr
	if err := r.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting perf: %w", err)
	}
	r.began = time.Now()
	go func() { r.done <- r.cmd.Wait() }()
	return r, nil
}

// Cost is what perf itself took while it sampled.
type Cost struct {
	Wall time.Duration
	// CPU is perf's own processor time (user and system): its share of the generator's CPUs,
	// where it runs. The sampling interrupts on the target's CPU are not in it.
	CPU time.Duration
}

// Cores is perf's CPU over its wall time.
func (c Cost) Cores() float64 {
	if c.Wall <= 0 {
		return 0
	}
	return c.CPU.Seconds() / c.Wall.Seconds()
}

// Stop ends the sampling and waits for perf to write its file.
func (r *Recording) Stop() (Cost, error) {
	c := Cost{Wall: time.Since(r.began)}
	r.cmd.Process.Signal(syscall.SIGINT)
	var err error
	select {
	case err = <-r.done:
	case <-time.After(30 * time.Second):
		r.cmd.Process.Kill()
		err = <-r.done
	}
	if st := r.cmd.ProcessState; st != nil {
		c.CPU = st.UserTime() + st.SystemTime()
	}
	// perf ends with SIGINT's status when it is interrupted before it installed its handler.
	if err != nil && !interrupted(r.cmd.ProcessState) {
		return c, fmt.Errorf("perf record: %v: %s", err, strings.TrimSpace(r.stderr.String()))
	}
	if _, serr := os.Stat(r.data); serr != nil {
		return c, fmt.Errorf("perf record wrote nothing: %s", strings.TrimSpace(r.stderr.String()))
	}
	return c, nil
}

func interrupted(st *os.ProcessState) bool {
	if st == nil {
		return false
	}
	ws, ok := st.Sys().(syscall.WaitStatus)
	return st.ExitCode() == 0 || ok && ws.Signaled() && ws.Signal() == syscall.SIGINT
}

// Stacks reads the recording's samples as call stacks, naming JIT frames by the symbol maps
// placed with Symbols.
func (r *Recording) Stacks(ctx context.Context) (flame.Profile, error) {
	cmd := exec.CommandContext(ctx, r.perf, "script", "-i", r.data)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return flame.Profile{}, fmt.Errorf("perf script: %v: %s", err, lastLine(stderr.String()))
	}
	p, err := flame.ParsePerfScript(&out)
	if err != nil {
		return flame.Profile{}, fmt.Errorf("reading perf script's output: %w", err)
	}
	return p, nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}
