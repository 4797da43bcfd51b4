package experiment

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/iotbench/iotbench/internal/results"
)

// RunPath is where a reproduced run's rows go: <dir>/<experiment>/<run>.csv, its timeline,
// histograms and target logs beside it.
func RunPath(dir, experiment, run string) string {
	return filepath.Join(dir, experiment, run+".csv")
}

// ReadMeasured reads the run files of the named experiments under dir; a run without a file has
// no rows, and a last row cut off mid-way is left out (the rows before it are the run's).
func ReadMeasured(dir string, f *File, names []string) (Measured, error) {
	out := Measured{}
	for _, name := range names {
		out[name] = map[string][]results.Row{}
		for _, r := range f.Experiments[name].Runs {
			rows, _, err := results.ReadFile(RunPath(dir, name, r.Name))
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, err
			}
			out[name][r.Name] = rows
		}
	}
	return out, nil
}
