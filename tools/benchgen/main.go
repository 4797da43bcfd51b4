// Command benchgen measures iotbench's load generator against wrk, so that a benchmark never
// measures its own generator without knowing it (`make bench-generator`, docs/generator.md).
//
// It starts nginx on loopback pinned to one CPU, serving a small static answer from memory, and on
// another CPU runs, one after the other: wrk with one connection (the floor: what a request costs
// the server and the kernel when nothing queues), wrk with 64 connections (the reference
// throughput), iotbench's engine closed loop with 64 connections, and its engine open loop at rising
// rates. Each step prints the client's throughput, the share of the requested rate it achieved, the
// CPU the client and the server used, p50/p99 and what they add over the floor, and the ratio to
// wrk's throughput. Figures, not pass/fail. The highest open-loop rate sustained is saved for
// `iotbench run`, which warns before a run asking for more.
//
// The engine runs in this process, pinned and with the garbage collector set as `iotbench run`
// sets them; wrk runs pinned with taskset to the same CPU.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/iotbench/iotbench/internal/hostinfo"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/resources"
)

func main() {
	os.Exit(run())
}

type options struct {
	nginx, wrk, wrk2     string
	h2load               string // empty: no h2 step
	iotbench             string // empty: no `iotbench run` step
	expectedLatency      time.Duration
	inflight             []time.Duration // delays of the reference server's in-flight steps; none: no such step
	inflightRate         int
	h2Streams            int
	serverCPU, clientCPU int
	step, warmup         time.Duration
	rates                []int
	tlsRates             []int // open-loop rates of the https steps; none: no https step
	conns                int
	soak                 time.Duration
	soakRate             int
	save                 bool
	cpuProfile           string
	trace                string
}

