package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iotbench/iotbench/internal/golden"
)

func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	golden.Check(t, path, []byte(got))
}

// TestCompareGolden runs `iotbench compare` on the files of testdata/compare and checks its whole
// behaviour, output, messages and exit status, against a golden file per case (-update rewrites
// them). The files are a stub server loaded closed-loop: base-20ms and again-20ms the same server
// measured twice, slower-30ms the same with a 30 ms service time; drift-a-20ms and drift-b-20ms
// another same-server pair whose p99 drifted by 1.75% with p = 0.008; find-max-steps the first steps of
// a --find-max search; again-20ms-cut again-20ms with its last row cut mid-way (a run killed
// during a write); two-cells-base base-20ms twice, as two targets, and two-cells-stopped a
// candidate stopped after the first; other-port-30ms single-30ms measured at another port. The
// paired-*.csv files are paired runs of the stub server (run --url --baseline-url, open loop at
// 300 rps, 2 s a cell, on a busy shared machine: several trials invalid): paired-22ms 20 ms
// against 22 ms over 8 rounds, paired-same-aa one server against itself with 2 A/A rounds,
// paired-20.3ms 20 ms against 20.3 ms over 4 rounds. io-embedded and io-postgres base-20ms as one target on its
// embedded store and on PostgreSQL (p50 10% slower there), which compare refuses unless allowed.
// paired-find-max is a paired --find-max run written by hand (8 rounds, the candidate's maxima
// 30% lower, its round-5 search on a calibration that missed its limits). invalid-20ms is
// base-20ms with every trial invalid (the generator delayed); three-20ms and three-30ms the first
// three trials of base-20ms and slower-30ms (+50% p50, which 3 trials a side cannot show).
func TestCompareGolden(t *testing.T) {
	cases := []struct{ name, args string }{
		{"same-server", "base-20ms.csv again-20ms.csv"},
		{"same-server-gated", "--fail-on throughput:-5%,p50:+5% base-20ms.csv again-20ms.csv"},
		{"slower-gated", "--fail-on throughput:-5%,p50:+5% base-20ms.csv slower-30ms.csv"},
		{"slower-gate-not-reached", "--fail-on throughput:-40%,p99:+60% base-20ms.csv slower-30ms.csv"},
		{"slower-markdown", "--format markdown --fail-on throughput:-5% base-20ms.csv slower-30ms.csv"},
		{"slower-csv", "--format csv base-20ms.csv slower-30ms.csv"},
		{"slower-json", "--format json --fail-on p50:+5% base-20ms.csv slower-30ms.csv"},
		{"single-trials", "--fail-on throughput:-5% single-20ms.csv single-30ms.csv"},
		{"drift-within-noise", "drift-a-20ms.csv drift-b-20ms.csv"},
		{"drift-without-noise", "--noise 0 drift-a-20ms.csv drift-b-20ms.csv"},
		{"gate-under-noise", "--fail-on p99:-1% drift-a-20ms.csv drift-b-20ms.csv"},
		{"alpha-0.001", "--alpha 0.001 base-20ms.csv slower-30ms.csv"},
		{"memory-differs", "base-20ms.csv slower-2g.csv"},
		{"memory-allowed", "--allow-mismatch=memory base-20ms.csv slower-2g.csv"},
		{"any-allowed", "--allow-mismatch base-20ms.csv slower-2g.csv"},
		{"invalid-trial", "base-20ms.csv one-invalid.csv"},
		{"gate-without-sign", "--fail-on throughput:5% base-20ms.csv slower-30ms.csv"},
		{"gate-unknown-metric", "--fail-on latency:+5% base-20ms.csv slower-30ms.csv"},
		{"allow-unknown-field", "--allow-mismatch=colour base-20ms.csv slower-2g.csv"},
		{"cut-off-file", "--fail-on throughput:-5% base-20ms.csv again-20ms-cut.csv"},
		{"cell-missing", "two-cells-base.csv two-cells-stopped.csv"},
		{"cell-missing-gated", "--fail-on throughput:-5% two-cells-base.csv two-cells-stopped.csv"},
		{"cell-missing-json", "--format json --fail-on p99:+10% two-cells-base.csv two-cells-stopped.csv"},
		{"huge-cpuset", "base-20ms.csv ../../../results/testdata/read/huge-cpuset.csv"},
		{"newer-schema", "../../../results/testdata/read/newer-schema.csv base-20ms.csv"},
		{"not-results", "base-20ms.csv ../../../results/testdata/read/not-ours.csv"},
		{"one-argument", "base-20ms.csv"},
		{"bad-format", "--format xml base-20ms.csv again-20ms.csv"},
		{"find-max-steps", "find-max-steps.csv find-max-steps.csv"},
		{"paired-22ms", "--fail-on throughput:-5%,p50:+5%,p99:+5% paired-22ms.csv"},
		{"paired-22ms-markdown", "--format markdown --fail-on throughput:-5%,p50:+5%,p99:+5% paired-22ms.csv"},
		{"paired-22ms-csv", "--format csv --fail-on p50:+5% paired-22ms.csv"},
		{"paired-22ms-json", "--format json --fail-on p50:+5% paired-22ms.csv"},
		{"paired-same-aa", "--fail-on throughput:-5%,p50:+5%,p99:+5% paired-same-aa.csv"},
		{"paired-default-gates", "paired-20.3ms.csv"},
		{"paired-small-allowed", "--fail-on p50:+1% --allow-inconclusive paired-20.3ms.csv"},
		{"paired-with-noise", "--noise 1 paired-20.3ms.csv"},
		{"paired-beside-another", "base-20ms.csv paired-20.3ms.csv"},
		{"paired-find-max", "paired-find-max.csv"},
		{"paired-find-max-json", "--format json paired-find-max.csv"},
		{"paired-find-max-row-gate", "--fail-on p99:+10% paired-find-max.csv"},
		{"other-port", "single-20ms.csv other-port-30ms.csv"},
		{"allow-inconclusive-two-files", "--allow-inconclusive base-20ms.csv again-20ms.csv"},
		{"embedded-vs-postgres", "io-embedded.csv io-postgres.csv"},
		{"embedded-vs-postgres-allowed", "--allow-mismatch=db,db_cpus,db_image_id io-embedded.csv io-postgres.csv"},
		{"old-all-invalid-gated", "--fail-on p50:+5% invalid-20ms.csv slower-30ms.csv"},
		{"new-all-invalid-gated", "--fail-on p50:+5% base-20ms.csv invalid-20ms.csv"},
		{"three-a-side-gated", "--fail-on p50:+5% three-20ms.csv three-30ms.csv"},
		{"three-a-side-json", "--format json --fail-on p50:+5% three-20ms.csv three-30ms.csv"},
		{"gate-on-max-without-search", "--fail-on max:-10% base-20ms.csv again-20ms.csv"},
	}
	wd, _ := os.Getwd()
	dir := filepath.Join(wd, "testdata", "compare")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Chdir(dir)
			s, out, errOut := streams()
			code := Main(context.Background(), append([]string{"compare"}, strings.Fields(c.args)...), s)
			got := fmt.Sprintf("$ iotbench compare %s\n%s--- stderr\n%s--- exit %d\n", c.args, out, errOut, code)
			golden := c.name + ".golden"
			checkGolden(t, golden, got)
		})
	}
}

func TestCompareFlagsFillOptions(t *testing.T) {
	s, _, _ := streams()
	var got *CompareOptions
	cmd := NewCmdCompare(s, func(o *CompareOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--alpha", "0.01", "--format", "json", "--fail-on", "p99:+10%", "--allow-mismatch", "a.csv", "b.csv"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Old != "a.csv" || got.New != "b.csv" || got.Alpha != 0.01 || got.Format != "json" || got.FailOn != "p99:+10%" ||
		strings.Join(got.AllowMismatch, ",") != "*" {
		t.Errorf("options %+v", got)
	}
}
