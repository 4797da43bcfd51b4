package compare

import (
	"fmt"
	"strings"

	"github.com/iotbench/iotbench/internal/results"
)

// A verdict never rests on a figure the instrument cannot vouch for: a row whose measured phase
// was not in a steady state (its figures moved through the phase: no one level describes it),
// whose run's calibration, the one nearest the row, missed its limits (the instrument was off that
// day by more than it promises), or whose JVM was still compiling its hot paths. Such rows are
// left out of compare and of the paired gate as an invalid trial is, and the notes say how many
// and why (docs/selfcheck.md).

// trusted are the valid rows a verdict may rest on; left counts the others by reason.
func trusted(rows []results.Row, left map[string]int) []results.Row {
	var out []results.Row
	for _, r := range rows {
		if !r.Valid {
			continue
		}
		if why := r.Distrust(); why != "" {
			left[why]++
			continue
		}
		out = append(out, r)
	}
	return out
}

// leftOutText says which valid trials of a cell were left out and why: "2 not steady, 1
// calibration missed its limits"; empty when none.
func leftOutText(left map[string]int) string {
	return strings.Join(results.DistrustCounts(left), ", ")
}

// leftOutNote is the note of a cell some of whose valid trials (or searches) were left out;
// where says of which side ("in old.csv", "of the candidate"); empty when none were.
func leftOutNote(name, what, where string, left map[string]int) string {
	if len(left) == 0 {
		return ""
	}
	var why []string
	if left[results.DistrustNotSteady] > 0 {
		why = append(why, "a phase that was not steady has no one level to compare")
	}
	if left[results.DistrustCalibration] > 0 {
		why = append(why, "the run's calibration says the instrument was off by more than its limits")
	}
	if left[results.DistrustWarming] > 0 {
		why = append(why, "a JVM whose JIT was still compiling was measured before its warm-up ended")
	}
	return fmt.Sprintf("%s: %s left out %s (%s), so that no verdict rests on them: %s", name, what, where, leftOutText(left), strings.Join(why, "; "))
}
