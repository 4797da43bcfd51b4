package timeline

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/iotbench/iotbench/internal/hdrlog"
)

// A run's files lie beside its results CSV, in a folder named after it: results/<time>.csv has
// results/<time>.timeline/ holding timeline.csv and, per cell, <cell>.hlog and <cell>.hgrm. A
// folder, so that results/*.csv is still the results files alone.

// Dir is the folder of the timeline and histograms of the results file csvPath.
func Dir(csvPath string) string { return strings.TrimSuffix(csvPath, ".csv") + ".timeline" }

// Path is the timeline file of the results file csvPath.
func Path(csvPath string) string { return filepath.Join(Dir(csvPath), "timeline.csv") }

// HistogramDir is the folder of the per-cell histogram files of the results file csvPath.
func HistogramDir(csvPath string) string { return Dir(csvPath) }

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// SafeName is name fit to be a file's: every run of other characters than letters, digits, ".",
// "_" and "-" one "-".
func SafeName(name string) string { return unsafeName.ReplaceAllString(name, "-") }

// HistogramBase is the path, without extension, of cell k's histogram files.
func HistogramBase(csvPath string, k Key) string {
	name := fmt.Sprintf("%s_%s_t%d", k.Scenario, k.Target, k.Trial)
	if strings.Contains(k.Scenario, ".find-max") {
		name += fmt.Sprintf("_%drps", k.RequestedRPS)
	}
	return filepath.Join(HistogramDir(csvPath), SafeName(name))
}

// WarmupTag tags the warm-up's intervals in a cell's interval log: HdrHistogram's tools read
// the untagged ones, the measured phase, unless asked for the tag.
const WarmupTag = "warmup"

// WriteHistograms writes cell c's interval log (base.hlog: one interval a second, the warm-up's
// tagged, the log starting with the warm-up, which lasted warmup, at measured − warmup) and the
// percentile distribution of whole, the measured phase's histogram (base.hgrm).
func WriteHistograms(base string, c Cell, measured time.Time, warmup time.Duration, whole *hdrhistogram.Histogram) error {
	if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
		return err
	}
	l := hdrlog.Log{
		Comment:   fmt.Sprintf("iotbench %s: latency of successful requests, µs recorded, ms shown (-outputValueUnitRatio 1000)", c.Key),
		StartTime: measured.Add(-warmup),
	}
	add := func(tag string, offset time.Duration, seconds []Second) {
		for _, s := range seconds {
			if s.Histogram == nil {
				continue
			}
			l.Intervals = append(l.Intervals, hdrlog.Interval{
				Tag: tag, Start: offset + time.Duration(s.Index)*time.Second, Length: time.Second,
				Max: s.Max, Encoded: s.Histogram,
			})
		}
	}
	add(WarmupTag, 0, c.Warmup)
	add("", warmup, c.Measure)
	if err := writeFile(base+".hlog", func(w io.Writer) error { return hdrlog.Write(w, l) }); err != nil {
		return err
	}
	if err := writeFile(base+".hgrm", func(w io.Writer) error { return hdrlog.WritePercentiles(w, whole) }); err != nil {
		os.Remove(base + ".hlog") // the cell's histograms are kept together or not at all
		return err
	}
	return nil
}

// writeFile writes path whole or not at all: into a temporary file beside it, renamed over path
// once synced. A failed write (a full disk) removes its part and any older path (a resumed cell's
// earlier attempt), so report finds no file rather than a torn one that holds fewer latencies
// than its row counts.
func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.partial")
	if err != nil {
		os.Remove(path)
		return err
	}
	err = f.Chmod(0o644) // as os.Create would: the files are for anyone reading the results
	if err == nil {
		err = write(f)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		os.Remove(path)
		return err
	}
	return nil
}

// ReadHistogram reads the measured phase's histogram back from a cell's interval log: its
// untagged intervals merged.
func ReadHistogram(base string) (*hdrhistogram.Histogram, error) {
	f, err := os.Open(base + ".hlog")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	l, err := hdrlog.Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s.hlog: %w", base, err)
	}
	var hs []*hdrhistogram.Histogram
	for _, in := range l.Intervals {
		if in.Tag != "" {
			continue
		}
		h, err := in.Histogram()
		if err != nil {
			return nil, fmt.Errorf("%s.hlog: interval at %v: %w", base, in.Start, err)
		}
		hs = append(hs, h)
	}
	pool, err := hdrlog.Merge(hs...)
	if err != nil {
		return nil, fmt.Errorf("%s.hlog: %w", base, err)
	}
	return pool, nil
}
