package shard

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/iotbench/iotbench/internal/load"
)

// Process is one started shard: where its protocol lines go and come from, and how it ends.
type Process struct {
	In   io.WriteCloser
	Out  io.Reader
	Wait func() error
	// Contained: the shard runs in a container, whose files are not this machine's and whose
	// CPUs the container pins. It sends its interval log back with its result.
	Contained bool
	// Host is the address of the host the shard runs on when that is another host: its clock is
	// measured against this one's and its start corrected by the offset. Empty: this machine.
	Host string
}

// Starter starts shard i's process.
type Starter func(ctx context.Context, i int) (Process, error)

// Command starts shards as `bin shard`, each process's error output kept for its error.
func Command(bin string) Starter {
	return func(ctx context.Context, i int) (Process, error) {
		cmd := exec.CommandContext(ctx, bin, "shard")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		in, err := cmd.StdinPipe()
		if err != nil {
			return Process{}, err
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			return Process{}, err
		}
		if err := cmd.Start(); err != nil {
			return Process{}, fmt.Errorf("starting generator shard %d (%s shard): %w", i+1, bin, err)
		}
		return Process{In: in, Out: out, Wait: func() error {
			if err := cmd.Wait(); err != nil {
				return fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
			}
			return nil
		}}, nil
	}
}

// Runner measures a cell over Count shards; its Run has load.Run's shape, so that the cell's
// lifecycle does not know how many generators it has.
type Runner struct {
	Count int
	// CPUs are the generator's CPUs: each shard is pinned to one of its own when there are as
	// many, and to all of them otherwise (the shards then share them: see Shared).
	CPUs  []int
	Start Starter
	// Dir receives the shards' interval logs (shard-<i>.hlog); empty: a temporary folder,
	// removed after the merge.
	Dir string
	// StartDelay is how far ahead of now the common start is set once every shard is warm: long
	// enough for every shard to hear it (shards on other hosts: plus 4 of their round trips).
	StartDelay time.Duration
	// Now is this machine's clock; nil: time.Now. Tests give a fake one.
	Now func() time.Time
}

// Shared says whether the shards share their CPUs, fewer than one each.
func (r Runner) Shared() bool { return len(r.CPUs) < r.Count }

// Run measures cfg over the shards and merges their results (Merge): every shard started with
// its spec and warmed up, their clocks measured, a common start sent, their results gathered.
func (r Runner) Run(ctx context.Context, cfg load.Config) (load.Result, error) {
	specs, err := Split(cfg, r.Count)
	if err != nil {
		return load.Result{}, err
	}
	if err := load.RequireLoopback(cfg.Request.URL, cfg.Request.Remote); err != nil {
		return load.Result{}, err
	}
	dir := r.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "iotbench-shards-"); err != nil {
			return load.Result{}, err
		}
		defer os.RemoveAll(dir)
	}
	r.place(specs, dir)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	shards := make([]*running, len(specs))
	defer stopAll(shards, cancel)
	if err := r.startWarm(ctx, specs, shards); err != nil {
		return load.Result{}, err
	}
	now := r.Now
	if now == nil {
		now = time.Now
	}
	// Asked while every shard idles between its warm-up and its measured phase.
	clocks, err := measureClocks(ctx, shards, now)
	if err != nil {
		return load.Result{}, err
	}
	if cfg.Measuring != nil {
		cfg.Measuring()
	}
	if err := r.startTogether(shards, clocks, now); err != nil {
		return load.Result{}, err
	}
	return gather(ctx, shards, clocks)
}

// place gives each shard its interval log in dir and its CPUs: one of its own when there are as
// many, all of them otherwise.
func (r Runner) place(specs []Spec, dir string) {
	for i := range specs {
		specs[i].Hlog = filepath.Join(dir, fmt.Sprintf("shard-%d.hlog", i+1))
		switch {
		case !r.Shared():
			specs[i].CPUs = []int{r.CPUs[i]}
		default:
			specs[i].CPUs = r.CPUs
		}
	}
}

// stopAll ends every shard started: its input closed, the context cancelled, its process waited for.
func stopAll(shards []*running, cancel func()) {
	for _, s := range shards {
		if s != nil {
			s.p.In.Close()
		}
	}
	cancel()
	for _, s := range shards {
		if s != nil {
			_ = s.p.Wait()
		}
	}
}

// startWarm starts a shard for each spec, into shards, and waits until every one has warmed up.
func (r Runner) startWarm(ctx context.Context, specs []Spec, shards []*running) error {
	for i, spec := range specs {
		p, err := r.Start(ctx, i)
		if err != nil {
			return err
		}
		if p.Contained {
			// Pinned by its container; its files are its own.
			spec.CPUs, spec.SendHlog = nil, true
		}
		shards[i] = &running{spec: spec, p: p, enc: json.NewEncoder(p.In), lines: make(chan message, 2)}
		go shards[i].read()
		if err := shards[i].enc.Encode(message{Spec: &spec}); err != nil {
			return shards[i].fail(fmt.Errorf("sending its spec: %w", err))
		}
	}
	for _, s := range shards {
		if m, err := s.next(ctx); err != nil {
			return err
		} else if !m.Warm {
			return s.fail(fmt.Errorf("answered %+v before warming up", m))
		}
	}
	return nil
}

