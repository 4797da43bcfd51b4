package run

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/iotbench/iotbench/internal/bench"
	"github.com/iotbench/iotbench/internal/exitcode"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/timeline"
)

// resultsFile is where a run's rows go, with the rows an earlier run of it recorded there.
type resultsFile struct {
	w       *results.Writer
	path    string
	resumed []results.Row
	seed    int64
}

func (f *resultsFile) close() { f.w.Close() }

// openResults opens where s's rows go: a new file in s.Out, the file of an interrupted run
// (s.Resume) or a run's own file (s.File), continued when it exists. A file continued gives the
// run its seed.
func (rs *Runs) openResults(s Setup) (*resultsFile, error) {
	f := &resultsFile{}
	path, given := s.Resume, "--resume "
	if s.File != "" {
		path, given = s.File, ""
	}
	var warnings []string
	var err error
	switch _, statErr := os.Stat(path); {
	case path == "":
		f.w, err = results.CreateIn(s.Out, rs.Effects.Now())
	case s.File != "" && statErr != nil:
		if err = os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
			f.w, err = results.Create(path)
		}
	default:
		if f.w, f.resumed, warnings, err = results.Append(path); err != nil {
			if s.File != "" {
				return nil, fmt.Errorf("%s: %v (remove it to measure the run again)", path, err)
			}
			return nil, exitcode.Usagef("%s%v", given, err)
		}
	}
	if err != nil {
		return nil, err
	}
	for _, warning := range warnings {
		fmt.Fprintln(s.Log, "warning:", warning)
	}
	f.path = f.w.Path()
	switch {
	case len(f.resumed) > 0 && s.Seed != nil && *s.Seed != f.resumed[0].Seed:
		f.w.Close()
		return nil, exitcode.Usagef("--seed %d: %s was ordered by seed %d; drop --seed to resume it", *s.Seed, path, f.resumed[0].Seed)
	case len(f.resumed) > 0:
		f.seed = f.resumed[0].Seed
	case s.Seed != nil:
		f.seed = *s.Seed
	default:
		f.seed = newSeed()
	}
	return f, nil
}

// detailFiles keep each measured phase's per-second timeline and latency histograms beside the
// results file (docs/timeline.md).
type detailFiles struct {
	tw      *timeline.Writer
	csvPath string
}

func openDetail(csvPath string) (*detailFiles, error) {
	tw, err := timeline.Append(timeline.Path(csvPath))
	if err != nil {
		return nil, err
	}
	return &detailFiles{tw: tw, csvPath: csvPath}, nil
}

// keep writes a measured phase's timeline and histograms, before its row is recorded.
func (d *detailFiles) keep(row results.Row, detail bench.Detail) error {
	if err := d.tw.Write(detail.Cell); err != nil {
		return err
	}
	return timeline.WriteHistograms(timeline.HistogramBase(d.csvPath, detail.Cell.Key), detail.Cell, row.StartedAt, row.WarmupTaken, detail.Latencies)
}

func (d *detailFiles) close() { d.tw.Close() }