func parseFlags() (options, error) {
	o := options{}
	cpus, err := hostinfo.AllowedCPUs()
	if err != nil {
		return o, err
	}
	if len(cpus) < 2 {
		return o, fmt.Errorf("benchgen needs 2 CPUs, one for nginx and one for the client; this process may use %v", cpus)
	}
	rates := "2000,5000,10000,15000,20000,30000,40000"
	tlsRates := "5000,10000,20000"
	flag.StringVar(&o.nginx, "nginx", lookPath("nginx", "/usr/sbin/nginx"), "nginx binary")
	flag.StringVar(&o.wrk, "wrk", lookPath("wrk", "/usr/bin/wrk"), "wrk binary")
	flag.StringVar(&o.h2load, "h2load", lookPath("h2load", "/usr/bin/h2load"), "h2load binary (Debian's nghttp2-client); \"\": no h2 step")
	flag.IntVar(&o.h2Streams, "h2-streams", 10, "streams of each connection in the h2 steps")
	flag.StringVar(&o.iotbench, "iotbench", "", "iotbench binary: when set, `iotbench run --url` runs open loop after the engine at each rate, as a user runs it (the whole process, its figures from its results row)")
	flag.DurationVar(&o.expectedLatency, "expected-latency", 10*time.Millisecond, "--iotbench: the run's --expected-latency")
	var inflight string
	flag.StringVar(&inflight, "inflight", "", "with -iotbench: delays of a reference server (iotbench reference) on the server CPU, e.g. 200ms,500ms: at -inflight-rate, rate × delay requests in flight, then the server saturated at 3/4 of the rate")
	flag.IntVar(&o.inflightRate, "inflight-rate", 10000, "rate of the -inflight steps")
	flag.StringVar(&o.wrk2, "wrk2", "", "wrk2 binary (github.com/giltene/wrk2, built by hand): when set, it runs open loop before the engine at each rate, with the connections of the closed-loop steps (each such step lasts 10 s more: wrk2's calibration)")
	// The split iotbench run makes on this machine: the server on the last CPU, the client on the first.
	flag.IntVar(&o.serverCPU, "server-cpu", cpus[len(cpus)-1], "CPU nginx is pinned to")
	flag.IntVar(&o.clientCPU, "client-cpu", cpus[0], "CPU wrk and the engine are pinned to")
	flag.DurationVar(&o.step, "step", 3*time.Second, "measured time of each step (whole seconds: wrk's unit)")
	flag.DurationVar(&o.warmup, "warmup", time.Second, "engine warm-up before each step, discarded")
	flag.StringVar(&rates, "rates", rates, "open-loop rates to try, comma-separated, rising")
	flag.StringVar(&tlsRates, "tls-rates", tlsRates, "open-loop rates of the https steps (after wrk and the engine closed loop over TLS); \"\": no https step")
	flag.IntVar(&o.conns, "connections", 64, "connections of the closed-loop steps")
	flag.DurationVar(&o.soak, "soak", 0, "then run open loop this long and print resident memory every minute (10m: the memory check)")
	flag.IntVar(&o.soakRate, "soak-rate", 0, "rate of the soak (default: half the highest rate sustained)")
	flag.BoolVar(&o.save, "save", true, "save the highest rate sustained for iotbench run's warning")
	flag.StringVar(&o.trace, "trace", "", "write an execution trace of the engine's steps to this file (go tool trace)")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the engine's steps to this file (go tool pprof)")
	flag.Parse()
	if o.rates, err = list("-rates", rates, positive(strconv.Atoi), "positive integers"); err == nil && len(o.rates) == 0 {
		err = fmt.Errorf("-rates: give at least one rate")
	}
	if err != nil {
		return o, err
	}
	if o.tlsRates, err = list("-tls-rates", tlsRates, positive(strconv.Atoi), "positive integers"); err != nil {
		return o, err
	}
	if o.inflight, err = list("-inflight", inflight, positive(time.ParseDuration), "durations (200ms,500ms)"); err != nil {
		return o, err
	}
	switch {
	case len(o.inflight) > 0 && o.iotbench == "":
		return o, fmt.Errorf("-inflight runs `iotbench reference` and `iotbench run`: give -iotbench BIN")
	case o.inflightRate <= 0:
		return o, fmt.Errorf("-inflight-rate %d: give a positive rate", o.inflightRate)
	case o.serverCPU == o.clientCPU:
		return o, fmt.Errorf("-server-cpu and -client-cpu are both %d: the client must not share the server's CPU", o.serverCPU)
	case !slices.Contains(cpus, o.serverCPU) || !slices.Contains(cpus, o.clientCPU):
		return o, fmt.Errorf("-server-cpu %d and -client-cpu %d must be among the CPUs this process may use, %v", o.serverCPU, o.clientCPU, cpus)
	case o.step < time.Second || o.step%time.Second != 0:
		return o, fmt.Errorf("-step %s: give whole seconds, at least 1s (wrk counts in seconds)", o.step)
	case o.conns <= 0:
		return o, fmt.Errorf("-connections must be positive")
	}
	return o, nil
}

// list reads a flag's comma-separated values, each by parse; an empty text is none.
func list[T any](flag, text string, parse func(string) (T, error), what string) ([]T, error) {
	var out []T
	for _, f := range strings.Split(text, ",") {
		if strings.TrimSpace(f) == "" {
			continue
		}
		v, err := parse(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("%s %q: want %s separated by commas", flag, text, what)
		}
		out = append(out, v)
	}
	return out, nil
}

// positive is parse refusing a value not above zero.
func positive[T int | time.Duration](parse func(string) (T, error)) func(string) (T, error) {
	return func(s string) (T, error) {
		v, err := parse(s)
		if err == nil && v <= 0 {
			err = fmt.Errorf("%v is not positive", v)
		}
		return v, err
	}
}

func lookPath(name, fallback string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	return fallback
}

