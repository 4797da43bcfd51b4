package downstream

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/iotbench/iotbench/internal/cpuset"
	"github.com/iotbench/iotbench/internal/hostinfo"
	"github.com/iotbench/iotbench/internal/resources"
)

// Serve is the hidden `iotbench downstream`: pinned to cpus (none: not pinned) at the lowest
// priority, it serves on loopback and writes its URL as a line to out; then it answers each line
// read from in with its tally (tallyLine), until in is closed (its parent is done with it, or
// gone).
func Serve(cpus []int, in io.Reader, out io.Writer) error {
	if len(cpus) > 0 {
		if err := hostinfo.PinServer(cpus); err != nil {
			return fmt.Errorf("pinning the downstream service to CPUs %s: %w", cpuset.Format(cpus), err)
		}
	}
	if err := hostinfo.Yield(); err != nil {
		return fmt.Errorf("lowering the downstream service's priority: %w", err)
	}
	s, err := Start(Delay)
	if err != nil {
		return err
	}
	defer s.Close()
	if _, err := fmt.Fprintln(out, s.URL()); err != nil {
		return err
	}
	asked := bufio.NewScanner(in)
	for asked.Scan() {
		t := s.tally()
		if t.CPU, err = resources.OwnCPU(); err != nil {
			return err
		}
		if _, err := fmt.Fprintln(out, tallyLine(t)); err != nil {
			return err
		}
	}
	return asked.Err()
}

// tallyLine is t as the helper writes it: calls, CPU and the overruns' count, p50, p99 and
// maximum, as integers (nanoseconds).
func tallyLine(t Tally) string {
	return fmt.Sprintf("%d %d %d %d %d %d", t.Calls, t.CPU, t.Late.Count, t.Late.P50, t.Late.P99, t.Late.Max)
}

// parseTally reads a tallyLine.
func parseTally(line string) (Tally, error) {
	var t Tally
	_, err := fmt.Sscanf(line, "%d %d %d %d %d %d", &t.Calls, &t.CPU, &t.Late.Count, &t.Late.P50, &t.Late.P99, &t.Late.Max)
	if err != nil {
		return Tally{}, fmt.Errorf("the downstream helper's tally %q: %w", line, err)
	}
	return t, nil
}

// Helper is a downstream service in a process of its own (Serve).
type Helper struct {
	cmd    *exec.Cmd
	asks   io.WriteCloser
	says   *bufio.Reader
	stderr strings.Builder
	url    string

	mu sync.Mutex // one tally asked at a time
}

// StartHelper starts `exe downstream`, pinned to cpus (none: not pinned).
func StartHelper(exe string, cpus []int) (*Helper, error) {
	h := &Helper{cmd: exec.Command(exe, "downstream", "--cpus", cpuset.Format(cpus))}
	h.cmd.Stderr = &h.stderr
	var err error
	if h.asks, err = h.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	says, err := h.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	h.says = bufio.NewReader(says)
	if err := h.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the downstream helper: %w", err)
	}
	line, err := h.says.ReadString('\n')
	if err != nil {
		h.Close()
		return nil, fmt.Errorf("the downstream helper said nothing: %v %s", err, strings.TrimSpace(h.stderr.String()))
	}
	if h.url = strings.TrimSpace(line); !strings.HasPrefix(h.url, "http://") {
		h.Close()
		return nil, fmt.Errorf("%s is not iotbench's downstream helper: it said %q", exe, h.url)
	}
	return h, nil
}

// URL is what a target calls: DOWNSTREAM_URL.
func (h *Helper) URL() string { return h.url }

// Tally asks the helper for its tally.
func (h *Helper) Tally() (Tally, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, err := io.WriteString(h.asks, "\n"); err != nil {
		return Tally{}, fmt.Errorf("asking the downstream helper: %w", err)
	}
	line, err := h.says.ReadString('\n')
	if err != nil {
		return Tally{}, fmt.Errorf("the downstream helper did not answer: %v %s", err, strings.TrimSpace(h.stderr.String()))
	}
	return parseTally(strings.TrimSpace(line))
}

// Close ends the helper and waits for it to exit.
func (h *Helper) Close() error {
	h.asks.Close()
	done := make(chan error, 1)
	go func() { done <- h.cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return fmt.Errorf("the downstream helper: %v %s", err, strings.TrimSpace(h.stderr.String()))
		}
		return err
	case <-time.After(5 * time.Second):
		h.cmd.Process.Kill()
		return <-done
	}
}
