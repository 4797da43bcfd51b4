package fault

import "testing"

func TestParseTakesEveryKindBackAndRefusesOthers(t *testing.T) {
	for _, k := range append([]Kind{None}, Kinds...) {
		got, err := Parse(string(k))
		if err != nil || got != k {
			t.Errorf("Parse(%q) = %q, %v", k, got, err)
		}
	}
	for _, s := range []string{"slo not met", "Generator-behind", "x", " "} {
		if _, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) took it", s)
		}
	}
}

func TestOnlyTheNeverLoadedKindsLackALoad(t *testing.T) {
	notLoaded := map[Kind]bool{BuildFailed: true, StartFailed: true, VerifyFailed: true, Skipped: true}
	for _, k := range append([]Kind{None}, Kinds...) {
		if k.Loaded() == notLoaded[k] {
			t.Errorf("%q.Loaded() = %v", k, k.Loaded())
		}
	}
}

func TestOnlyTheGeneratorsKindsBlameIt(t *testing.T) {
	blames := map[Kind]bool{GeneratorBehind: true, GeneratorDelayed: true, GeneratorLimited: true}
	for _, k := range append([]Kind{None}, Kinds...) {
		if k.Generator() != blames[k] {
			t.Errorf("%q.Generator() = %v", k, k.Generator())
		}
	}
}
