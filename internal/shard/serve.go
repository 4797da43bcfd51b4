package shard

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/iotbench/iotbench/internal/hdrlog"
	"github.com/iotbench/iotbench/internal/hostinfo"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/resources"
)

// Serve is a shard's side of the protocol: it reads its Spec from in, warms up, says so on out,
// waits for the start time, measures, writes its interval log and answers with its Result. An
// error is also sent to the parent, as the protocol's last line.
func Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	dec := json.NewDecoder(bufio.NewReader(in))
	enc := json.NewEncoder(out)
	err := serve(ctx, dec, enc)
	if err != nil {
		_ = enc.Encode(message{Error: err.Error()})
	}
	return err
}

func serve(ctx context.Context, dec *json.Decoder, enc *json.Encoder) error {
	var m message
	if err := dec.Decode(&m); err != nil || m.Spec == nil {
		return fmt.Errorf("reading the shard's spec: %v", orNone(err))
	}
	if err := m.Spec.check(); err != nil {
		return err
	}
	out, err := measure(ctx, *m.Spec, func() error {
		// Every shard warm, then one start for all: the measured phases overlap exactly.
		if err := enc.Encode(message{Warm: true}); err != nil {
			return err
		}
		for {
			var next message
			if err := dec.Decode(&next); err != nil {
				return fmt.Errorf("waiting for the start time: %v", orNone(err))
			}
			switch {
			case next.Ping:
				// The parent measures this clock against its own (clock.go).
				if err := enc.Encode(message{Clock: time.Now().UnixNano()}); err != nil {
					return err
				}
			case next.Start != 0:
				start := time.Unix(0, next.Start).Add(m.Spec.Offset())
				if ahead := time.Until(start); ahead > furthestStart {
					return fmt.Errorf("the start time is %v ahead, more than the %v a start may be: this host's clock was stepped since the parent measured it", ahead.Round(time.Millisecond), furthestStart)
				}
				return waitUntil(ctx, start)
			default:
				return fmt.Errorf("waiting for the start time: got %+v", next)
			}
		}
	})
	if err != nil {
		return err
	}
	return enc.Encode(out)
}

// furthestStart is the furthest ahead a parent's start time may be: it sets it a fraction of a
// second ahead, plus a few round trips to the shard's host. Further, a clock stepped since the
// parent measured it (or an offset measured wrong) would hold the shard, and the run, as long.
const furthestStart = 10 * time.Second

// waitUntil waits for start, by this host's clock, unless ctx ends first.
func waitUntil(ctx context.Context, start time.Time) error {
	t := time.NewTimer(time.Until(start))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// measure runs s's load, warm-up first; waitStart returns when the measured phase may begin. It
// writes the shard's interval log and returns its result and CPU time over the measured phase.
func measure(ctx context.Context, s Spec, waitStart func() error) (message, error) {
	if len(s.CPUs) > 0 {
		if err := hostinfo.PinProcess(s.CPUs); err != nil {
			return message{}, err
		}
	}
	cfg := s.config()
	var barrier error
	var cpuFrom time.Duration
	var began time.Time
	cfg.Measuring = func() {
		barrier = waitStart()
		began = time.Now()
		cpuFrom, _ = resources.OwnCPU()
	}
	res, err := load.Run(ctx, cfg)
	if barrier != nil {
		return message{}, barrier
	}
	if err != nil {
		return message{}, err
	}
	cpu, _ := resources.OwnCPU()
	out := message{CPU: cpu - cpuFrom}
	out.CPUs, _ = hostinfo.AllowedCPUs()
	var hlog bytes.Buffer
	if err := writeHlog(&hlog, s, began, res); err != nil {
		return message{}, err
	}
	if s.SendHlog {
		out.Hlog = hlog.Bytes()
	} else if err := os.WriteFile(s.Hlog, hlog.Bytes(), 0o644); err != nil {
		return message{}, err
	}
	// Histograms travel in the interval log.
	res.Latencies = nil
	for k := range res.Kinds {
		res.Kinds[k].Latencies = nil
	}
	out.Result = &res
	return out, nil
}

func orNone(err error) error {
	if err == nil {
		return errors.New("none came")
	}
	return err
}

// phaseTag marks the interval holding the whole measured phase, beside its seconds; kindTag
// followed by a request's name, a mix's request's measured phase.
const (
	phaseTag = "phase"
	kindTag  = "request-"
)

// writeHlog writes the measured phase's histogram: one interval per second, untagged, for
// HdrHistogram's tools, and the whole phase, tagged phaseTag, for the merge, with each request's
// of a mix, tagged by its name.
func writeHlog(w io.Writer, s Spec, began time.Time, res load.Result) error {
	whole, err := res.Latencies.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return fmt.Errorf("encoding the shard's histogram: %w", err)
	}
	l := hdrlog.Log{Comment: s.Name() + ": latencies of successes, µs", StartTime: began}
	for _, sec := range res.Timeline {
		if sec.Histogram == nil {
			continue
		}
		l.Intervals = append(l.Intervals, hdrlog.Interval{Start: time.Duration(sec.Index) * time.Second, Length: time.Second, Max: sec.Max, Encoded: sec.Histogram})
	}
	l.Intervals = append(l.Intervals, hdrlog.Interval{Tag: phaseTag, Length: res.Duration, Max: res.Latency.Max, Encoded: whole})
	for _, k := range res.Kinds {
		enc, err := k.Latencies.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if err != nil {
			return fmt.Errorf("encoding request %s's histogram: %w", k.Kind, err)
		}
		l.Intervals = append(l.Intervals, hdrlog.Interval{Tag: kindTag + k.Kind, Length: res.Duration, Max: k.Latency.Max, Encoded: enc})
	}
	return hdrlog.Write(w, l)
}

// readPart is a shard's measurement: its result, with the histograms of its interval log at
// path, the whole phase's and each request's of a mix.
func readPart(s Spec, res load.Result, path string) (Part, error) {
	f, err := os.Open(path)
	if err != nil {
		return Part{}, err
	}
	defer f.Close()
	l, err := hdrlog.Read(f)
	if err != nil {
		return Part{}, fmt.Errorf("%s: %w", path, err)
	}
	tagged := map[string]*hdrhistogram.Histogram{}
	for _, in := range l.Intervals {
		if in.Tag == phaseTag || strings.HasPrefix(in.Tag, kindTag) {
			if tagged[in.Tag], err = in.Histogram(); err != nil {
				return Part{}, fmt.Errorf("%s: %s: %w", path, in.Tag, err)
			}
		}
	}
	p := Part{Spec: s, Result: res, Latencies: tagged[phaseTag]}
	if p.Latencies == nil {
		return Part{}, fmt.Errorf("%s: no interval tagged %s", path, phaseTag)
	}
	p.Result.Kinds = slices.Clone(res.Kinds)
	for k := range p.Result.Kinds {
		kr := &p.Result.Kinds[k]
		if kr.Latencies = tagged[kindTag+kr.Kind]; kr.Latencies == nil {
			return Part{}, fmt.Errorf("%s: no interval tagged %s", path, kindTag+kr.Kind)
		}
	}
	return p, nil
}
