package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReportGolden runs `iotbench report` on a fixture run (testdata/report/run: two in-process
// targets, three trials each, with its timeline and histograms) and checks its whole behaviour
// against a golden file per case.
func TestReportGolden(t *testing.T) {
	cases := []struct{ name, args string }{
		{"table", "run/20260102T030405Z.csv"},
		{"markdown", "--format markdown run/20260102T030405Z.csv"},
		{"json", "--format json run/20260102T030405Z.csv"},
		{"bad-format", "--format xml run/20260102T030405Z.csv"},
		{"no-file", ""},
		{"missing-file", "run/none.csv"},
		{"not-results", "../../../results/testdata/read/not-ours.csv"},
	}
	wd, _ := os.Getwd()
	dir := filepath.Join(wd, "testdata", "report")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Chdir(dir)
			s, out, errOut := streams()
			code := Main(context.Background(), append([]string{"report"}, strings.Fields(c.args)...), s)
			got := fmt.Sprintf("$ iotbench report %s\n%s--- stderr\n%s--- exit %d\n", c.args, out, errOut, code)
			golden := c.name + ".golden"
			checkGolden(t, golden, got)
		})
	}
}

func TestReportWritesHTML(t *testing.T) {
	s, _, errOut := streams()
	o := &ReportOptions{Streams: s, Files: []string{filepath.Join("testdata", "report", "run", "20260102T030405Z.csv")},
		HTML: filepath.Join(t.TempDir(), "report.html"), Format: "table", Now: func() time.Time { return time.Unix(0, 0) }}
	if err := runReport(o); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(o.HTML)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "<svg") || !strings.Contains(errOut.String(), "report: "+o.HTML+" (") {
		t.Errorf("no chart in the page, or its path not printed: %s", errOut)
	}
}

// --html takes a value: `report --html a.csv b.csv` would write the page over a.csv. A path that
// is no HTML file is refused, and the file left as it was.
func TestReportRefusesToWriteHTMLOverAResultsFile(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "report", "run", "20260102T030405Z.csv"))
	if err != nil {
		t.Fatal(err)
	}
	csv := filepath.Join(t.TempDir(), "a.csv")
	if err := os.WriteFile(csv, src, 0o644); err != nil {
		t.Fatal(err)
	}
	s, _, _ := streams()
	cmd := NewCmdReport(s, nil)
	cmd.SetArgs([]string{"--html", csv, filepath.Join("testdata", "report", "run", "20260102T030405Z.csv")})
	err = cmd.Execute()
	if err == nil || !strings.Contains(err.Error(), "ending in .html") {
		t.Errorf("error %v; want --html refused", err)
	}
	if b, _ := os.ReadFile(csv); string(b) != string(src) {
		t.Error("the results file was overwritten")
	}
}

func TestReportFlagsFillOptions(t *testing.T) {
	s, _, _ := streams()
	var got *ReportOptions
	cmd := NewCmdReport(s, func(o *ReportOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--format", "markdown", "--html", "r.html", "a.csv", "b.csv"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Format != "markdown" || got.HTML != "r.html" || strings.Join(got.Files, ",") != "a.csv,b.csv" {
		t.Errorf("options %+v", got)
	}
}
