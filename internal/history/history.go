// Package history keeps every run's rows in a store (an SQLite file, or a PostgreSQL database
// shared by a team), orders them into series, finds the commits where a series' level shifted
// (change points), and draws the series. docs/history.md is its manual.
//
// A series is one way of measuring one thing on one testbed: the rows of a scenario, target and
// variant whose settings fingerprint is equal but for the fields that change with every commit
// (iotbench_version, image_id, db_image_id: kept as attributes of each point), on one kind of
// host (CPU model, kernel). Its points are ordered by started_at within a branch. A row that
// was not a valid, undisturbed measurement is stored and marked, and never used as a point.
package history

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/summary"
)

// DefaultBranch is the branch of points added without one.
const DefaultBranch = "main"

// perCommit are the fingerprint's fields that change with every commit: a series runs across them.
var perCommit = map[string]bool{"iotbench_version": true, "image_id": true, "db_image_id": true}

// Key names a series.
type Key struct {
	// Testbed is the host: CPU model and kernel (the CPU counts are settings).
	Testbed  string
	Scenario string
	Target   string
	Variant  string
	// Settings are the fingerprint's fields but the per-commit ones, "name=value" joined by
	// ", ", each added setting only away from its default (results.AddedSettings).
	Settings string
}

// ID is a short hash of the key: the store's name for the series.
func (k Key) ID() string {
	h := sha256.Sum256([]byte(strings.Join([]string{k.Testbed, k.Scenario, k.Target, k.Variant, k.Settings}, "\n")))
	return hex.EncodeToString(h[:8])
}

// String is the key as a reader names the series.
func (k Key) String() string {
	s := k.Scenario + " / " + k.Target
	if k.Variant != "" {
		s += " (" + k.Variant + ")"
	}
	return s
}

// KeyOf is the series a row belongs to.
func KeyOf(r results.Row) Key {
	var settings []string
	for _, f := range r.FingerprintFields() {
		if perCommit[f.Name] || f.Name == "host_cpu" {
			continue
		}
		if def, added := results.AddedSettings[f.Name]; added && f.Value == def {
			continue
		}
		settings = append(settings, f.Name+"="+f.Value)
	}
	return Key{
		Testbed:  r.HostCPU + "; kernel " + r.Kernel,
		Scenario: r.Scenario, Target: r.Target, Variant: r.Variant,
		Settings: strings.Join(settings, ", "),
	}
}

// Point is one stored row of a series.
type Point struct {
	Branch, Commit string
	StartedAt      time.Time
	Trial          int
	// Verdict is "valid", or why the row is no point: invalid, disturbed, not-steady,
	// still-warming, calibration-missed, or why it was never loaded (verify-failed, build-failed,
	// start-failed, skipped). Reason says more.
	Verdict, Reason string
	// The per-commit settings the row was measured with.
	Version, ImageID, DBImageID string
	// Values are the row's metrics by name (results.RowMetrics); an optional metric that was not
	// recorded is absent.
	Values map[string]float64
	// Source is the results file the row was added from (empty for a run's own rows).
	Source string
}

// CalibrationMissed is the verdict of a valid row whose run's calibration missed its limits.
const CalibrationMissed = "calibration-missed"

// Usable tells whether p is a measurement a series may use.
func (p Point) Usable() bool { return p.Verdict == "valid" }

// verdict is summary.Verdict with what says more: the row's invalid reason or its warnings.
func verdict(r results.Row) (string, string) {
	switch v := summary.Verdict(r); v {
	case "valid":
		// The row's run's calibration missed its limits: compare leaves it out, and so does a
		// series (a change point was once placed at such a row, a commit before the step).
		if why := r.Distrust(); why != "" {
			return CalibrationMissed, why
		}
		return v, ""
	case "disturbed", "not-steady", "still-warming":
		return v, r.Warnings
	default:
		return v, r.InvalidReason
	}
}

// pointOf is r as a point of branch at commit (empty: the row's own).
func pointOf(r results.Row, branch, commit, source string) Point {
	if commit == "" {
		commit = r.GitCommit
	}
	if branch == "" {
		branch = DefaultBranch
	}
	v, reason := verdict(r)
	p := Point{Branch: branch, Commit: commit, StartedAt: r.StartedAt.UTC(), Trial: r.Trial, Verdict: v, Reason: reason,
		Version: r.Version, ImageID: r.ImageID, DBImageID: r.DBImageID, Values: map[string]float64{}, Source: source}
	if r.Loaded() {
		for _, m := range results.RowMetrics() {
			if x := m.Value(r); !(m.Optional && x == 0) {
				p.Values[m.Name] = x
			}
		}
	}
	return p
}

// rowKey names a row within its series: a file added twice is one set of points.
func rowKey(r results.Row) string {
	return strings.Join([]string{r.StartedAt.UTC().Format(time.RFC3339Nano), strconv.Itoa(r.Trial), strconv.FormatInt(r.Seed, 10)}, " ")
}

// Series is a series' points on one branch, oldest first.
type Series struct {
	Key    Key
	Points []Point
}

// Of are the series of series that rows belong to.
func Of(series []Series, rows []results.Row) []Series {
	keys := map[Key]bool{}
	for _, r := range rows {
		keys[KeyOf(r)] = true
	}
	var out []Series
	for _, s := range series {
		if keys[s.Key] {
			out = append(out, s)
		}
	}
	return out
}
