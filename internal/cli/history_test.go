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
