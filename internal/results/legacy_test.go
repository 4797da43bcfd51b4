package results

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/fault"
)

// Every reason an older iotbench wrote reads back as its kind; a reason none describes is Other.
func TestLegacyReasonsGiveTheirKind(t *testing.T) {
	for _, c := range []struct {
		reason string
		want   fault.Kind
	}{
		{"verify-failed: POST /ingest: answered 500", fault.VerifyFailed},
		{"build-failed: building iotbench/x failed", fault.BuildFailed},
		{"start-failed: the container exited (code 1)", fault.StartFailed},
		{"skipped: needs 2 target CPUs; this host gives targets 1", fault.Skipped},
		{"slo not met: p99 300ms ≥ 100ms", fault.SLONotMet},
		{"generator-limited: its own p99 delay 5.6ms over 5ms", fault.GeneratorLimited},
		{"repeated: failed while disturbed (see warnings)", fault.Repeated},
		{"stored rows: 10 rows for 12 successes", fault.Unstored},
		{"success ratio 0.3855 below 0.99 (1339 errors, 1339 timeouts, codes 0:1339)", fault.Errors},
		{"no request completed", fault.NoRequests},
		{"target OOM-killed at its 1 GiB limit 4.2 s into the measured phase; success ratio 0.1 below 0.99", fault.TargetDied},
		{"generator sent 900 rps of 1000 requested (90.0%): the load generator could not keep up (give it more CPU or lower the rate)", fault.GeneratorBehind},
		{"generator delayed requests: its own p99 delay 7ms exceeds 6ms (send lag p99 2ms): the load generator was short of CPU; latencies would carry its delay", fault.GeneratorDelayed},
		{"generator sent 900 rps of 1000 requested (90.0%): all 300 in-flight slots were busy, the target answered far slower than the expected latency (lower the rate or raise expected_latency)", fault.InFlightFull},
		{"request probe: success ratio 0.5 below 0.99", fault.Errors},
		{"the cell: generator delayed requests: its own p99 delay 7ms exceeds 6ms: the load generator was short of CPU; latencies would carry its delay", fault.GeneratorDelayed},
		{"generator shard 2 of 2: generator delayed requests: x: the load generator was short of CPU; latencies would carry its delay", fault.GeneratorDelayed},
		{"the generator's own delay was not measured (the kernel gave no receive timestamps)", fault.OwnDelayUnmeasured},
		{"something no iotbench wrote", fault.Other},
	} {
		if got := legacyFault(c.reason); got != c.want {
			t.Errorf("%q: kind %q, want %q", c.reason, got, c.want)
		}
	}
}

// An older file's find-max steps get the search each belonged to, as the summary told them
// apart then: interleaved targets, a new container, a row never loaded, and the steps at 50/75/90%
// of a rate met that ended a search, even with a service iotbench did not start (one start-up).
func TestOlderFilesNumberTheirSearches(t *testing.T) {
	step := func(target string, rate int, startup time.Duration, reason string) Row {
		r := Row{Scenario: "io.find-max", Target: target, RequestedRPS: rate, Startup: startup, Valid: reason == "", InvalidReason: reason}
		return r
	}
	slo := "slo not met: p99"
	rows := []Row{
		step("a", 1000, 1, ""), step("a", 2000, 1, slo), // a's first search
		step("b", 500, 2, ""),                                            // b's first, between a's steps
		step("a", 1000, 3, ""),                                           // a new container: a's second
		step("b", 500, 4, "start-failed: exited"), step("b", 600, 4, ""), // never loaded, then a search
		// --url: one start-up throughout; the fractions of 1000 end the first search
		step("u", 1000, 0, ""), step("u", 1000, 0, ""), step("u", 2000, 0, slo), step("u", 500, 0, ""), step("u", 750, 0, ""), step("u", 900, 0, ""),
		step("u", 1000, 0, ""),
		{Scenario: "io", Target: "a", Valid: true}, // a fixed load's row: no search
	}
	Upgrade(rows)
	var got []string
	for _, r := range rows {
		got = append(got, fmt.Sprintf("%s%d", r.Target, r.Search))
	}
	want := "a1 a1 b1 a2 b2 b3 u1 u1 u1 u1 u1 u1 u2 a0"
	if g := strings.Join(got, " "); g != want {
		t.Errorf("searches %s, want %s", g, want)
	}
	if rows[4].Loaded() || rows[1].Fault != fault.SLONotMet || rows[0].Fault != fault.None {
		t.Errorf("kinds %q %q %q", rows[0].Fault, rows[1].Fault, rows[4].Fault)
	}
}

// A schema-12 file whose kind contradicts its valid column is refused at the line: a row cannot
// be valid and invalid for a reason at once. A row written without a kind is written as other.
func TestAKindThatContradictsValidIsRefused(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.csv")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	unset := sample(2, false)
	unset.Fault = fault.None // a caller that forgot the kind
	for _, r := range []Row{sample(1, true), unset} {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	rows, _, err := ReadFile(path)
	if err != nil || len(rows) != 2 || rows[1].Fault != fault.Other || rows[1].Valid {
		t.Fatalf("read back %d rows, %v; want the second invalid with kind other", len(rows), err)
	}
	data, _ := os.ReadFile(path)
	recs, err := csv.NewReader(strings.NewReader(string(data))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	kind := slices.Index(recs[0], "invalid_kind")
	for _, c := range []struct {
		row  int
		kind string
	}{{1, "errors"}, {2, ""}, {2, "slow"}} {
		edited := slices.Clone(recs)
		edited[c.row] = slices.Clone(recs[c.row])
		edited[c.row][kind] = c.kind
		var b strings.Builder
		cw := csv.NewWriter(&b)
		cw.WriteAll(edited)
		if _, _, err := Read(strings.NewReader(b.String())); err == nil || !strings.Contains(err.Error(), "invalid_kind") || !strings.Contains(err.Error(), fmt.Sprintf("line %d", c.row+1)) {
			t.Errorf("row %d with invalid_kind %q: %v, want it refused at its line", c.row+1, c.kind, err)
		}
	}
}
