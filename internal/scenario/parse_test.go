package scenario

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden .err files")

// TestErrorsAreGolden pins each broken file's error message: error text is interface.
func TestErrorsAreGolden(t *testing.T) {
	cases, _ := filepath.Glob("testdata/*.err")
	if len(cases) == 0 {
		t.Fatal("no golden cases in testdata")
	}
	for _, golden := range cases {
		name := strings.TrimSuffix(filepath.Base(golden), ".err")
		t.Run(name, func(t *testing.T) {
			_, err := Load(filepath.Join("testdata", name+".yaml"))
			if err == nil {
				t.Fatal("broken file parsed without error")
			}
			got := err.Error() + "\n"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, _ := os.ReadFile(golden)
			if got != string(want) {
				t.Errorf("error:\n%s\nwant:\n%s", got, want)
			}
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
		{"explicit zero warm-up kept", *s.Warmup, time.Duration(0)},
		{"trials from defaults", s.Trials, 2},
		{"trials overridden", f.Scenarios["c"].Trials, 1},
		{"warm-up from built-in", *f.Scenarios["c"].Warmup, 10 * time.Second},
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
