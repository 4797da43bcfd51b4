package history

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/results"
)

// BenchmarkIngest adds 10,000 results rows (100 series of 100 points) to a new SQLite store:
// the figure of docs/history.md.
func BenchmarkIngest(b *testing.B) {
	base := stepRows(b, 7, 100, 50, 20, 24)
	var rows []results.Row
	for s := range 100 {
		for _, r := range base {
			r.Target = fmt.Sprintf("target-%d", s)
			rows = append(rows, r)
		}
	}
	for b.Loop() {
		s, err := Open(context.Background(), filepath.Join(b.TempDir(), "history.db"))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Add(context.Background(), rows, "", "", ""); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
	b.ReportMetric(float64(len(rows)), "rows/op")
}

// BenchmarkDetect searches 1,000 series of 500 points each (real noise, a 20% step in half of
// them) for change points: the figure of docs/history.md.
func BenchmarkDetect(b *testing.B) {
	noise := realNoise(b)
	rng := rand.New(rand.NewPCG(5, 5))
	var series [][]float64
	for i := range 1000 {
		after := 20.0
		if i%2 == 0 {
			after = 24
		}
		series = append(series, append(resample(rng, noise["p50"], 20, 250), resample(rng, noise["p50"], after, 250)...))
	}
	found := 0
	start := time.Now()
	for b.Loop() {
		found = 0
		for i, xs := range series {
			found += len(DefaultDetection.Detect(xs, uint64(i)))
		}
	}
	b.ReportMetric(float64(found), "changes/op")
	b.Logf("1,000 series of 500 points: %d change points; %v for all loops", found, time.Since(start))
}
