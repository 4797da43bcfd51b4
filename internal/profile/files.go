package profile

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/iotbench/iotbench/internal/flame"
	"github.com/iotbench/iotbench/internal/timeline"
)

// A run's profiles lie in its timeline folder (timeline.Dir): profiles.csv says what each one is
// of, a line each, and profiles/<name>.folded holds its stacks, readable by any flame graph tool.

// Record is one profile: of which search's target, at what rate, what the profiled step measured
// (not the search's figures: its container ran with the profiling options), and what perf cost.
type Record struct {
	Scenario, Target string
	Search, Rate     int
	Achieved         float64 // the profiled step's sent rate
	P50, P99         time.Duration
	Duration         time.Duration
	Cost             Cost
	// Processes were sampled; Named of them had a symbol map for their JIT code.
	Processes, Named int
	Stacks           flame.Profile
	// File is the folded stacks' path, relative to the folder.
	File string
}

var header = []string{"scenario", "target", "search", "rate", "achieved_rps", "p50_ms", "p99_ms", "duration_s",
	"samples", "perf_cpu_seconds", "hz", "processes", "named", "file"}

const indexName = "profiles.csv"

// Write keeps r's stacks in dir/profiles/ and appends r to dir/profiles.csv, setting r.File.
func Write(dir string, r *Record) error {
	name := timeline.SafeName(fmt.Sprintf("%s_%s_s%d_%drps", r.Scenario, r.Target, r.Search, r.Rate))
	r.File = filepath.Join("profiles", name+".folded")
	if err := os.MkdirAll(filepath.Join(dir, "profiles"), 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, r.File))
	if err != nil {
		return err
	}
	if err := r.Stacks.WriteFolded(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	index := filepath.Join(dir, indexName)
	_, statErr := os.Stat(index)
	w, err := os.OpenFile(index, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	if statErr != nil {
		cw.Write(header)
	}
	cw.Write([]string{r.Scenario, r.Target, strconv.Itoa(r.Search), strconv.Itoa(r.Rate),
		strconv.FormatFloat(r.Achieved, 'f', 1, 64), ms(r.P50), ms(r.P99), strconv.FormatFloat(r.Duration.Seconds(), 'f', 3, 64),
		strconv.FormatInt(r.Stacks.Total, 10), strconv.FormatFloat(r.Cost.CPU.Seconds(), 'f', 3, 64), strconv.Itoa(Hz),
		strconv.Itoa(r.Processes), strconv.Itoa(r.Named), filepath.ToSlash(r.File)})
	cw.Flush()
	if err := cw.Error(); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

func ms(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 3, 64) }

// Read reads the profiles of the folder dir, stacks included; none when it has no index.
func Read(dir string) ([]Record, error) {
	f, err := os.Open(filepath.Join(dir, indexName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readIndex(f, func(file string) (flame.Profile, error) {
		sf, err := os.Open(filepath.Join(dir, filepath.FromSlash(file)))
		if err != nil {
			return flame.Profile{}, err
		}
		defer sf.Close()
		return flame.ParseFolded(sf)
	}, filepath.Join(dir, indexName))
}

// readIndex reads an index, each profile's stacks by stacks.
func readIndex(r io.Reader, stacks func(file string) (flame.Profile, error), name string) ([]Record, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = len(header)
	lines, err := cr.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(lines) == 0 {
		return nil, nil
	}
	for i, h := range header {
		if lines[0][i] != h {
			return nil, fmt.Errorf("%s:1: column %d is %q, want %q (not a profiles index of this iotbench)", name, i+1, lines[0][i], h)
		}
	}
	var out []Record
	for n, l := range lines[1:] {
		line := n + 2
		var rec Record
		var errs []error
		num := func(col int, to *int) {
			v, err := strconv.Atoi(l[col])
			if err != nil || v < 0 {
				errs = append(errs, fmt.Errorf("%s %q", header[col], l[col]))
			}
			*to = v
		}
		dur := func(col int, unit time.Duration, to *time.Duration) {
			v, err := strconv.ParseFloat(l[col], 64)
			if err != nil || v < 0 || v > 1e9 {
				errs = append(errs, fmt.Errorf("%s %q", header[col], l[col]))
			}
			*to = time.Duration(v * float64(unit))
		}
		rec.Scenario, rec.Target = l[0], l[1]
		num(2, &rec.Search)
		num(3, &rec.Rate)
		a, err := strconv.ParseFloat(l[4], 64)
		if err != nil || a < 0 {
			errs = append(errs, fmt.Errorf("%s %q", header[4], l[4]))
		}
		rec.Achieved = a
		dur(5, time.Millisecond, &rec.P50)
		dur(6, time.Millisecond, &rec.P99)
		dur(7, time.Second, &rec.Duration)
		dur(9, time.Second, &rec.Cost.CPU)
		rec.Cost.Wall = rec.Duration
		num(11, &rec.Processes)
		num(12, &rec.Named)
		rec.File = l[13]
		if len(errs) > 0 {
			return nil, fmt.Errorf("%s:%d: %w", name, line, errors.Join(errs...))
		}
		if !filepath.IsLocal(filepath.FromSlash(rec.File)) {
			return nil, fmt.Errorf("%s:%d: file %q is not inside the folder", name, line, rec.File)
		}
		st, err := stacks(rec.File)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %s: %w", name, line, rec.File, err)
		}
		if samples, err := strconv.ParseInt(l[8], 10, 64); err != nil || samples != st.Total {
			return nil, fmt.Errorf("%s:%d: %s holds %d samples, its line %s: not written whole, or of another run", name, line, rec.File, st.Total, l[8])
		}
		rec.Stacks = st
		out = append(out, rec)
	}
	return out, nil
}
