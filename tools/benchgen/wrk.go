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

// wrkResult is what one wrk run printed, and the CPU it used.
type wrkResult struct {
	RPS      float64
	P50, P99 time.Duration
	Errors   int64 // socket errors and non-2xx/3xx answers
	CPU      time.Duration
	Wall     time.Duration
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

// parseWrk reads the figures of `wrk --latency` output.
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
		case len(f) == 2 && (f[0] == "50%" || f[0] == "99%"):
			d, err := time.ParseDuration(f[1])
			if err != nil {
				return r, fmt.Errorf("latency %s %q: %v", f[0], f[1], err)
			}
			if f[0] == "50%" {
				r.P50, haveP50 = d, true
			} else {
				r.P99, haveP99 = d, true
			}
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
