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
				time.Sleep(time.Until(time.Unix(0, next.Start).Add(m.Spec.Offset())))
				return nil
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
	res.Latencies = nil // travels in the interval log
	out.Result = &res
	return out, nil
}

func orNone(err error) error {
	if err == nil {
		return errors.New("none came")
	}
	return err
}

// phaseTag marks the interval holding the whole measured phase, beside its seconds.
const phaseTag = "phase"

// writeHlog writes the measured phase's histogram: one interval per second, untagged, for
// HdrHistogram's tools, and the whole phase, tagged phaseTag, for the merge.
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
	return hdrlog.Write(w, l)
}

// readHlog reads back the whole phase's histogram of a shard's interval log.
func readHlog(path string) (*hdrhistogram.Histogram, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	l, err := hdrlog.Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, in := range l.Intervals {
		if in.Tag == phaseTag {
			return in.Histogram()
		}
	}
	return nil, fmt.Errorf("%s: no interval tagged %s", path, phaseTag)
}
