package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/results"
)

// writeSeries writes files runs/c0.csv … of one cell measured once a commit: p50 and p99 step
// up by 20% from commit c15 (of 30), throughput steady; the row of c7 is invalid.
func writeSeries(t *testing.T, dir string) []string {
	t.Helper()
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var files []string
	for i := range 30 {
		level := 20.0
		if i >= 15 {
			level = 24
		}
		jitter := 0.2 * float64((i*7)%5)
		r := results.Row{Scenario: "ingest", Target: "express", Trial: 1, Mode: "open", RequestedRPS: 1000, Duration: 10 * time.Second,
			Valid: true, StartedAt: start.Add(time.Duration(i) * time.Hour), CPUSet: "1", Memory: "1g", Version: "v1", GitCommit: fmt.Sprintf("c%d", i),
			HostCPU: "test cpu", Kernel: "6.1", ThroughputRPS: 1000 + 3*jitter, SuccessRatio: 1, Requests: 10000, Successes: 10000,
			LatencyP50: time.Duration((level + jitter) * 1e6), LatencyP99: time.Duration(3 * (level + jitter) * 1e6)}
		if i == 7 {
			r.Valid, r.InvalidReason = false, "success ratio 0.9 below 0.99"
		}
		path := filepath.Join(dir, fmt.Sprintf("c%d.csv", i))
		w, err := results.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
		w.Close()
		files = append(files, fmt.Sprintf("c%d.csv", i))
	}
	return files
}

// TestHistoryGolden adds a generated series to a history and checks what history changes
// prints and its exit status, against golden files (-update rewrites them).
func TestHistoryGolden(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	goldens := filepath.Join(wd, "testdata", "history")
	dir := t.TempDir()
	t.Chdir(dir)
	files := writeSeries(t, dir)
	run := func(args string) (string, int) {
		s, out, errOut := streams()
		code := Main(context.Background(), append([]string{"history"}, strings.Fields(args)...), s)
		return out.String() + errOut.String(), code
	}
	got, code := run("add --store h.db " + strings.Join(files[:3], " "))
	got2, code2 := run("add --store h.db " + strings.Join(files, " "))
	checkGolden(t, filepath.Join(goldens, "add.golden"), fmt.Sprintf("%s[exit %d]\n%s[exit %d]\n", got, code, got2, code2))
	cases := []struct{ name, args string }{
		{"changes", "changes --store h.db --metric p50,p99,throughput"},
		{"changes-under-limit", "changes --store h.db --metric p50 --limit 25"},
		{"changes-markdown", "changes --store h.db --metric p50 --format markdown"},
		{"changes-json", "changes --store h.db --metric p99 --format json"},
		{"other-branch", "changes --store h.db --branch pr-1"},
		{"unknown-metric", "changes --store h.db --metric latency"},
		{"report-without-html", "report --store h.db"},
		{"report-html-over-the-store", "report --store h.db --html h.db"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, code := run(c.args)
			checkGolden(t, filepath.Join(goldens, c.name+".golden"), fmt.Sprintf("$ iotbench history %s\n%s[exit %d]\n", c.args, got, code))
		})
	}
	if got, code := run("report --store h.db --metric p50 --html h.html"); code != 0 {
		t.Fatalf("report: exit %d: %s", code, got)
	}
	page, err := os.ReadFile("h.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<svg", "ingest / express: p50", "<code>c14..c15</code>", "19.6%"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the report lacks %q", want)
		}
	}

	// run --history --html: the run's report links to the history of its series, drawn beside it.
	rows, _, err := results.ReadFile("c29.csv")
	if err != nil {
		t.Fatal(err)
	}
	name, err := writeRunHistoryPage("h.db", filepath.Join(dir, "run.html"), rows)
	if err != nil || name != "run.history.html" {
		t.Fatalf("history page %q: %v", name, err)
	}
	if page, err := os.ReadFile(name); err != nil || !strings.Contains(string(page), "<code>c14..c15</code>") {
		t.Errorf("the run's history page lacks the change point (%v)", err)
	}
}

// writeCommits writes one file a commit, c0.csv …, of one row each, into a new directory dir/name:
// row(i) is the row of commit i (nil: none).
func writeCommits(t *testing.T, dir, name string, n int, row func(i int, r *results.Row)) []string {
	t.Helper()
	if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var files []string
	for i := range n {
		jitter := 0.2 * float64((i*7)%5)
		r := results.Row{Scenario: "ingest", Target: name, Trial: 1, Mode: "open", RequestedRPS: 1000, Duration: 10 * time.Second,
			Valid: true, StartedAt: start.Add(time.Duration(i) * time.Hour), CPUSet: "1", Memory: "1g", Version: "v1", GitCommit: fmt.Sprintf("c%d", i),
			HostCPU: "test cpu", Kernel: "6.1", ThroughputRPS: 1000 + 3*jitter, SuccessRatio: 1, Requests: 10000, Successes: 10000,
			LatencyP50: time.Duration((20 + jitter) * 1e6), LatencyP99: time.Duration(3 * (20 + jitter) * 1e6)}
		row(i, &r)
		path := filepath.Join(dir, name, fmt.Sprintf("c%d.csv", i))
		w, err := results.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
		w.Close()
		files = append(files, path)
	}
	return files
}

// TestHistoryGateCannotDecide: history changes leaves out the rows whose run's calibration missed
// its limits, as compare does, and a series with too few usable points for a change point is
// undecided (exit 4), never passed. The series "stepped" is 8 commits at 20 ms then 8 at 24 ms,
// its c7 measured at 24 ms on a calibration that missed: used, it would place the change at c7, a
// commit before the step. "short" has 7 commits, one invalid and one on a missed calibration.
func TestHistoryGateCannotDecide(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	goldens := filepath.Join(wd, "testdata", "history")
	dir := t.TempDir()
	t.Chdir(dir)
	stepped := writeCommits(t, dir, "stepped", 16, func(i int, r *results.Row) {
		if i >= 7 {
			r.LatencyP50 = r.LatencyP50 * 6 / 5
			r.LatencyP99 = r.LatencyP99 * 6 / 5
		}
		if i == 7 {
			r.Calibrated, r.CalibrationWithin = true, false
		}
	})
	short := writeCommits(t, dir, "short", 7, func(i int, r *results.Row) {
		switch i {
		case 2:
			r.Valid, r.InvalidReason = false, "success ratio 0.9 below 0.99"
		case 4:
			r.Calibrated, r.CalibrationWithin = true, false
		}
	})
	run := func(args string) (string, int) {
		s, out, errOut := streams()
		code := Main(context.Background(), append([]string{"history"}, strings.Fields(args)...), s)
		return out.String() + errOut.String(), code
	}
	for store, files := range map[string][]string{"stepped.db": stepped, "short.db": short} {
		if got, code := run("add --store " + store + " " + strings.Join(files, " ")); code != 0 {
			t.Fatalf("add: exit %d: %s", code, got)
		}
	}
	cases := []struct{ name, args string }{
		{"calibration-missed-left-out", "changes --store stepped.db --metric p50"},
		{"too-few-points", "changes --store short.db"},
		{"too-few-points-markdown", "changes --store short.db --metric p50 --format markdown"},
		{"too-few-points-json", "changes --store short.db --metric p99 --format json"},
		{"alpha-under-permutations", "changes --store stepped.db --alpha 0.001"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, code := run(c.args)
			checkGolden(t, filepath.Join(goldens, c.name+".golden"), fmt.Sprintf("$ iotbench history %s\n%s[exit %d]\n", c.args, got, code))
		})
	}
}