func run() int {
	o, err := parseFlags()
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchgen:", err)
		return 2
	}
	bins := []string{o.nginx, o.wrk}
	if o.iotbench != "" {
		bins = append(bins, o.iotbench)
	}
	if o.wrk2 != "" {
		bins = append(bins, o.wrk2)
	}
	if o.h2load != "" {
		bins = append(bins, o.h2load)
	}
	for _, bin := range bins {
		if _, err := os.Stat(bin); err != nil {
			fmt.Fprintf(os.Stderr, "benchgen: %v: install Debian's nginx and wrk (scripts/bench-generator.sh does, as root)\n", err)
			return 2
		}
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()

	// As iotbench run: every thread of the engine on the client CPU, the collector held back.
	if err := hostinfo.PinProcess([]int{o.clientCPU}); err != nil {
		fmt.Fprintln(os.Stderr, "benchgen:", err)
		return 1
	}
	defer load.GeneratorGC()()

	srv, err := startNginx(o.nginx, o.serverCPU)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchgen:", err)
		return 1
	}
	defer srv.stop()
	fmt.Fprintf(os.Stderr, "nginx on %s pinned to CPU %d (pid %d); client on CPU %d; %s per step\n",
		srv.URL, o.serverCPU, srv.cmd.Process.Pid, o.clientCPU, o.step)

	stopRecording, err := record(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchgen:", err)
		return 1
	}
	loadBefore := loadAverage()
	rows, err := measure(ctx, o, srv)
	if err == nil && len(o.tlsRates) > 0 {
		var tlsRows []row
		tlsRows, err = measureTLS(ctx, o, srv)
		rows = append(rows, tlsRows...)
	}
	if err == nil && o.h2load != "" {
		var h2Rows []row
		h2Rows, err = measureH2(ctx, o, srv)
		rows = append(rows, h2Rows...)
	}
	if err == nil && len(o.inflight) > 0 {
		var inRows []row
		inRows, err = measureInFlight(ctx, o)
		rows = append(rows, inRows...)
	}
	stopRecording()
	if len(rows) > 0 {
		fmt.Printf("generator benchmark, %s; nginx on CPU %d, client on CPU %d, %s per step; load average before %s, after %s\n",
			hostinfo.CPUModel(), o.serverCPU, o.clientCPU, o.step, loadBefore, loadAverage())
		printTable(os.Stdout, rows)
	}
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintln(os.Stderr, "benchgen: interrupted; stopping nginx")
			return 1
		}
		fmt.Fprintln(os.Stderr, "benchgen:", err)
		return 1
	}
	capacity := capacityOf(rows)
	if o.save {
		if path, err := load.CapacityFile(); err != nil {
			fmt.Fprintln(os.Stderr, "benchgen: not saving the capacity:", err)
		} else if err := load.SaveCapacity(path, capacity); err != nil {
			fmt.Fprintln(os.Stderr, "benchgen: not saving the capacity:", err)
		} else {
			more := ""
			if capacity.AtLeast {
				more = " or more (every rate tried)"
			}
			fmt.Fprintf(os.Stderr, "capacity: %d rps open loop%s; saved to %s for iotbench run's warning\n", capacity.Rate, more, path)
		}
	}
	if o.soak > 0 {
		rate := o.soakRate
		if rate == 0 {
			rate = max(capacity.Rate/2, 1000)
		}
		if err := soak(ctx, os.Stdout, srv.URL, rate, o.soak); err != nil {
			if ctx.Err() != nil {
				err = fmt.Errorf("interrupted; stopping nginx")
			}
			fmt.Fprintln(os.Stderr, "benchgen:", err)
			return 1
		}
	}
	return 0
}

