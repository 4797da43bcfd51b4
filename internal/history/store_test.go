package history

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/container"
	"github.com/iotbench/iotbench/internal/fault"
	"github.com/iotbench/iotbench/internal/results"
)

// storeTests are what every store must do; each runs on a new, empty store.
var storeTests = []struct {
	name string
	test func(t *testing.T, s *Store)
}{
	{"AddIsIdempotentAndMarksUnusable", testAddIsIdempotent},
	{"SeriesRunAcrossCommitsAndSplitBySettings", testSeriesKeys},
	{"BranchesKeptApart", testBranches},
	{"StepFoundThroughTheStore", testStepThroughStore},
}

func TestSQLiteStore(t *testing.T) {
	for _, tt := range storeTests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(context.Background(), filepath.Join(t.TempDir(), "history.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			tt.test(t, s)
		})
	}
}

// TestPostgresStore runs the same tests on the PostgreSQL server a `--db postgres` run starts
// (db/postgres), in Docker: skipped when no engine answers, unless IOTBENCH_REQUIRE_DOCKER is set.
func TestPostgresStore(t *testing.T) {
	ctx := context.Background()
	d, err := container.Connect(ctx)
	if err != nil {
		if os.Getenv("IOTBENCH_REQUIRE_DOCKER") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	defer d.Close()
	img, err := d.Build(ctx, container.BuildSpec{Context: "../../db/postgres"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range storeTests {
		t.Run(tt.name, func(t *testing.T) {
			db, err := d.StartDatabase(ctx, container.DBSpec{Target: "historytest", Image: img, Port: freePort(t), Memory: 512 << 20, StartupTimeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Remove(ctx)
			s, err := Open(ctx, db.URL())
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			tt.test(t, s)
		})
	}
}

func testAddIsIdempotent(t *testing.T, s *Store) {
	ctx := context.Background()
	rows := stepRows(t, 7, 12, 6, 20, 24)
	rows[3].SetFault(fault.Errors, "success ratio 0.9 below 0.99")
	rows[4].Disturbed, rows[4].Warnings = true, "disturbed: other work took 30% of a core"
	rows[5].SetFault(fault.VerifyFailed, string(fault.VerifyFailed)+": wrong answer")
	a, err := s.Add(ctx, rows, "", "", "a.csv")
	if err != nil {
		t.Fatal(err)
	}
	if a != (Added{New: 12, Unusable: 3}) {
		t.Errorf("first add: %+v, want 12 new, 3 unusable", a)
	}
	a, err = s.Add(ctx, rows, "", "", "a.csv")
	if err != nil {
		t.Fatal(err)
	}
	if a != (Added{Known: 12}) {
		t.Errorf("second add: %+v, want 12 known", a)
	}
	series, err := s.Load(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(series) != 1 || len(series[0].Points) != 12 {
		t.Fatalf("loaded %d series, want 1 of 12 points", len(series))
	}
	var verdicts []string
	for _, p := range series[0].Points {
		verdicts = append(verdicts, p.Verdict)
	}
	want := []string{"valid", "valid", "valid", "invalid", "disturbed", "verify-failed", "valid", "valid", "valid", "valid", "valid", "valid"}
	if !slices.Equal(verdicts, want) {
		t.Errorf("verdicts %v, want %v", verdicts, want)
	}
	p := series[0].Points[7]
	if p.Commit != "c7" || p.Version != "v0.7" || p.ImageID != "sha256:7" || p.Source != "a.csv" || !p.StartedAt.Equal(rows[7].StartedAt) {
		t.Errorf("point 7 = %+v", p)
	}
	if got, want := p.Values["p50"], float64(rows[7].LatencyP50)/1e6; got != want {
		t.Errorf("point 7 p50 = %v, want %v", got, want)
	}
	if _, ok := series[0].Points[5].Values["p50"]; ok {
		t.Error("a row never loaded has a p50")
	}
}

func testSeriesKeys(t *testing.T, s *Store) {
	ctx := context.Background()
	rows := stepRows(t, 7, 4, 2, 20, 20)
	other := rows[3]
	other.RequestedRPS = 2000 // another load: another series
	other.StartedAt = other.StartedAt.Add(time.Hour)
	if _, err := s.Add(ctx, append(rows, other), "", "", ""); err != nil {
		t.Fatal(err)
	}
	series, err := s.Load(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int
	for _, se := range series {
		sizes = append(sizes, len(se.Points))
	}
	slices.Sort(sizes)
	if !slices.Equal(sizes, []int{1, 4}) {
		t.Errorf("series of %v points, want one of 4 (image and version change with each commit) and one of 1", sizes)
	}
}

func testBranches(t *testing.T, s *Store) {
	ctx := context.Background()
	rows := stepRows(t, 7, 6, 3, 20, 20)
	if _, err := s.Add(ctx, rows[:4], "", "", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(ctx, rows[4:], "pr-7", "abc", ""); err != nil {
		t.Fatal(err)
	}
	main, _ := s.Load(ctx, DefaultBranch)
	pr, err := s.Load(ctx, "pr-7")
	if err != nil {
		t.Fatal(err)
	}
	if len(main) != 1 || len(main[0].Points) != 4 || len(pr) != 1 || len(pr[0].Points) != 2 || pr[0].Points[0].Commit != "abc" {
		t.Errorf("main %+v\npr-7 %+v", main, pr)
	}
}

// testStepThroughStore: a series put in the store comes back out with the change points it has
// when searched directly, and the step among them fails a 10% limit, not a 30% one.
func testStepThroughStore(t *testing.T, s *Store) {
	ctx := context.Background()
	// The store is under test, not the detector (TestStepAtKnownCommit): a series whose direct
	// search finds the step alone.
	rows := stepRows(t, 7, 60, 30, 20, 24)
	for seed := uint64(8); len(changesOf(rows)["p50"]) != 1; seed++ {
		rows = stepRows(t, seed, 60, 30, 20, 24)
	}
	if _, err := s.Add(ctx, rows, "", "", ""); err != nil {
		t.Fatal(err)
	}
	series, err := s.Load(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	p50, _ := results.MetricNamed("p50")
	trends := Trends(series, []results.Metric{p50}, DefaultDetection)
	if len(trends) != 1 {
		t.Fatalf("%d trends, want 1", len(trends))
	}
	got := changeTexts(trends[0].Changes)
	if want := changeTexts(changesOf(rows)["p50"]); len(want) == 0 || !slices.Equal(got, want) {
		t.Fatalf("through the store: changes %q; searched directly: %q (want the same, and the step)", got, want)
	}
	if f := Failing(trends, 10); len(f) != 1 {
		t.Errorf("failing at 10%%: %d, want 1", len(f))
	}
	if f := Failing(trends, 30); len(f) != 0 {
		t.Errorf("failing at 30%%: %d, want 0", len(f))
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(`UPDATE schema_version SET version = 99`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Open(context.Background(), path); err == nil {
		t.Fatal("a store of schema 99 opened")
	}
}

func TestRedact(t *testing.T) {
	if got := redact("postgresql://iot:secret@127.0.0.1:5432/iot"); got != "postgresql://iot:xxx@127.0.0.1:5432/iot" {
		t.Errorf("redact = %q", got)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestCraftedTextIsShownNotObeyed: names and commits come from results files; what they hold is
// escaped where it is printed (safetext): control codes shown, markdown shown literally.
func TestCraftedTextIsShownNotObeyed(t *testing.T) {
	k := Key{Scenario: "s", Target: "x\x1b[31m|<b>*y*"}
	c := Change{Series: k, Metric: "p50", Unit: "ms", Commit: "c`2|\n", Since: "c1", Before: Level{N: 5, Median: 20}, After: Level{N: 5, Median: 24}, Regression: true, Percent: 20}
	trends := []Trend{{Series: k, Metric: results.MustMetric("p50"), Changes: []Change{c}}}
	cases := []struct {
		format string
		want   []string
	}{
		{"text", []string{`s / x\x1b[31m|<b>*y*, p50: regressed +20.0% from c` + "`" + `2|\n`, `UNDECIDED a\x1b[2Jb`}},
		{"markdown", []string{`| s / x\\x1b\[31m\|\<b\>\*y\* | p50 | ` + "``c1..c`2\\|\\n``", `- a\\x1b\[2Jb`}},
	}
	for _, tc := range cases {
		var b strings.Builder
		if err := WriteChanges(&b, trends, []string{"a\x1b[2Jb"}, tc.format, DefaultDetection); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if strings.Contains(out, "\x1b") || tc.format == "text" && strings.Count(out, "\n") != 2 {
			t.Errorf("%s: a control code got through:\n%q", tc.format, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q:\n%s", tc.format, w, out)
			}
		}
	}
}
