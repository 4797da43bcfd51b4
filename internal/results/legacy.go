package results

import (
	"strings"

	"github.com/iotbench/iotbench/internal/fault"
)

// fieldsSchema is the schema whose rows hold their kind of fault, search and disturbance as fields.
const fieldsSchema = 12

// Files older than schema 12 said why a row was invalid in a sentence alone, marked a disturbed
// row in its warnings alone, and told a find-max step by its scenario's suffix alone. This file
// is the one place that reads those texts: it gives such rows the fields that newer files hold,
// so that nothing else decides by words.

// Upgrade gives rows of a file older than schema 12, in file order, the fields that newer files
// hold: each row's kind of fault and whether it was disturbed, each find-max step its search.
func Upgrade(rows []Row) {
	for i := range rows {
		upgrade(&rows[i])
	}
	numberSearches(rows)
}

// upgrade gives r, a row of a file older than schema 12, its kind of fault, whether it was
// disturbed, and for a find-max step the latencies its search measured below its maximum.
func upgrade(r *Row) {
	if strings.HasSuffix(r.Scenario, FindMaxSuffix) {
		r.LatencyAt = LegacyLatencyAt
	}
	r.Fault = fault.None
	if !r.Valid {
		r.Fault = legacyFault(r.InvalidReason)
	}
	for _, w := range strings.Split(r.Warnings, "; ") {
		if strings.HasPrefix(w, "disturbed: ") {
			r.Disturbed = true
		}
	}
}

// legacyFault is the kind of fault an older iotbench's invalid_reason says, by the words it
// wrote them with; fault.Other when none matches.
func legacyFault(reason string) fault.Kind {
	// The reasons of a cell never loaded, and of a find-max step, begin with their kind.
	for _, p := range []struct {
		prefix string
		kind   fault.Kind
	}{
		{"verify-failed:", fault.VerifyFailed}, {"build-failed:", fault.BuildFailed},
		{"start-failed:", fault.StartFailed}, {"skipped:", fault.Skipped},
		{"slo not met:", fault.SLONotMet}, {"generator-limited:", fault.GeneratorLimited},
		{"repeated:", fault.Repeated}, {"stored rows:", fault.Unstored},
		{"load failed:", fault.LoadFailed}, {"downstream:", fault.Downstream},
		{"no request completed", fault.NoRequests}, {"success ratio ", fault.Errors},
		{"the generator's own delay was not measured", fault.OwnDelayUnmeasured},
		{"target ", fault.TargetDied}, // "target OOM-killed at…", "target exited with…"
	} {
		if strings.HasPrefix(reason, p.prefix) {
			return p.kind
		}
	}
	// A mix's request, a stage of the cell, a generator shard: the kind of what follows.
	for _, by := range []string{"request ", "the cell: ", "shard "} {
		if strings.HasPrefix(reason, by) {
			if _, rest, ok := strings.Cut(reason, ": "); ok {
				return legacyFault(rest)
			}
		}
	}
	switch {
	case strings.Contains(reason, "in-flight slots were busy"):
		return fault.InFlightFull
	case strings.HasSuffix(reason, "the load generator could not keep up (give it more CPU or lower the rate)"):
		return fault.GeneratorBehind
	case strings.HasSuffix(reason, "the load generator was short of CPU; latencies would carry its delay"):
		return fault.GeneratorDelayed
	}
	return fault.Other
}

// legacyFractions are the fractions of its maximum at which every search of an older iotbench
// ended, measuring latency with headroom.
var legacyFractions = []float64{0.50, 0.75, 0.90}

// LegacyLatencyAt is legacyFractions as --latency-at gives them: what the latency_at of an older
// file's find-max steps reads as.
const LegacyLatencyAt = "50%,75%,90%"

// numberSearches gives the find-max steps of an older file the search each belongs to, as the
// summary told them apart then: a target's search starts where its previous row is not the row
// before it in the file (targets' searches were interleaved), where the container's start-up time
// changes (a new container), at a row never loaded, or after the steps at fractions of a rate it
// met that ended a search. Two searches of a service iotbench did not start (--url), one right
// after the other, the first without a maximum, cannot be told apart.
func numberSearches(rows []Row) {
	count := map[string]int{}  // searches so far, by target
	ended := map[string]bool{} // the target's last search is over
	first := map[string]int{}  // the row where its current search began
	for i := range rows {
		r := &rows[i]
		if !strings.HasSuffix(r.Scenario, FindMaxSuffix) {
			continue
		}
		name := r.Scenario + "\x00" + r.Target + "\x00" + r.Variant
		prev := i - 1
		fresh := count[name] == 0 || ended[name] || prev < 0 || rows[prev].Scenario != r.Scenario ||
			rows[prev].Target != r.Target || rows[prev].Variant != r.Variant ||
			rows[prev].Startup != r.Startup || !r.Loaded() || !rows[prev].Loaded()
		if fresh {
			count[name]++
			first[name] = i
		}
		r.Search = count[name]
		ended[name] = endsAtFractions(rows[first[name] : i+1])
	}
}

// endsAtFractions says whether a search's last steps (repeated ones aside) are at the legacy
// fractions of a rate one of its steps met.
func endsAtFractions(steps []Row) bool {
	var kept []Row
	for _, s := range steps {
		if s.Fault != fault.Repeated {
			kept = append(kept, s)
		}
	}
	n := len(legacyFractions)
	if len(kept) <= n || steps[len(steps)-1].Fault == fault.Repeated {
		return false
	}
	last := kept[len(kept)-n:]
	for _, s := range kept[:len(kept)-n] {
		if !s.Valid {
			continue
		}
		at := true
		for i, f := range legacyFractions {
			at = at && last[i].RequestedRPS == max(1, int(f*float64(s.RequestedRPS)))
		}
		if at {
			return true
		}
	}
	return false
}
