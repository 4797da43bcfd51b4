package experiment

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/golden"
	"github.com/iotbench/iotbench/internal/scenario"
)

func goldenFile(t *testing.T, path, got string) {
	t.Helper()
	golden.Check(t, path, []byte(got))
}

func scenarios(t testing.TB) *scenario.File {
	t.Helper()
	sf, err := scenario.Load("testdata/scenarios.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return sf
}

// TestErrorsAreGolden pins each broken file's errors: every mistake at its line, what to do.
func TestErrorsAreGolden(t *testing.T) {
	sf := scenarios(t)
	for _, name := range []string{"unknown-key", "bad-references", "bad-names", "wrong-type", "not-yaml", "empty"} {
		t.Run(name, func(t *testing.T) {
			_, err := Load(filepath.Join("testdata", name+".yaml"), sf)
			if err == nil {
				t.Fatal("a broken file was read without error")
			}
			goldenFile(t, filepath.Join("testdata", name+".err"), err.Error()+"\n")
		})
	}
}

func TestValidFile(t *testing.T) {
	f, err := Load("testdata/valid.yaml", scenarios(t))
	if err != nil {
		t.Fatal(err)
	}
	first := f.Experiments["first"]
	checks := []struct {
		name      string
		got, want any
	}{
		{"order", strings.Join(f.Order, ","), "first,second"},
		{"experiment line", first.Line, 3},
		{"run line", first.Runs[1].Line, 10},
		{"claim line", first.Claims[2].Line, 16},
		{"row line", first.Rows[0].Line, 12},
		{"warm-up 0 kept", first.Runs[0].Warmup.Length, time.Duration(0)},
		{"timeout", first.Runs[0].Timeout, 2 * time.Second},
		{"run targets default to the scenario's", strings.Join(first.Runs[0].targetsIn(scenarios(t)), ","), "a,b,c"},
		{"needs_cpus", f.Experiments["second"].Runs[0].NeedsCPUs, 4},
		{"published value", first.Rows[0].Values["latency_mean_ms"], 50.0},
		{"as written", first.Rows[0].AsWritten["throughput_rps"], "50k/s"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
}

// The project's own experiments.yaml must read against its scenarios.yaml.
func TestTheProjectsExperimentsRead(t *testing.T) {
	sf, err := scenario.Load("../../scenarios.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f, err := Load("../../experiments.yaml", sf)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Order) < 5 {
		t.Errorf("%d experiments, want one per published source (5)", len(f.Order))
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"valid", "unknown-key", "bad-references", "wrong-type", "not-yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata", name+".yaml"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	sf := scenarios(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("fuzz.yaml", data, sf)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.yaml") {
				t.Errorf("error does not name the file: %v", err)
			}
			return
		}
		// What parses must be usable: every claim checks against no rows without panicking.
		for _, name := range file.Order {
			Check(file.Experiments[name], nil)
		}
	})
}
