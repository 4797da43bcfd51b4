package cli

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/hdrlog"
	"github.com/iotbench/iotbench/internal/overview"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/run"
	"github.com/iotbench/iotbench/internal/timeline"
)

// TestRunLeavesTimelineHistogramsAndReport: a short run against an in-process service leaves,
// beside its CSV, the timeline (its measured seconds adding up to the row's successes), the
// cell's .hlog and .hgrm (whose 99th percentile is the CSV's latency_p99_ms), the HTML report
// whose path it prints, and prints JSON as --format asks.
func TestRunLeavesTimelineHistogramsAndReport(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
		_, _ = io.WriteString(w, `{"id":1}`)
	}))
	defer srv.Close()
	out := t.TempDir()
	s, stdout, errOut := streams()
	args := []string{"run", "--url", srv.URL + "/x", "--connections", "2", "--duration", "2s", "--warmup", "1s",
		"--contains", `"id"`, "--out", out, "--html", "--format", "json"}
	if code := Main(context.Background(), args, s); code != ExitOK && code != ExitInvalid {
		t.Fatalf("exit %d; stderr:\n%s", code, errOut)
	}
	files, _ := filepath.Glob(filepath.Join(out, "*.csv"))
	if len(files) != 1 {
		t.Fatalf("%d results files: %v", len(files), files)
	}
	csvPath := files[0]
	p99, successes, key := rowOf(t, csvPath)
	// Calibration is on by default: the row carries the reference server's figures.
	if rows, _, err := results.ReadFile(csvPath); err != nil || !rows[0].Calibrated || rows[0].CalibrationRateRatio <= 0 {
		t.Errorf("the row carries no calibration (%v)", err)
	}
	// Within its limits or not (this machine's load decides), it is in the log.
	if !strings.Contains(strings.ToLower(errOut.String()), "calibration before the first cell") {
		t.Errorf("stderr does not show the calibration:\n%s", errOut)
	}

	cells, err := timeline.ReadFile(timeline.Path(csvPath))
	if err != nil || len(cells) != 1 {
		t.Fatalf("timeline: %v, %d cells", err, len(cells))
	}
	var sum int64
	for _, sec := range cells[0].Measure {
		sum += sec.Successes
	}
	if strconv.FormatInt(sum, 10) != successes || len(cells[0].Warmup) == 0 {
		t.Errorf("timeline: %d successes over the measured seconds, %d warm-up seconds; the row has %s", sum, len(cells[0].Warmup), successes)
	}

	f, err := os.Open(timeline.HistogramBase(csvPath, key) + ".hgrm")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := hdrlog.ReadPercentiles(f)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(rows, func(r hdrlog.Row) bool { return r.Percentile == 0.99 })
	if i < 0 || strconv.FormatFloat(rows[i].Value, 'f', 3, 64) != p99 {
		t.Errorf(".hgrm 99th percentile row %d, CSV latency_p99_ms %s", i, p99)
	}
	if _, err := timeline.ReadHistogram(timeline.HistogramBase(csvPath, key)); err != nil {
		t.Error(err)
	}

	html := strings.TrimSuffix(csvPath, ".csv") + ".html"
	if st, err := os.Stat(html); err != nil || st.Size() == 0 {
		t.Errorf("no report at %s: %v", html, err)
	}
	if !regexp.MustCompile(`report: ` + regexp.QuoteMeta(html) + ` \(\d+ KiB\)`).MatchString(errOut.String()) {
		t.Errorf("stderr does not name the report:\n%s", errOut)
	}
	var doc struct {
		SchemaVersion int `json:"schema_version"`
	}
	if err := json.Unmarshal([]byte(stdout.String()), &doc); err != nil || doc.SchemaVersion != overview.SchemaVersion {
		t.Errorf("stdout is not the JSON document (%v):\n%s", err, stdout)
	}
}