// row is one step of the table.
type row struct {
	client         string
	load           string
	requested      int // open loop
	rps            float64
	achieved       float64 // share of requested, open loop
	clientCPU      float64 // cores
	serverCPU      float64
	p50, p99, p999 time.Duration
	lagP99         time.Duration
	ownP99         time.Duration // engine: p99 of the delay it added itself (load.Result.OwnDelay)
	allocated      float64       // engine: heap bytes per request
	schedP99       time.Duration // engine: p99 of its goroutines' waits for a thread
	gcs            uint64        // engine: collections in the measured phase
	others         float64       // cores of the client's and the server's CPUs taken by other processes and steal
	othersKnown    bool
	valid          string
	repeated       bool // failed while disturbed, and run again
	isHalf         bool // open loop at half the capacity the steps before found
	isWrkReference bool // with tls, the reference of the https steps
	isFloor        bool
	tls            bool // a step over TLS (https)
	h2             bool // a step in HTTP/2 (h2): with isWrkReference, h2load's
	isEngine       bool
	isProduct      bool // `iotbench run`, the whole process (productRow)
	inFlight       bool // against a reference server of long answers (measureInFlight)
	isOpen         bool
}

func measure(ctx context.Context, o options, srv *nginx) ([]row, error) {
	var rows []row
	var floor time.Duration
	for _, c := range []int{1, o.conns} {
		before, watch := srv.cpu(), watchCPUs(o.clientCPU, o.serverCPU)
		r, err := runWrk(ctx, o.wrk, o.clientCPU, c, o.step, srv.URL)
		if err != nil {
			return rows, err
		}
		valid := "yes"
		if r.Errors > 0 {
			valid = fmt.Sprintf("%d errors", r.Errors)
		}
		server := srv.cpu() - before
		others, known := watch.others(r.CPU+server, r.Wall)
		rows = append(rows, row{
			client: "wrk", load: fmt.Sprintf("closed %d", c), rps: r.RPS,
			clientCPU: cores(r.CPU, r.Wall), serverCPU: cores(server, r.Wall),
			p50: r.P50, p99: r.P99, valid: valid, isFloor: c == 1, isWrkReference: c == o.conns,
			others: others, othersKnown: known,
		})
		if c == 1 {
			floor = r.P50
		}
		fmt.Fprintf(os.Stderr, "wrk -c%d: %.0f rps\n", c, r.RPS)
	}
	models := []load.Model{{Connections: o.conns}}
	for _, r := range o.rates {
		models = append(models, load.Model{Rate: r, ExpectedLatency: time.Millisecond})
	}
	step := func(m load.Model) (row, error) {
		e, err := runEngine(ctx, srv, load.Request{Method: "GET", URL: srv.URL}, load.NewCheck(nginxBody), m, []int{o.clientCPU, o.serverCPU}, o.warmup, o.step)
		if err != nil {
			return row{}, err
		}
		return engineRow(m, e), nil
	}
	add := func(r row) {
		rows = append(rows, r)
		fmt.Fprintf(os.Stderr, "iotbench %s: %.0f rps\n", r.load, r.rps)
	}
	for _, m := range models {
		if o.wrk2 != "" && m.Mode() == load.Open {
			r, err := wrk2Row(ctx, o, srv, m.Rate, o.conns, srv.URL)
			if err != nil {
				return rows, err
			}
			add(r)
		}
		for attempt := 1; ; attempt++ {
			r, err := step(m)
			if err != nil {
				return rows, err
			}
			if why := repeatWhy(r, floor, attempt); why != "" {
				if r.valid != "yes" {
					why += " (" + strings.TrimPrefix(r.valid, "no: ") + ")"
				}
				r.repeated, r.valid = true, "repeated: "+why
			}
			add(r)
			if !r.repeated {
				break
			}
		}
		if o.iotbench != "" && m.Mode() == load.Open {
			r, err := productRow(ctx, o, srv, srv.URL, nginxBody, m.Rate, o.expectedLatency)
			if err != nil {
				return rows, err
			}
			add(r)
		}
	}
	// The figure the latency goal is set at: what the engine adds at half of what it sustains.
	if c := capacityOf(rows); c.Rate >= 2 {
		r, err := step(load.Model{Rate: c.Rate / 2, ExpectedLatency: time.Millisecond})
		if err != nil {
			return rows, err
		}
		r.load += " (½ capacity)"
		r.isHalf = true
		add(r)
	}
	return rows, nil
}

