package history

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/results"
)

// realNoise is, per metric, the run-to-run noise of real measurements: every valid trial of the
// committed experiments (docs/experiments) as a ratio to its cell's mean. Their cells have two
// trials, whose deviations from their own mean are 1/√2 of a trial's from the true level: the
// deviations are scaled back by √2.
func realNoise(t testing.TB) map[string][]float64 {
	t.Helper()
	files, err := filepath.Glob("../../docs/experiments/*/*.csv")
	if err != nil || len(files) == 0 {
		t.Fatalf("no committed results: %v", err)
	}
	type cell struct{ file, scenario, target, variant string }
	cells := map[cell][]results.Row{}
	var order []cell
	for _, f := range files {
		rows, _, err := results.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if !r.Valid {
				continue
			}
			c := cell{f, r.Scenario, r.Target, r.Variant}
			if cells[c] == nil {
				order = append(order, c)
			}
			cells[c] = append(cells[c], r)
		}
	}
	noise := map[string][]float64{}
	for _, c := range order {
		rows := cells[c]
		if len(rows) < 2 {
			continue
		}
		for _, m := range []string{"throughput", "p50", "p99"} {
			metric, _ := results.MetricNamed(m)
			vals := metric.Of(rows)
			mean := 0.0
			for _, v := range vals {
				mean += v / float64(len(vals))
			}
			if mean <= 0 {
				continue
			}
			scale := math.Sqrt(float64(len(vals)) / float64(len(vals)-1))
			for _, v := range vals {
				noise[m] = append(noise[m], 1+scale*(v-mean)/mean)
			}
		}
	}
	for m, n := range noise {
		if len(n) < 20 {
			t.Fatalf("%s: only %d noise samples", m, len(n))
		}
	}
	return noise
}

// resample draws n values of level × a real noise ratio.
func resample(rng *rand.Rand, noise []float64, level float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = level * noise[rng.IntN(len(noise))]
	}
	return out
}

// stepRows are a generated series of rows, one a commit c0, c1, …: p50 and p99 at before, then
// at after from commit step on, with real noise.
func stepRows(t testing.TB, n, step int, before, after float64) []results.Row {
	noise := realNoise(t)
	rng := rand.New(rand.NewPCG(7, 7))
	p50 := append(resample(rng, noise["p50"], before, step), resample(rng, noise["p50"], after, n-step)...)
	p99 := append(resample(rng, noise["p99"], 3*before, step), resample(rng, noise["p99"], 3*after, n-step)...)
	tput := resample(rng, noise["throughput"], 1000, n)
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var rows []results.Row
	for i := range n {
		rows = append(rows, results.Row{
			Scenario: "ingest", Target: "express", Trial: 1, Mode: "open", RequestedRPS: 1000,
			Duration: 10 * time.Second, Warmup: 2 * time.Second, Valid: true, CPUSet: "1", Memory: "1g",
			StartedAt: start.Add(time.Duration(i) * 24 * time.Hour), Version: fmt.Sprintf("v0.%d", i), ImageID: fmt.Sprintf("sha256:%d", i),
			GitCommit: fmt.Sprintf("c%d", i), HostCPU: "test cpu", Kernel: "6.1", Seed: int64(i),
			ThroughputRPS: tput[i], SuccessRatio: 1, LatencyP50: ms(p50[i]), LatencyP99: ms(p99[i]), LatencyP999: ms(4 * p99[i]),
		})
	}
	return rows
}

func ms(x float64) time.Duration { return time.Duration(x * 1e6) }

// TestAASeriesHaveNoChangePoint: series of real noise around one level (resampled from the
// committed runs), 40 points each, show a change point in about Alpha of them, no more.
func TestAASeriesHaveNoChangePoint(t *testing.T) {
	noise := realNoise(t)
	rng := rand.New(rand.NewPCG(1, 2))
	d := DefaultDetection
	const series = 200
	for _, m := range []string{"throughput", "p50", "p99"} {
		falsePositives := 0
		for i := range series {
			if len(d.Detect(resample(rng, noise[m], 20, 40), uint64(i))) > 0 {
				falsePositives++
			}
		}
		t.Logf("%s: %d of %d A/A series of 40 points with a change point at significance %g", m, falsePositives, series, d.Alpha)
		// The permutation test's level is Alpha per test; a series with no change is tested once.
		if limit := int(3*d.Alpha*series) + 1; falsePositives > limit {
			t.Errorf("%s: %d false change points in %d A/A series; at most %d expected", m, falsePositives, series, limit)
		}
	}
}