// rowOf reads the one row of a results file: its latency_p99_ms and successes as written, and its key.
func rowOf(t *testing.T, path string) (p99, successes string, k timeline.Key) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil || len(recs) != 2 {
		t.Fatalf("%s: %v, %d lines", path, err, len(recs))
	}
	col := func(name string) string { return recs[1][slices.Index(recs[0], name)] }
	trial, _ := strconv.Atoi(col("trial"))
	rps, _ := strconv.Atoi(col("requested_rps"))
	return col("latency_p99_ms"), col("successes"), timeline.Key{Scenario: col("scenario"), Target: col("target"), Trial: trial, RequestedRPS: rps}
}

// TestFindMaxWritesReport: --html on a --find-max run writes the report of its steps, as on any
// run (the search's first step fails the SLO here, which keeps the test to one short step).
func TestFindMaxWritesReport(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(150 * time.Millisecond)
		_, _ = io.WriteString(w, `{"id":1}`)
	}))
	defer srv.Close()
	out := t.TempDir()
	s, stdout, errOut := streams()
	args := []string{"run", "--url", srv.URL + "/x", "--rate", "10", "--find-max", "--step", "1s", "--warmup", "0s", "--calibration=false",
		"--slo", "p99<100ms", "--resolution", "20", "--trials", "1", "--out", out, "--html"}
	if code := Main(context.Background(), args, s); code != ExitInvalid {
		t.Fatalf("exit %d, want %d (no rate meets the SLO); stderr:\n%s", code, ExitInvalid, errOut)
	}
	files, _ := filepath.Glob(filepath.Join(out, "*.csv"))
	if len(files) != 1 {
		t.Fatalf("%d results files: %v", len(files), files)
	}
	html := strings.TrimSuffix(files[0], ".csv") + ".html"
	b, err := os.ReadFile(html)
	if err != nil || !strings.Contains(string(b), ".find-max") {
		t.Errorf("report %s: %v; find-max scenario in it: %v\nstdout:\n%s\nstderr:\n%s", html, err, strings.Contains(string(b), ".find-max"), stdout, errOut)
	}
	if !strings.Contains(errOut.String(), "report: "+html) {
		t.Errorf("stderr does not name the report %s:\n%s", html, errOut)
	}
}

// TestARunEndsWithItsLastCalibrationMissed: the run's output ends saying the calibration after the
// last cell missed, or decided nothing, after the answer, where no table of many rows hides it.
func TestARunEndsWithItsLastCalibrationMissed(t *testing.T) {
	rows := []results.Row{{Scenario: "s", Target: "t", Trial: 1, Mode: "open", RequestedRPS: 100, Valid: true, SuccessRatio: 1}}
	const steal = "every attempt missed its limits while disturbed: the hypervisor took 0.83 cores of CPUs 0-1 (steal)"
	for _, c := range []struct{ missed, undecided, want string }{
		{"", "", ""},
		{"p50 +1.239 ms, p99 +5.163 ms off the truth: MISSED", "", "CALIBRATION AFTER THE LAST CELL MISSED ITS LIMITS: p50 +1.239 ms, p99 +5.163 ms off the truth: MISSED: the figures measured since the calibration before it are suspect"},
		{"", steal, "the calibration after the last cell decided nothing: " + steal + ": the rows keep the calibration before it"},
	} {
		s, stdout, errOut := streams()
		o := &RunOptions{Streams: s, Format: "table"}
		if err := o.writeOutcome(&run.Outcome{Rows: rows, Path: "r.csv", LastCalibrationMissed: c.missed, LastCalibrationUndecided: c.undecided}); err != nil {
			t.Fatal(err)
		}
		said := strings.Contains(strings.ToLower(errOut.String()), "calibration after the last cell")
		if c.want == "" && said || c.want != "" && !strings.Contains(errOut.String(), c.want) || !strings.Contains(stdout.String(), "│ t ") {
			t.Errorf("last calibration missed %q, undecided %q: stdout:\n%s\nstderr:\n%s", c.missed, c.undecided, stdout, errOut)
		}
	}
}