// wrk2Row runs wrk2 at rate over conns connections, open loop, as the engine's step at that rate
// is run.
func wrk2Row(ctx context.Context, o options, srv server, rate, conns int, url string) (row, error) {
	before, watch := srv.cpu(), watchCPUs(o.clientCPU, o.serverCPU)
	w, err := runWrk2(ctx, o.wrk2, o.clientCPU, conns, rate, o.step, url)
	if err != nil {
		return row{}, err
	}
	server := srv.cpu() - before
	others, known := watch.others(w.CPU+server, w.Wall)
	valid := "yes"
	if w.Errors > 0 {
		valid = fmt.Sprintf("%d errors", w.Errors)
	}
	return row{
		client: "wrk2", load: fmt.Sprintf("open %d", rate), requested: rate, isOpen: true,
		rps: w.RPS, achieved: w.RPS / float64(rate),
		clientCPU: cores(w.CPU, w.Wall), serverCPU: cores(server, w.Wall),
		p50: w.P50, p99: w.P99, p999: w.P999, valid: valid, others: others, othersKnown: known,
	}, nil
}

// repeatWhy says why a step is run again, or "" when its result stands. A failed open-loop step
// is confirmed once, as iotbench's find-max confirms a failure (this VM's stalls of a few
// milliseconds fail a step now and then at any rate), and run up to maxAttempts times while
// something else ran on the client's or the server's core: a shared core's capacity is not the
// engine's.
func repeatWhy(r row, floor time.Duration, attempt int) string {
	switch {
	case !r.isEngine || !r.isOpen || r.sustained(floor) || attempt >= maxAttempts:
		return ""
	case r.othersKnown && r.others > resources.Disturbed:
		return fmt.Sprintf("failed while other processes and the hypervisor took %.2f cores of the client's and nginx's CPUs", r.others)
	case attempt == 1:
		return "failed once; run again to confirm"
	}
	return ""
}

// engineRow is the table's line for one step of the engine.
func engineRow(m load.Model, e engineResult) row {
	res := e.res
	r := row{
		client: "iotbench", rps: res.Throughput(),
		clientCPU: cores(e.cpu, e.wall), serverCPU: cores(e.serverCPU, e.wall),
		p50: res.Latency.P50, p99: res.Latency.P99, p999: res.Latency.P999, ownP99: res.OwnDelay.P99, valid: "yes", isEngine: true,
		schedP99: e.schedP99, gcs: e.gcs, others: e.others, othersKnown: e.othersKnown,
	}
	if res.Requests > 0 {
		r.allocated = float64(e.allocated) / float64(res.Requests)
	}
	if !res.Valid {
		// Pinned to one CPU: the cores it used are the share.
		r.valid = "no: " + load.WithGeneratorCause(res.InvalidReason, res.Fault, r.clientCPU)
	}
	if m.Mode() == load.Open {
		r.load = fmt.Sprintf("open %d", m.Rate)
		r.requested, r.isOpen, r.lagP99 = m.Rate, true, res.SendLag.P99
		r.achieved = res.AchievedRate() / float64(m.Rate)
	} else {
		r.load = fmt.Sprintf("closed %d", m.Connections)
	}
	return r
}

type engineResult struct {
	res                  load.Result
	cpu, serverCPU, wall time.Duration
	others               float64 // cores of the client's and the server's CPUs that were neither's
	othersKnown          bool
	allocated            uint64 // heap bytes allocated over the measured phase
	schedP99             time.Duration
	gcs                  uint64
}

// runEngine measures one load model with the engine, counting CPU over the measured phase only.
// server is what a step loads: nginx, or a reference server of known delay; cpu is the CPU time
// it used so far.
type server interface{ cpu() time.Duration }

