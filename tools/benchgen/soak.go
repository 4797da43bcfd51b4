package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/load"
)

// soak runs the engine open loop at rate for d and prints its resident memory every minute: with
// the collector held back as iotbench run holds it, memory must level off, not grow with time.
func soak(ctx context.Context, w io.Writer, url string, rate int, d time.Duration) error {
	fmt.Fprintf(w, "\nmemory check: open loop at %d rps for %s against nginx\n", rate, d)
	runtime.GC()
	type outcome struct {
		res load.Result
		err error
	}
	done := make(chan outcome, 1)
	began := time.Now()
	go func() {
		res, err := load.Run(ctx, load.Config{
			Request:  load.Request{Method: "GET", URL: url},
			Check:    load.NewCheck(nginxBody),
			Model:    load.Model{Rate: rate, ExpectedLatency: time.Millisecond},
			Duration: d,
			Timeout:  5 * time.Second,
		})
		done <- outcome{res, err}
	}()
	tick := time.NewTicker(time.Minute)
	defer tick.Stop()
	fmt.Fprintf(w, "  %-8s %10s\n", "elapsed", "RSS")
	for {
		select {
		case <-tick.C:
			fmt.Fprintf(w, "  %-8s %7d MiB\n", time.Since(began).Round(time.Second), rss()>>20)
		case o := <-done:
			if o.err != nil {
				return o.err
			}
			fmt.Fprintf(w, "  %-8s %7d MiB (end)\n", time.Since(began).Round(time.Second), rss()>>20)
			r := o.res
			fmt.Fprintf(w, "  achieved %.2f%% of %d rps, p50 %s, p99 %s, own delay p99 %s, send lag p99 %s, valid %v %s\n",
				100*r.AchievedRate()/float64(rate), rate, micros(r.Latency.P50), micros(r.Latency.P99),
				micros(r.OwnDelay.P99), micros(r.SendLag.P99), r.Valid, r.InvalidReason)
			return nil
		}
	}
}

// rss is this process's resident memory in bytes, 0 if /proc does not say.
func rss() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
