package plan

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/arrival"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/loadspec"
	"github.com/iotbench/iotbench/internal/scenario"
)

func TestSplitCPUs(t *testing.T) {
	cases := []struct {
		allowed       []int
		asked         string
		wantTarget    []int
		wantGenerator []int
		wantErr       string
	}{
		{[]int{0, 1}, "", []int{1}, []int{0}, ""},
		{[]int{0, 1, 2, 3}, "", []int{3}, []int{0, 1, 2}, ""},
		{[]int{0, 1, 2, 3, 4, 5, 6, 7}, "", []int{6, 7}, []int{0, 1, 2, 3, 4, 5}, ""},
		{[]int{0, 1, 2, 3}, "2-3", []int{2, 3}, []int{0, 1}, ""},
		{[]int{0}, "", nil, nil, "at least 2 CPUs"},
		{[]int{0, 1}, "0-1", nil, nil, "no CPU for the load generator"},
		{[]int{0, 1}, "5", nil, nil, "names CPU 5, but CPUs are numbered 0 to 1 here"},
		{[]int{0, 2, 3}, "1", nil, nil, "CPU 1 is not available here (available: 0,2-3)"},
		{[]int{0, 1}, "0-4000000000", nil, nil, "names CPU 4000000000, but CPUs are numbered 0 to 1 here"},
	}
	for _, c := range cases {
		tg, gen, err := SplitCPUs(c.allowed, c.asked)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("SplitCPUs(%v, %q) err = %v, want %q", c.allowed, c.asked, err, c.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(tg, c.wantTarget) || !slices.Equal(gen, c.wantGenerator) {
			t.Errorf("SplitCPUs(%v, %q) = %v, %v, %v; want %v, %v", c.allowed, c.asked, tg, gen, err, c.wantTarget, c.wantGenerator)
		}
	}
}

func fixture(t *testing.T) *scenario.File {
	t.Helper()
	f, err := scenario.Load("../scenario/testdata/valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestCellsInterleaveTrialsAndShareSettings(t *testing.T) {
	p, err := Make(fixture(t), "s", Overrides{}, []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, c := range p.Cells {
		order = append(order, c.Target+"#"+string(rune('0'+c.Trial)))
		if c.Spec.CPUSet != "1" || c.Spec.Memory != 1<<30 || c.Load.Duration != 5*time.Second || c.Load.Warmup != 0 {
			t.Errorf("cell %s#%d: cpuset %q memory %d duration %v warmup %v", c.Target, c.Trial, c.Spec.CPUSet, c.Spec.Memory, c.Load.Duration, c.Load.Warmup)
		}
	}
	if got := strings.Join(order, " "); got != "u#1 t#1 u#2 t#2" {
		t.Errorf("cell order %s, want trials interleaved across targets", got)
	}
	if len(p.Builds) != 1 {
		t.Errorf("%d builds, want 1: both targets share a build context", len(p.Builds))
	}
	if c := p.Cells[0]; c.Path != "/x" || c.Spec.Port != 9002 {
		t.Errorf("path %s port %d", c.Path, c.Spec.Port)
	}
	if string(p.Cells[0].Load.Request.Body) != "{}\n" || p.Cells[0].Load.Request.Method != "POST" {
		t.Errorf("request body %q method %s", p.Cells[0].Load.Request.Body, p.Cells[0].Load.Request.Method)
	}
}

// The scenario's check block is the cells' load.Check as a whole: what the engine, verification
// and the bench each apply comes from one value, not copies that can miss a field.
func TestCellsCarryTheScenariosWholeCheck(t *testing.T) {
	f := fixture(t)
	p, err := Make(f, "c", Overrides{}, []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	want := load.Check{ContentType: "application/json", JSONFields: []string{"id"}, MinLatency: 50 * time.Millisecond, StoresRows: true}
	if !reflect.DeepEqual(f.Scenarios["c"].Check, want) {
		t.Fatalf("scenario c's check %+v, want %+v", f.Scenarios["c"].Check, want)
	}
	for _, c := range p.Cells {
		if !reflect.DeepEqual(c.Load.Check, want) {
			t.Errorf("cell %s#%d: check %+v, want the scenario's %+v", c.Target, c.Trial, c.Load.Check, want)
		}
	}
}

// settings are the load settings the command line gives, each as it writes it (KEY, TEXT, …).
func settings(kv ...string) (loadspec.Spec, error) {
	var s loadspec.Spec
	for i := 0; i+1 < len(kv); i += 2 {
		if err := s.Set(loadspec.Key(kv[i]), kv[i+1]); err != nil {
			return s, err
		}
	}
	return s, nil
}

// given are settings that must read.
func given(t *testing.T, kv ...string) loadspec.Spec {
	t.Helper()
	s, err := settings(kv...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// makeWith plans scenario name of the fixture with the settings kv, as the command line gives them.
func makeWith(t *testing.T, name string, kv ...string) (*Plan, error) {
	spec, err := settings(kv...)
	if err != nil {
		return nil, err
	}
	return Make(fixture(t), name, Overrides{Load: spec}, []int{0, 1})
}

func TestOverrides(t *testing.T) {
	d := 2 * time.Second
	p, err := Make(fixture(t), "s", Overrides{Targets: []string{"t"}, Load: given(t, "duration", "2s", "connections", "7", "trials", "1", "timeout", "2s"), Memory: "256m"}, []int{0, 1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Cells) != 1 {
		t.Fatalf("%d cells, want 1", len(p.Cells))
	}
	c := p.Cells[0]
	if c.Target != "t" || c.Load.Duration != d || c.Load.Model.Mode() != load.Closed || c.Load.Model.Connections != 7 || c.Spec.Memory != 256<<20 || c.Load.Timeout != 2*time.Second {
		t.Errorf("overrides not applied: %+v", c)
	}
}

func TestPlanErrors(t *testing.T) {
	cases := []struct {
		name     string
		scenario string
		o        Overrides
		want     string
	}{
		{"unknown scenario", "nope", Overrides{}, `no scenario "nope"`},
		{"unknown target", "s", Overrides{Targets: []string{"ghost"}}, `targets ghost: not a target of ../scenario/testdata/valid.yaml (known: t, u)`},
		{"both models", "s", Overrides{Load: given(t, "rate", "5", "connections", "5")}, "not both"},
		{"bad memory", "s", Overrides{Memory: "lots"}, "memory lots: not a size Docker accepts"},
		{"cpus this machine lacks", "s", Overrides{CPUs: "2"}, "cpus 2: names CPU 2, but CPUs are numbered 0 to 1 here"},
		{"a timeout every answer would hit", "c", Overrides{Load: given(t, "timeout", "50ms")}, "timeout 50ms: not above the work's minimum latency 50ms"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Make(fixture(t), c.scenario, c.o, []int{0, 1})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want %q", err, c.want)
			}
		})
	}
}

// TestSettingErrorsNameTheirSource: a value the command line gave is an *OverrideError (the
// command line names its flag); one the file gave is named at its line.
func TestSettingErrorsNameTheirSource(t *testing.T) {
	ctx, _ := filepath.Abs("../scenario/testdata/ctx/t")
	path := filepath.Join(t.TempDir(), "s.yaml")
	os.WriteFile(path, []byte("defaults:\n  cpus: \"3\"\ntargets:\n  t: {build: "+ctx+", port: 9001}\n"+
		"scenarios:\n  s:\n    request: {path: /x}\n    load: {rate: 10}\n    targets: [t]\n  m:\n    request: {path: /x}\n    load: {rate: 10}\n    cpus: 0-1\n    targets: [t]\n"), 0o644)
	f, err := scenario.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		scenario string
		o        Overrides
		want     string
		override bool
	}{
		{"s", Overrides{}, path + `:2: scenario "s": cpus 3: names CPU 3, but CPUs are numbered 0 to 1 here`, false},
		{"m", Overrides{}, path + `:13: scenario "m": cpus 0-1: leaves no CPU for the load generator (available: 0-1)`, false},
		{"s", Overrides{CPUs: "1-2"}, "cpus 1-2: names CPU 2, but CPUs are numbered 0 to 1 here", true},
	}
	for _, c := range cases {
		_, err := Make(f, c.scenario, c.o, []int{0, 1})
		var oe *OverrideError
		if err == nil || err.Error() != c.want || errors.As(err, &oe) != c.override {
			t.Errorf("%s %+v: err %v (override %v), want %q (override %v)", c.scenario, c.o, err, oe != nil, c.want, c.override)
		}
	}
	if _, err := Targets(f, nil, Overrides{}, []int{0, 1}); err == nil || err.Error() != path+`:2: defaults: cpus 3: names CPU 3, but CPUs are numbered 0 to 1 here` {
		t.Errorf("verify's plan: %v", err)
	}
}

// The arrival process is the command line's when given, else the scenario's; a random one draws
// from the trial's number, so every target of a trial meets the same arrivals. Closed loops have
// none.
func TestArrivalOverride(t *testing.T) {
	p, err := makeWith(t, "s", "arrival", "poisson")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range p.Cells {
		if m := c.Load.Model; m.Arrival != arrival.Poisson || m.Seed != uint64(c.Trial) {
			t.Errorf("%s trial %d: arrival %q seed %d, want poisson seeded %d", c.Target, c.Trial, m.Arrival, m.Seed, c.Trial)
		}
	}
	for _, tc := range []struct {
		kv   []string
		want string
	}{
		{[]string{"arrival", "bursty"}, `arrival bursty: unknown arrival process "bursty"`},
		{[]string{"arrival", "poisson", "connections", "4"}, "arrival poisson: an arrival process paces an open loop"},
	} {
		if _, err := makeWith(t, "s", tc.kv...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v, want %q", tc.kv, err, tc.want)
		}
	}
	if _, err := MakeAdHoc(AdHoc{URL: "http://127.0.0.1:1/", Load: given(t, "connections", "4", "arrival", "poisson")}); err == nil {
		t.Error("an ad-hoc closed loop took an arrival process")
	}
}

// Stages replace the scenario's rate and set the measured phase's length; the cell is judged by
// their mean rate. A rate on the command line replaces them; a duration with them is refused.
func TestStagesOverride(t *testing.T) {
	p, err := makeWith(t, "s", "stages", "2s:100,2s:100-300")
	if err != nil {
		t.Fatal(err)
	}
	m := p.Cells[0].Load.Model
	if got := load.FormatStages(m.Stages); got != "2s:100,2s:100-300" || m.Rate != 150 || p.Cells[0].Load.Duration != 4*time.Second {
		t.Errorf("stages %s, rate %d, duration %v; want 2s:100,2s:100-300 at a mean of 150 over 4s", got, m.Rate, p.Cells[0].Load.Duration)
	}
	for _, tc := range []struct {
		kv   []string
		want string
	}{
		{[]string{"stages", "2s:100", "rate", "5"}, "stages 2s:100: give stages, a rate or connections, one of them"},
		{[]string{"stages", "2s"}, `stages 2s: stage "2s": write it DURATION:RATE`},
		{[]string{"stages", "2s:100", "duration", "1m"}, "duration 1m: the stages (2s:100) set the measured phase's length"},
	} {
		if _, err := makeWith(t, "s", tc.kv...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v, want %q", tc.kv, err, tc.want)
		}
	}
}

// Think time is the closed loop's: the command line's when given, else the scenario's; refused
// with a rate, dropped when a rate replaces the connections.
func TestThinkOverride(t *testing.T) {
	p, err := makeWith(t, "c", "think", "exp:200ms")
	if err != nil {
		t.Fatal(err)
	}
	if th := p.Cells[0].Load.Model.Think; th != (load.Think{Mean: 200 * time.Millisecond, Exponential: true}) {
		t.Errorf("think %v, want exp:200ms", th)
	}
	for _, tc := range []struct {
		name string
		kv   []string
		want string
	}{
		{"s", []string{"think", "100ms"}, "think 100ms: a think time paces a closed loop"},
		{"c", []string{"think", "soon"}, `think soon: think time "soon"`},
	} {
		if _, err := makeWith(t, tc.name, tc.kv...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v: err %v, want %q", tc.name, tc.kv, err, tc.want)
		}
	}
}
