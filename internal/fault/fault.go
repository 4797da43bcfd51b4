// Package fault names why a measurement does not count. A row's kind of fault is a field,
// written to the results file beside the sentence that explains it: code decides by the kind,
// people read the sentence, and rewording one never changes what the other decides.
package fault

import (
	"fmt"
	"slices"
)

// Kind is why a cell or a find-max step is invalid; None when it is valid.
type Kind string

// The kinds. Their text is what the results file's invalid_kind column holds: appending is
// compatible, renaming is not.
const (
	None Kind = ""

	// Never loaded: the row has no measurement.

	// BuildFailed: the target's image did not build.
	BuildFailed Kind = "build-failed"
	// StartFailed: the target's container did not start or did not become healthy.
	StartFailed Kind = "start-failed"
	// VerifyFailed: the target started, and its answers to the cell's request failed their check.
	VerifyFailed Kind = "verify-failed"
	// Skipped: the target failed to start too often earlier in the run, or does not serve the
	// cell's protocol, or the host lacks the CPUs the cell needs.
	Skipped Kind = "skipped"

	// The generator's: the target is not to blame.

	// GeneratorBehind: the generator sent fewer requests than its schedule asked for.
	GeneratorBehind Kind = "generator-behind"
	// GeneratorDelayed: the generator's own share of the latencies exceeded what is allowed.
	GeneratorDelayed Kind = "generator-delayed"
	// GeneratorLimited: a find-max step the generator could not send on time.
	GeneratorLimited Kind = "generator-limited"
	// OwnDelayUnmeasured: the kernel gave no receive timestamps, so the generator's share is unknown.
	OwnDelayUnmeasured Kind = "own-delay-unmeasured"

	// The target's.

	// InFlightFull: every in-flight slot was busy: the target answered far slower than expected.
	InFlightFull Kind = "in-flight-full"
	// Errors: fewer answers passed their check than the success ratio requires.
	Errors Kind = "errors"
	// NoRequests: no request completed.
	NoRequests Kind = "no-requests"
	// TargetDied: the target exited (out of memory, typically) while loaded.
	TargetDied Kind = "target-died"
	// Unstored: the target stored fewer rows than it answered successes for.
	Unstored Kind = "stored-rows"
	// LoadFailed: the load could not run (the generator failed to start, a shard was lost).
	LoadFailed Kind = "load-failed"
	// Downstream: the target's calls to iotbench's downstream service were not as its successes require.
	Downstream Kind = "downstream"
	// SLONotMet: a find-max step that missed the SLO.
	SLONotMet Kind = "slo-not-met"

	// Repeated: a find-max step that failed while other work disturbed its CPUs, measured again
	// in the next row; it decides nothing.
	Repeated Kind = "repeated"
	// Other: a reason of an older file that none of the kinds above describes.
	Other Kind = "other"
)

// Kinds are every kind but None, in the order of the list above.
var Kinds = []Kind{BuildFailed, StartFailed, VerifyFailed, Skipped, GeneratorBehind, GeneratorDelayed,
	GeneratorLimited, OwnDelayUnmeasured, InFlightFull, Errors, NoRequests, TargetDied, Unstored,
	LoadFailed, Downstream, SLONotMet, Repeated, Other}

// Parse reads a kind from its text, as the results file holds it.
func Parse(s string) (Kind, error) {
	if k := Kind(s); k == None || slices.Contains(Kinds, k) {
		return k, nil
	}
	return None, fmt.Errorf("a kind of fault (%v, or empty)", Kinds)
}

// Loaded reports whether a row of this kind had load sent: not when its target failed to
// build, start or verify, or was skipped.
func (k Kind) Loaded() bool {
	switch k {
	case BuildFailed, StartFailed, VerifyFailed, Skipped:
		return false
	}
	return true
}

// Generator reports whether the kind blames the load generator alone: a paired gate treats a
// candidate invalid for it in every trial as unmeasured, not as failed, and a search stops below it.
func (k Kind) Generator() bool {
	switch k {
	case GeneratorBehind, GeneratorDelayed, GeneratorLimited:
		return true
	}
	return false
}