// startTogether sends every shard the common start of its measured phase, in its own clock, far
// enough ahead for each to hear it.
func (r Runner) startTogether(shards []*running, clocks clocks, now func() time.Time) error {
	delay := r.StartDelay
	if delay == 0 {
		delay = 100 * time.Millisecond
	}
	delay += 4 * clocks.roundTrip
	start := now().Add(delay)
	for i, s := range shards {
		if err := s.enc.Encode(message{Start: start.Add(clocks.offsets[i]).UnixNano()}); err != nil {
			return s.fail(fmt.Errorf("sending the start time: %w", err))
		}
	}
	return nil
}

// gather reads every shard's result and interval log and merges them, with the clocks they were
// measured by and the generator CPU they took.
func gather(ctx context.Context, shards []*running, clocks clocks) (load.Result, error) {
	parts := make([]Part, len(shards))
	remoteCPUs := map[string][]int{} // by host
	var remoteCPU, shardCPU time.Duration
	for i, s := range shards {
		m, err := s.next(ctx)
		if err != nil {
			return load.Result{}, err
		}
		if m.Result == nil {
			return load.Result{}, s.fail(fmt.Errorf("answered %+v instead of its result", m))
		}
		if s.spec.SendHlog {
			// Kept where a local shard's would be: the run's logs are the same wherever it ran.
			if len(m.Hlog) == 0 {
				return load.Result{}, s.fail(fmt.Errorf("sent its result without its interval log"))
			}
			if err := os.WriteFile(s.spec.Hlog, m.Hlog, 0o644); err != nil {
				return load.Result{}, s.fail(err)
			}
		}
		if parts[i], err = readPart(s.spec, *m.Result, s.spec.Hlog); err != nil {
			return load.Result{}, s.fail(err)
		}
		shardCPU += m.CPU
		if s.p.Host != "" {
			remoteCPUs[s.p.Host] = append(remoteCPUs[s.p.Host], m.CPUs...)
			remoteCPU += m.CPU
		}
	}
	res, err := Merge(parts)
	if err != nil {
		return load.Result{}, err
	}
	res.ClockOffset, res.ClockMeasured, res.RemoteGeneratorCPU, res.ShardCPU = clocks.worst, clocks.measured, remoteCPU, shardCPU
	for k := range res.Kinds {
		// A request's rows are its cell's: measured by the same clocks.
		res.Kinds[k].ClockOffset, res.Kinds[k].ClockMeasured = clocks.worst, clocks.measured
	}
	for _, cpus := range remoteCPUs {
		slices.Sort(cpus)
		res.RemoteGeneratorCPUs += len(slices.Compact(cpus))
	}
	return res, nil
}

// clocks are the shards' clocks against this machine's.
type clocks struct {
	// offsets are each shard's (0 for a shard on this machine).
	offsets []time.Duration
	// worst is the largest absolute offset, roundTrip the longest round trip of the samples
	// kept; measured says whether any shard ran on another host.
	worst, roundTrip time.Duration
	measured         bool
}

// measureClocks asks every shard on another host its clock ClockSamples times and estimates its
// offset (EstimateOffset).
func measureClocks(ctx context.Context, shards []*running, now func() time.Time) (clocks, error) {
	c := clocks{offsets: make([]time.Duration, len(shards))}
	for i, s := range shards {
		if s.p.Host == "" {
			continue
		}
		samples := make([]ClockSample, 0, ClockSamples)
		for range ClockSamples {
			sent := now()
			if err := s.enc.Encode(message{Ping: true}); err != nil {
				return clocks{}, s.fail(fmt.Errorf("asking its clock: %w", err))
			}
			m, err := s.next(ctx)
			if err != nil {
				return clocks{}, err
			}
			received := now()
			if m.Clock == 0 {
				return clocks{}, s.fail(fmt.Errorf("answered %+v instead of its clock", m))
			}
			samples = append(samples, ClockSample{Sent: sent, Received: received, Remote: time.Unix(0, m.Clock)})
		}
		off, err := EstimateOffset(samples)
		if err != nil {
			return clocks{}, s.fail(fmt.Errorf("on %s: %w", s.p.Host, err))
		}
		c.offsets[i], c.measured = off.Offset, true
		c.worst, c.roundTrip = max(c.worst, abs(off.Offset)), max(c.roundTrip, off.RoundTrip)
	}
	return c, nil
}

// running is a started shard and the protocol lines it sent.
type running struct {
	spec  Spec
	p     Process
	enc   *json.Encoder
	lines chan message
	once  sync.Once
}

// read passes the shard's lines on until it ends; a broken line, or the end, is an error message.
func (s *running) read() {
	dec := json.NewDecoder(s.p.Out)
	for {
		var m message
		if err := dec.Decode(&m); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			s.lines <- message{Error: "its output ended: " + err.Error()}
			close(s.lines)
			return
		}
		s.lines <- m
		if m.Error != "" || m.Result != nil {
			close(s.lines)
			return
		}
	}
}

// next is the shard's next line; its error is an error naming the shard.
func (s *running) next(ctx context.Context) (message, error) {
	select {
	case <-ctx.Done():
		return message{}, ctx.Err()
	case m, ok := <-s.lines:
		if !ok {
			return message{}, s.fail(fmt.Errorf("said nothing more"))
		}
		if m.Error != "" {
			return message{}, s.fail(fmt.Errorf("%s", m.Error))
		}
		return m, nil
	}
}

func (s *running) fail(err error) error {
	return fmt.Errorf("%s: %w", s.spec.Name(), err)
}
