package main

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// wrkResult is what one wrk (or wrk2) run printed, and the CPU it used.
type wrkResult struct {
	RPS            float64
	P50, P99, P999 time.Duration // P999: wrk2 only
	Errors         int64         // socket errors and non-2xx/3xx answers
	CPU            time.Duration
	Wall           time.Duration
}

// runWrk runs wrk with one thread pinned to cpu, conns connections, for d.
func runWrk(ctx context.Context, bin string, cpu, conns int, d time.Duration, url string) (wrkResult, error) {
	cmd := exec.CommandContext(ctx, "taskset", "-c", strconv.Itoa(cpu),
		bin, "-t1", "-c"+strconv.Itoa(conns), "-d"+strconv.Itoa(int(d.Seconds()))+"s", "--latency", url)
	began := time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(began)
	if err != nil {
		return wrkResult{}, fmt.Errorf("wrk -c%d: %v\n%s", conns, err, out)
	}
	r, err := parseWrk(string(out))
	if err != nil {
		return wrkResult{}, fmt.Errorf("wrk -c%d: %v; its output was:\n%s", conns, err, out)
	}
	// taskset execs wrk in place: the child's rusage is wrk's own.
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	r.Wall = wall
	return r, nil
}

// wrk2Calibration is how long wrk2 measures before it keeps any latency: 10 s, and 5 ms per
// connection of its thread (its wrk.c), which it then discards.
func wrk2Calibration(conns int) time.Duration {
	return 10*time.Second + time.Duration(conns)*5*time.Millisecond
}

// runWrk2 runs wrk2 (github.com/giltene/wrk2, built by hand: it is not part of the project) with
// one thread pinned to cpu, conns connections, at rate requests per second, so that it measures
// for d after its calibration. Its latencies are from each request's intended time, as the
// engine's open loop; its rps counts the calibration too.
func runWrk2(ctx context.Context, bin string, cpu, conns, rate int, d time.Duration, url string) (wrkResult, error) {
	total := (wrk2Calibration(conns) + d + time.Second - 1).Truncate(time.Second)
	cmd := exec.CommandContext(ctx, "taskset", "-c", strconv.Itoa(cpu),
		bin, "-t1", "-c"+strconv.Itoa(conns), "-R"+strconv.Itoa(rate), "-d"+strconv.Itoa(int(total.Seconds()))+"s", "--latency", url)
	began := time.Now()
	out, err := cmd.CombinedOutput()
	wall := time.Since(began)
	if err != nil {
		return wrkResult{}, fmt.Errorf("wrk2 -R%d: %v\n%s", rate, err, out)
	}
	r, err := parseWrk(string(out))
	if err != nil {
		return wrkResult{}, fmt.Errorf("wrk2 -R%d: %v; its output was:\n%s (is -wrk2 wrk2, not wrk?)", rate, err, out)
	}
	if r.P999 == 0 {
		return wrkResult{}, fmt.Errorf("wrk2 -R%d: no 99.900%% line: is -wrk2 %s wrk2, not wrk?", rate, bin)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	r.Wall = wall
	return r, nil
}

// parseWrk reads the figures of `wrk --latency` output, and of wrk2's (whose percentiles are
// written 50.000%, and which adds 99.900%).
func parseWrk(out string) (wrkResult, error) {
	var r wrkResult
	var haveRPS, haveP50, haveP99 bool
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 2 && f[0] == "Requests/sec:":
			v, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				return r, fmt.Errorf("requests/sec %q: %v", f[1], err)
			}
			r.RPS, haveRPS = v, true
		case len(f) == 2 && strings.HasSuffix(f[0], "%") && f[0] != "100.000%":
			at := map[string]*time.Duration{"50%": &r.P50, "50.000%": &r.P50, "99%": &r.P99, "99.000%": &r.P99, "99.900%": &r.P999}[f[0]]
			if at == nil {
				continue
			}
			d, err := time.ParseDuration(f[1])
			if err != nil {
				return r, fmt.Errorf("latency %s %q: %v", f[0], f[1], err)
			}
			*at = d
			haveP50 = haveP50 || at == &r.P50
			haveP99 = haveP99 || at == &r.P99
		case len(f) >= 2 && f[0] == "Socket" && f[1] == "errors:":
			// Socket errors: connect 0, read 3, write 0, timeout 0
			for i := 2; i+1 < len(f); i += 2 {
				n, _ := strconv.ParseInt(strings.TrimSuffix(f[i+1], ","), 10, 64)
				r.Errors += n
			}
		case len(f) == 5 && f[0] == "Non-2xx":
			n, _ := strconv.ParseInt(f[4], 10, 64)
			r.Errors += n
		}
	}
	if !haveRPS || !haveP50 || !haveP99 {
		return r, fmt.Errorf("no Requests/sec, 50%% or 99%% line (is this wrk 4 run with --latency?)")
	}
	return r, nil
}
