package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/reference"
)

// referenceServer is `iotbench reference` on the server CPU: every answer after a fixed delay, as
// a target of slow answers holds thousands of requests in flight; with workers, at most that many
// at once, the others queued: a target at its capacity, workers ÷ delay a second.
type referenceServer struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	url   string
}

func startReference(bin string, cpu int, delay time.Duration, workers int) (*referenceServer, error) {
	cmd := exec.Command(bin, "reference", "--delay", delay.String(), "--cpus", strconv.Itoa(cpu), "--workers", strconv.Itoa(workers))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		stdin.Close()
		cmd.Wait()
		return nil, fmt.Errorf("%s reference: no URL: %v", bin, err)
	}
	return &referenceServer{cmd: cmd, stdin: stdin, url: strings.TrimSpace(line)}, nil
}

// cpu is the user and system time the reference server used so far.
func (r *referenceServer) cpu() time.Duration {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", r.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	return statCPU(string(stat))
}

// stop ends the server: it serves until its stdin closes.
func (r *referenceServer) stop() {
	r.stdin.Close()
	r.cmd.Wait()
}

// measureInFlight loads a reference server at o.inflightRate for each of o.inflight's delays:
// rate × delay requests in flight, each step's generator the only thing that changes (wrk2 with
// a quarter more connections than that, the engine, `iotbench run`); then the same server with a
// capacity of three quarters of the rate, saturated: the step must fail as the target's, the
// generator's own delay as in the step before.
func measureInFlight(ctx context.Context, o options) ([]row, error) {
	var rows []row
	for _, delay := range o.inflight {
		inFlight := int(float64(o.inflightRate) * delay.Seconds())
		for _, workers := range []int{0, inFlight * 3 / 4} {
			r, err := inFlightSteps(ctx, o, delay, workers)
			rows = append(rows, r...)
			if err != nil {
				return rows, err
			}
		}
	}
	return rows, nil
}

// inFlightSteps are the steps against one reference server of delay (and workers, 0: no limit).
func inFlightSteps(ctx context.Context, o options, delay time.Duration, workers int) ([]row, error) {
	srv, err := startReference(o.iotbench, o.serverCPU, delay, workers)
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	what := fmt.Sprintf("%s delay", delay)
	if workers > 0 {
		what += fmt.Sprintf(", %d workers", workers)
	}
	rate := o.inflightRate
	var rows []row
	add := func(r row) {
		r.load, r.inFlight = fmt.Sprintf("open %d, %s", rate, what), true
		rows = append(rows, r)
		fmt.Fprintf(os.Stderr, "%s %s: %.0f rps (%s)\n", r.client, r.load, r.rps, r.valid)
	}
	if o.wrk2 != "" && workers == 0 {
		r, err := wrk2Row(ctx, o, srv, rate, int(float64(rate)*delay.Seconds()*1.25), srv.url)
		if err != nil {
			return rows, err
		}
		add(r)
	}
	m := load.Model{Rate: rate, ExpectedLatency: delay}
	e, err := runEngine(ctx, srv, load.Request{Method: "GET", URL: srv.url}, load.NewCheck(reference.Body), m, []int{o.clientCPU, o.serverCPU}, o.warmup, o.step)
	if err != nil {
		return rows, err
	}
	add(engineRow(m, e))
	r, err := productRow(ctx, o, srv, srv.url, reference.Body, rate, delay)
	if err != nil {
		return rows, err
	}
	add(r)
	return rows, nil
}
