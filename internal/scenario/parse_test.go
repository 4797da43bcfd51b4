package scenario

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/arrival"
	"github.com/iotbench/iotbench/internal/golden"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/loadspec"
)

// TestErrorsAreGolden pins each broken file's error message: error text is interface.
func TestErrorsAreGolden(t *testing.T) {
	cases, _ := filepath.Glob("testdata/*.err")
	if len(cases) == 0 {
		t.Fatal("no golden cases in testdata")
	}
	for _, goldenPath := range cases {
		name := strings.TrimSuffix(filepath.Base(goldenPath), ".err")
		t.Run(name, func(t *testing.T) {
			_, err := Load(filepath.Join("testdata", name+".yaml"))
			if err == nil {
				t.Fatal("broken file parsed without error")
			}
			got := err.Error() + "\n"
			golden.Check(t, goldenPath, []byte(got))
		})
	}
}

func TestValidFileGetsDefaultsAndOrder(t *testing.T) {
	f, err := Load("testdata/valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := f.Scenarios["s"]
	checks := []struct {
		name      string
		got, want any
	}{
		{"target order", strings.Join(f.TargetOrder, ","), "t,u"},
		{"scenario order", strings.Join(f.ScenarioOrder, ","), "s,c,w"},
		{"method upper-cased", s.Request.Method, "POST"},
		{"body file resolved", s.Request.BodyFile, filepath.Join("testdata", "body.json")},
		{"build resolved", f.Targets["t"].Build, filepath.Join("testdata", "ctx/t")},
		{"duration from defaults", s.Duration, 5 * time.Second},
		{"explicit zero warm-up kept", s.Warmup.Length, time.Duration(0)},
		{"trials from defaults", s.Trials, 2},
		{"trials overridden", f.Scenarios["c"].Trials, 1},
		{"warm-up from built-in", f.Scenarios["c"].Warmup.Warmup, load.Warmup{Length: 10 * time.Second}},
		{"warm-up until steady, at most 90 s", f.Scenarios["w"].Warmup.Warmup, load.Warmup{Length: 90 * time.Second, Auto: true}},
		{"memory from built-in", s.Memory, "1g"},
		{"health default", f.Targets["u"].Health, "/health"},
		{"expected latency default", s.Load.ExpectedLatency, 100 * time.Millisecond},
		{"scenario line", s.Line, 14},
		{"target line", f.Targets["u"].Line, 10},
		{"json_fields imply a JSON answer", f.Scenarios["c"].Check.ContentType, "application/json"},
		{"min_latency", f.Scenarios["c"].Check.MinLatency, 50 * time.Millisecond},
		{"stores_rows", f.Scenarios["c"].Check.StoresRows, true},
		{"no content type asked", s.Check.ContentType, ""},
		{"payload sizes", fmt.Sprint(f.Scenarios["w"].Request.Sizes), "[{1k 1024} {16k 16384}]"},
		{"no payload sweep", len(s.Request.Sizes), 0},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestProjectScenarioFileIsValid(t *testing.T) {
	f, err := Load("../../scenarios.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if f.Scenarios[f.DefaultScenario] == nil {
		t.Errorf("default scenario %q missing", f.DefaultScenario)
	}
}

// The targets' build contexts cannot reach payloads/, so the JS and JVM contracts keep copies of
// the standard reading they seed and compare with; they must be the document the scenarios send.
func TestTargetsCarryTheScenariosReading(t *testing.T) {
	want, err := os.ReadFile("../../payloads/iot-reading.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, copy := range []string{
		"../../targets/js/contract/iot-reading.json",
		"../../targets/jvm/contract/src/main/resources/iot-reading.json",
	} {
		got, err := os.ReadFile(copy)
		if err != nil {
			t.Error(err)
			continue
		}
		if string(got) != string(want) {
			t.Errorf("%s differs from payloads/iot-reading.json: copy it again (cp payloads/iot-reading.json %s)", copy, strings.TrimPrefix(copy, "../../"))
		}
	}
}

// FuzzParse: whatever the bytes, Parse returns a file or errors without panicking; every error
// names the file (and a line within it when it names one); a file it accepts holds only values a
// run can use. The file is read as if it were testdata/fuzz.yaml, so that its paths can reach the
// build context and bodies of testdata. Seed corpus: testdata/*.yaml and testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.yaml")
	for _, path := range files {
		data, _ := os.ReadFile(path)
		f.Add(data)
	}
	path := filepath.Join("testdata", "fuzz.yaml")
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse(path, data)
		if err != nil {
			lines := 1 // YAML breaks lines at \n, \r, NEL, LS and PS alike: count each as one, \r\n as two
			for _, br := range []string{"\n", "\r", "\u0085", "\u2028", "\u2029"} {
				lines += strings.Count(string(data), br)
			}
			for _, msg := range strings.Split(err.Error(), "\n") {
				rest, ok := strings.CutPrefix(msg, path+":")
				if !ok {
					t.Fatalf("error %q does not name the file", msg)
				}
				var n int
				if _, scanErr := fmt.Sscanf(rest, "%d:", &n); scanErr == nil && (n < 1 || n > lines) {
					t.Fatalf("error %q names line %d of a %d-line file", msg, n, lines)
				}
			}
			return
		}
		for _, name := range file.ScenarioOrder {
			s := file.Scenarios[name]
			l := s.Load
			for _, err := range []error{loadspec.CheckPhase(s.Duration), loadspec.CheckWarmup(s.Warmup.Length), loadspec.CheckTrials(s.Trials),
				loadspec.CheckWait(l.Timeout), loadspec.CheckWait(l.ExpectedLatency), loadspec.CheckTimeout(l.Timeout, l.ExpectedLatency, s.Check.MinLatency)} {
				if err != nil {
					t.Fatalf("scenario %q accepted with %v", name, err)
				}
			}
			if (l.Rate > 0) == (l.Connections > 0) || loadspec.CheckRate(max(l.Rate, 1)) != nil || l.Connections > 0 && loadspec.CheckConnections(l.Connections) != nil {
				t.Fatalf("scenario %q accepted with rate %d, connections %d", name, l.Rate, l.Connections)
			}
			if _, err := ParseMemory(s.Memory); err != nil || len(s.Targets) == 0 {
				t.Fatalf("scenario %q accepted with memory %q, targets %v", name, s.Memory, s.Targets)
			}
			if s.Mixed() {
				kinds := make([]load.Kind, len(s.Requests))
				for i, r := range s.Requests {
					if !strings.HasPrefix(r.Path, "/") {
						t.Fatalf("scenario %q accepted with request path %q", name, r.Path)
					}
					kinds[i] = load.Kind{Name: r.Name, Weight: r.Weight, Rate: r.Rate}
				}
				if err := load.CheckKinds(kinds, load.Model{Rate: max(l.Rate, 1), Connections: l.Connections}); err != nil {
					t.Fatalf("scenario %q accepted with %v", name, err)
				}
			}
			for _, size := range s.Request.Sizes {
				if size.Bytes <= 0 || size.Bytes > MaxBodySize {
					t.Fatalf("scenario %q accepted with body size %d", name, size.Bytes)
				}
			}
			for _, target := range s.Targets {
				if file.Targets[target] == nil {
					t.Fatalf("scenario %q accepted with unknown target %q", name, target)
				}
			}
		}
		for _, name := range file.TargetOrder {
			if tg := file.Targets[name]; loadspec.CheckWait(tg.StartupTimeout) != nil || tg.Port < 1 || tg.Port > 65535 {
				t.Fatalf("target %q accepted with port %d, startup_timeout %v", name, tg.Port, tg.StartupTimeout)
			}
		}
	})
}