func runEngine(ctx context.Context, srv server, req load.Request, check load.Check, m load.Model, cpus []int, warmup, d time.Duration) (engineResult, error) {
	var e engineResult
	var cpu0, server0 time.Duration
	var watch cpuWatch
	var began time.Time
	var alloc0 uint64
	var runtime0 goRuntime
	// Each step starts from an empty heap, as a run's first cell does.
	runtime.GC()
	res, err := load.Run(ctx, load.Config{
		Request:  req,
		Check:    check,
		Model:    m,
		Warmup:   warmup,
		Duration: d,
		Timeout:  5 * time.Second,
		Measuring: func() {
			watch = watchCPUs(cpus...)
			cpu0, server0, alloc0, runtime0, began = processCPU(), srv.cpu(), heapAllocated(), readRuntime(), time.Now()
		},
	})
	if err != nil {
		return e, err
	}
	e.res, e.wall = res, time.Since(began)
	e.cpu, e.serverCPU, e.allocated = processCPU()-cpu0, srv.cpu()-server0, heapAllocated()-alloc0
	e.schedP99, e.gcs = readRuntime().since(runtime0)
	e.others, e.othersKnown = watch.others(e.cpu+e.serverCPU, e.wall)
	return e, nil
}

// heapAllocated is the bytes this process allocated on the heap so far.
func heapAllocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// loadAverage is the 1-minute load average: figures taken on a busy machine say so.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "unknown"
}

// processCPU is the user and system time of this whole process so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func cores(cpu, wall time.Duration) float64 {
	if wall <= 0 {
		return 0
	}
	return cpu.Seconds() / wall.Seconds()
}

// queueingAllowed is how far the engine's median latency may rise above the floor's before the
// generator counts as queueing requests behind its own work.
const queueingAllowed = time.Millisecond

// capacityOf is the highest open-loop rate the engine sustained: judged valid by the engine's own
// rules (what iotbench run would accept), at least 99.5% of it sent, and its median latency within
// queueingAllowed of the floor's. Rates above one that failed do not count: a pass there is noise.
func capacityOf(rows []row) load.Capacity {
	c := load.Capacity{CPUs: 1, HostCPU: hostinfo.CPUModel(), Commit: hostinfo.Commit(), Measured: time.Now().UTC(), AtLeast: true}
	var floor time.Duration
	for _, r := range rows {
		switch {
		case r.tls || r.h2 || r.inFlight:
			continue // the capacity iotbench run warns by is plaintext's, against nginx
		case r.isFloor:
			floor = r.p50
		case r.isEngine && !r.isOpen:
			c.ClosedLoopRPS = r.rps
		case r.repeated || r.isHalf:
			continue
		case r.isEngine && r.isOpen && c.AtLeast:
			if r.sustained(floor) {
				c.Rate = r.requested
			} else {
				c.AtLeast = false
			}
		}
	}
	return c
}

// sustained: an open-loop step judged valid by the engine, at least 99.5% of its rate sent, and its
// median within queueingAllowed of the floor's median.
func (r row) sustained(floor time.Duration) bool {
	return r.isEngine && r.isOpen && r.valid == "yes" && r.achieved >= 0.995 && r.p50-floor <= queueingAllowed
}

// record starts the execution trace and the CPU profile asked for; they cover every step (wrk's,
// in other processes, add nothing to them). stop ends both and closes their files.
func record(o options) (stop func(), err error) {
	var stops []func()
	stop = func() {
		for _, s := range stops {
			s()
		}
	}
	for _, rec := range []struct {
		path  string
		start func(io.Writer) error
		stop  func()
	}{{o.trace, trace.Start, trace.Stop}, {o.cpuProfile, pprof.StartCPUProfile, pprof.StopCPUProfile}} {
		if rec.path == "" {
			continue
		}
		f, err := os.Create(rec.path)
		if err != nil {
			stop()
			return nil, err
		}
		if err := rec.start(f); err != nil {
			f.Close()
			stop()
			return nil, err
		}
		stops = append(stops, func() { rec.stop(); f.Close() })
	}
	return stop, nil
}
