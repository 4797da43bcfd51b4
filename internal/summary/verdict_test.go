package summary

import (
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/fault"
	"github.com/iotbench/iotbench/internal/results"
)

// Each verdict from the row's own columns, the first that applies: a row that was never loaded
// names why, then invalid, disturbed, not steady, still warming up.
func TestVerdict(t *testing.T) {
	loaded := func(edit func(*results.Row)) results.Row {
		r := results.Row{Valid: true, Requests: 100, Duration: 10 * time.Second}
		edit(&r)
		return r
	}
	for _, c := range []struct {
		row  results.Row
		want string
	}{
		{results.Row{Fault: fault.VerifyFailed, InvalidReason: "anything"}, "verify-failed"},
		{results.Row{Fault: fault.BuildFailed, InvalidReason: "verify-failed: words decide nothing"}, "build-failed"},
		{loaded(func(r *results.Row) { r.SetFault(fault.Errors, "success ratio 0.5") }), "invalid"},
		{loaded(func(r *results.Row) { r.SetFault(fault.Errors, "verify-failed: a reason that reads like another") }), "invalid"},
		{loaded(func(r *results.Row) { r.Disturbed, r.Warnings = true, "disturbed: the hypervisor took 0.2 cores" }), "disturbed"},
		{loaded(func(r *results.Row) { r.Warnings = "disturbed: words alone decide nothing" }), "valid"},
		{loaded(func(r *results.Row) { r.SteadyJudged = true }), "not-steady"},
		{loaded(func(r *results.Row) { r.JITBusy, r.JITJudged = 6*time.Second, true }), "still-warming"},
		{loaded(func(r *results.Row) { r.JITBusy, r.JITJudged = 4*time.Second, true }), "valid"},
		{loaded(func(*results.Row) {}), "valid"},
	} {
		if got := Verdict(c.row); got != c.want {
			t.Errorf("%+v: verdict %q, want %q", c.row, got, c.want)
		}
	}
}