func TestStagesAndArrivalAreRead(t *testing.T) {
	doc := `
targets:
  t: {build: ctx/t, port: 9001}
scenarios:
  s:
    request: {path: /x}
    load: {stages: [30s:500, 60s:500-5000, 30s:5000], arrival: poisson}
    targets: [t]
`
	f, err := Parse("testdata/inline.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	l := f.Scenarios["s"].Load
	if got := load.FormatStages(l.Staged); got != "30s:500,1m:500-5000,30s:5000" || l.Arrival != arrival.Poisson {
		t.Errorf("stages %s, arrival %q; want 30s:500,1m:500-5000,30s:5000 and poisson", got, l.Arrival)
	}
}

func TestRequestsAreRead(t *testing.T) {
	doc := `
targets:
  t: {build: ctx/t, port: 9001}
scenarios:
  s:
    requests:
      - {name: ingest, method: post, path: /ingest, body_file: body.json, weight: 80, check: {json_fields: [id], stores_rows: true}}
      - {name: page, path: /page, weight: 20}
      - {name: probe, path: /health, rate: 50}
    load: {rate: 100}
    targets: [t]
`
	f, err := Parse("testdata/inline.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	s := f.Scenarios["s"]
	kinds, err := s.Kinds()
	if err != nil {
		t.Fatal(err)
	}
	if got := load.FormatKinds(kinds); got != "ingest:80,page:20,probe@50" || !s.Mixed() {
		t.Fatalf("kinds %s, want ingest:80,page:20,probe@50", got)
	}
	in := kinds[0]
	if in.Request.Method != "POST" || in.Request.URL != "/ingest" || len(in.Request.Body) == 0 || in.Check.ContentType != "application/json" || !in.Check.StoresRows {
		t.Errorf("ingest: %s %s, %d bytes, check %+v; want POST /ingest, the body, a JSON check storing rows", in.Request.Method, in.Request.URL, len(in.Request.Body), in.Check)
	}
	if kinds[1].Request.Method != "GET" || kinds[1].Weight != 20 || kinds[2].Rate != 50 || kinds[2].Weight != 0 {
		t.Errorf("page %+v, probe %+v", kinds[1], kinds[2])
	}
}

// A pool is threads that serve requests: a negative one is a typo, said where it is.
func TestANegativePoolIsRefused(t *testing.T) {
	_, err := Parse("s.yaml", []byte("targets:\n  t: {build: b, port: 9001, pool: -1}\nscenarios:\n  s:\n    request: {path: /x}\n    load: {rate: 1}\n    targets: [t]\n"))
	if err == nil || !strings.Contains(err.Error(), `s.yaml:2: target "t": pool -1 must not be negative`) {
		t.Errorf("got %v, want the pool refused at its line", err)
	}
}