// TestLongAASeries: long series of real noise (500 points, searched in overlapping windows,
// every split tested again between its neighbours) stay nearly free of change points.
func TestLongAASeries(t *testing.T) {
	noise := realNoise(t)
	rng := rand.New(rand.NewPCG(3, 4))
	const series = 100
	falsePositives := 0
	for i := range series {
		falsePositives += len(DefaultDetection.Detect(resample(rng, noise["p50"], 20, 500), uint64(i)))
	}
	t.Logf("p50: %d change points in %d A/A series of 500 points", falsePositives, series)
	if falsePositives > 10 {
		t.Errorf("%d false change points in %d long A/A series; at most 10 expected", falsePositives, series)
	}
}

// TestStepAtKnownCommit: a level stepping from 20 to 24 ms at commit c30 of 60 yields one change
// point at that commit in p50 and in p99, and none in throughput, which did not move.
func TestStepAtKnownCommit(t *testing.T) {
	rows := stepRows(t, 60, 30, 20, 24)
	var s Series
	s.Key = KeyOf(rows[0])
	for _, r := range rows {
		s.Points = append(s.Points, pointOf(r, "", "", ""))
	}
	trends := Trends([]Series{s}, nil, DefaultDetection)
	got := map[string][]string{}
	for _, tr := range trends {
		for _, c := range tr.Changes {
			got[tr.Metric.Name] = append(got[tr.Metric.Name], fmt.Sprintf("%s..%s %+.0f%% regression=%v", c.Since, c.Commit, c.Percent, c.Regression))
		}
	}
	for _, m := range []string{"p50", "p99"} {
		if len(got[m]) != 1 || !slices.Contains([]string{"c29..c30 +20% regression=true"}, got[m][0]) {
			t.Errorf("%s: change points %q, want one at c29..c30, +20%%, a regression", m, got[m])
		}
	}
	if len(got["throughput"]) != 0 {
		t.Errorf("throughput: change points %q, want none", got["throughput"])
	}
}

// TestSmallestStepAtTenPoints finds, for real p50 noise, the smallest step that is found at its
// commit in 9 of 10 series of 10 points each side (reported in docs/history.md), and checks the
// 20% step of the acceptance (20 → 24 ms) is at most about that.
func TestSmallestStepAtTenPoints(t *testing.T) {
	noise := realNoise(t)
	for _, m := range []string{"p50", "p99", "throughput"} {
		smallest := 0
		for pct := 1; pct <= 50; pct++ {
			rng := rand.New(rand.NewPCG(uint64(pct), 3))
			hits := 0
			for i := range 10 {
				xs := append(resample(rng, noise[m], 20, 10), resample(rng, noise[m], 20*(1+float64(pct)/100), 10)...)
				splits := DefaultDetection.Detect(xs, uint64(i))
				if len(splits) == 1 && splits[0].Index == 10 {
					hits++
				}
			}
			if hits >= 9 {
				smallest = pct
				break
			}
		}
		t.Logf("%s: smallest step found at its commit in 9 of 10 series of 10+10 points: %d%%", m, smallest)
		if m != "throughput" && (smallest == 0 || smallest > 30) {
			t.Errorf("%s: smallest step detected %d%%, want 1 to 30%%", m, smallest)
		}
	}
}

func TestRanksShareTies(t *testing.T) {
	got := ranks([]float64{3, 1, 3, 2})
	if want := []float64{3.5, 1, 3.5, 2}; !slices.Equal(got, want) {
		t.Errorf("ranks = %v, want %v", got, want)
	}
}

// TestWindowsMergeOneShift: a step seen from two overlapping windows is one change point, and
// a second step later in a long series is found too.
func TestWindowsMergeOneShift(t *testing.T) {
	var xs []float64
	for i := range 200 {
		x := 10.0
		if i >= 60 {
			x = 20
		}
		if i >= 150 {
			x = 30
		}
		xs = append(xs, x+float64(i%3)*0.1)
	}
	got := DefaultDetection.Detect(xs, 1)
	var at []int
	for _, s := range got {
		at = append(at, s.Index)
	}
	if !slices.Equal(at, []int{60, 150}) {
		t.Errorf("change points at %v, want [60 150]", at)
	}
}
