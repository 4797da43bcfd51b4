package overview

import (
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/golden"
	"github.com/iotbench/iotbench/internal/results"
)

func row(target string, trial int, tput float64, p99ms float64, valid bool, reason string) results.Row {
	return results.Row{
		Scenario: "io-heavy", Target: target, Trial: trial, Mode: "open", RequestedRPS: 1000, Connections: 300,
		ThroughputRPS: tput, SuccessRatio: tput / 1000, LatencyP50: 50500 * time.Microsecond,
		LatencyP99: time.Duration(p99ms * 1e6), LatencyP999: time.Duration(p99ms * 1.5e6), SendLagP99: 400 * time.Microsecond, GeneratorDelayP99: 900 * time.Microsecond,
		Duration: 20 * time.Second, Warmup: 10 * time.Second, CPUSet: "1", GeneratorCPUSet: "0", Memory: "1g",
		Valid: valid, InvalidReason: reason,
	}
}

// sixTrials: three targets, six trials each, interleaved. spring-mvc-virtual and javalin-virtual
// overlap in p99 (a tie); fastify's p99 is higher in every trial, and noisy.
func sixTrials() []results.Row {
	p99 := map[string][]float64{
		"spring-mvc-virtual": {55.2, 54.1, 56.9, 55.8, 54.9, 56.1},
		"javalin-virtual":    {55.5, 54.6, 56.2, 55.1, 57.0, 54.4},
		"fastify":            {61.7, 69.0, 60.2, 75.3, 62.8, 64.1},
	}
	var rows []results.Row
	for trial := 1; trial <= 6; trial++ {
		for _, t := range []string{"javalin-virtual", "fastify", "spring-mvc-virtual"} {
			rows = append(rows, row(t, trial, 999.9, p99[t][trial-1], true, ""))
		}
	}
	return rows
}

// service is a row of a run against --url: no cpuset or memory of ours to name.
func service() results.Row {
	r := row("http://127.0.0.1:8080/", 1, 999.8, 61.7, true, "")
	r.CPUSet, r.Memory = "", ""
	return r
}

func TestSummaryCountsCells(t *testing.T) {
	staged := func(stage int, valid bool) results.Row {
		r := row("fastify", 1, 999, 60, valid, "")
		r.Stage = stage
		return r
	}
	cases := []struct {
		name string
		rows []results.Row
		want string
	}{
		{"stages are part of their cell", []results.Row{staged(0, true), staged(1, true), staged(2, true)}, "1 cell(s), all valid"},
		{"an invalid stage is not an invalid cell", []results.Row{staged(0, true), staged(1, false), staged(0, false)}, "2 cell(s), 1 invalid"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Summary(c.rows); got != c.want {
				t.Errorf("Summary = %q, want %q", got, c.want)
			}
		})
	}
}

func TestGolden(t *testing.T) {
	cases := map[string][]results.Row{
		"three-trials": {
			row("spring-mvc-virtual", 1, 999.9, 55.2, true, ""), row("fastify", 1, 999.8, 61.7, true, ""),
			row("spring-mvc-virtual", 2, 999.7, 54.1, true, ""), row("fastify", 2, 700.0, 2100, false, "success ratio 0.7000 below 0.99"),
			row("spring-mvc-virtual", 3, 1000.0, 56.9, true, ""), row("fastify", 3, 999.9, 60.2, true, ""),
		},
		"one-trial":         {row("fastify", 1, 999.8, 61.7, true, "")},
		"service-by-url":    {service()},
		"six-trials-ranked": sixTrials(),
		// Trials still warming up are no figures to rank: the table says so, beside the trials short.
		"six-trials-two-still-warming": func() []results.Row {
			rows := sixTrials()
			for _, i := range []int{1, 4} { // fastify's first two
				rows[i].JITBusy, rows[i].JITJudged = 15*time.Second, true
				rows[i].Warnings = rows[i].WarmingWarning()
			}
			return rows
		}(),
	}
	for name, rows := range cases {
		t.Run(name, func(t *testing.T) {
			var b strings.Builder
			if err := Write(&b, rows); err != nil {
				t.Fatal(err)
			}
			path := "testdata/table/" + name + ".golden"
			golden.Check(t, path, []byte(b.String()))
		})
	}
}

// A paired run's baseline and candidate of a target are summarized apart, each named by its
// side from the row's variant column: the table names them, and never one side twice.
func TestPairedSidesAreApartByTheirVariant(t *testing.T) {
	var rows []results.Row
	for trial := 1; trial <= 3; trial++ {
		for _, v := range []string{results.VariantBase, results.VariantCandidate} {
			r := row("fastify", trial, 999.9, 60, true, "")
			r.Variant = v
			rows = append(rows, r)
		}
	}
	var b strings.Builder
	if err := Write(&b, rows); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"fastify (base)", "fastify (candidate)"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "(base) (base)") || strings.Contains(out, "(candidate) (candidate)") {
		t.Errorf("a side named twice:\n%s", out)
	}
}

// A find-max scenario's cells are steps at rising rates: its heading names no one rate (it took
// the first step's, which read as the scenario's load).
func TestAFindMaxHeadingNamesNoOneRate(t *testing.T) {
	var rows []results.Row
	for i, rate := range []int{1000, 2000, 1500} {
		r := row("t", i+1, float64(rate), 60, true, "")
		r.Scenario, r.Search, r.RequestedRPS = "io"+results.FindMaxSuffix, 1, rate
		rows = append(rows, r)
	}
	var b strings.Builder
	if err := Write(&b, rows); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "io.find-max — find-max steps, open loop at rising rates") || strings.Contains(out, "open loop at 1000 rps") {
		t.Errorf("heading:\n%s", out)
	}
}
