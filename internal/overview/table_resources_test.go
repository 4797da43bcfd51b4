package overview

import (
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/fault"
	"github.com/iotbench/iotbench/internal/results"
)

func TestResourcesVerificationAndWarningsAreShown(t *testing.T) {
	measuredRow := results.Row{Scenario: "s", Target: "spring", Trial: 1, Mode: "open", Valid: true, ThroughputRPS: 500,
		CPUCores: 0.5, CPUPercent: 50, MemoryPeak: 300 << 20, MemoryMean: 250 << 20, RPSPerCore: 1000, RPSPerGiB: 1706.7,
		Startup: 2500 * time.Millisecond, ImageSize: 400 << 20, GeneratorCPUPercent: 95,
		Warnings: "disturbed: other processes used 0.20 cores of CPUs 0-1"}
	onPostgres := measuredRow
	onPostgres.CPUSet, onPostgres.DB, onPostgres.DBPoolSize, onPostgres.DBCPUSet = "1", results.DBPostgres, 20, "1"
	onPostgres.DBCPUCores, onPostgres.DBMemoryPeak = 0.31, 180<<20
	broken := results.Row{Scenario: "s", Target: "broken", Trial: 1, Mode: "open", Fault: fault.VerifyFailed,
		InvalidReason: string(fault.VerifyFailed) + ": POST http://127.0.0.1:1/ingest: answer is not a JSON object"}
	// Three trials, the second without the warning the others share.
	second, third := measuredRow, measuredRow
	second.Trial, second.Warnings, third.Trial = 2, "", 3
	cases := []struct {
		name    string
		rows    []results.Row
		want    []string
		notWant []string
	}{
		{"measured", []results.Row{measuredRow},
			[]string{"cpu cores", "0.50", "50%", "300 MiB", "250 MiB", "1000", "1707", "2500 ms", "400 MiB", "95%",
				"spring trial 1: disturbed: other processes used 0.20 cores of CPUs 0-1"}, nil},
		{"one warning of three trials, read once", []results.Row{measuredRow, second, third},
			[]string{"spring trials 1, 3: disturbed: other processes used 0.20 cores of CPUs 0-1\n"},
			[]string{"spring trial 1: disturbed", "trials 1, 2"}},
		{"on postgres", []results.Row{onPostgres},
			[]string{"PostgreSQL server on cpuset 1, pool 20", "database cpu", "database peak mem", "0.31", "180 MiB"}, nil},
		{"embedded", []results.Row{measuredRow}, nil, []string{"database", "PostgreSQL"}},
		{"verification failed", []results.Row{broken},
			[]string{"verify-failed │", "broken trial 1 is invalid: verify-failed: POST"}, []string{"cpu cores", "   NO │"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b strings.Builder
			if err := Write(&b, c.rows); err != nil {
				t.Fatal(err)
			}
			for _, want := range c.want {
				if !strings.Contains(b.String(), want) {
					t.Errorf("report lacks %q:\n%s", want, b.String())
				}
			}
			for _, not := range c.notWant {
				if strings.Contains(b.String(), not) {
					t.Errorf("report has %q:\n%s", not, b.String())
				}
			}
		})
	}
}
