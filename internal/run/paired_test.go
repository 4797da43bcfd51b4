package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iotbench/iotbench/internal/results"
)

// checkout writes a scenarios file with targets under dir, each with a build context, as a
// checkout of the repository has.
func checkout(t *testing.T, dir string, targets ...string) {
	t.Helper()
	var list []string
	yaml := "default_scenario: s\ntargets:\n"
	for i, name := range targets {
		ctx := filepath.Join(dir, "targets", name)
		os.MkdirAll(ctx, 0o755)
		os.WriteFile(filepath.Join(ctx, "Dockerfile"), []byte("FROM debian:trixie\n"), 0o644)
		yaml += "  " + name + ": {build: targets/" + name + ", port: " + string(rune('1'+i)) + "001}\n"
		list = append(list, name)
	}
	yaml += "scenarios:\n  s:\n    request: {path: /x}\n    load: {rate: 10}\n    trials: 3\n    targets: [" + strings.Join(list, ", ") + "]\n"
	if err := os.WriteFile(filepath.Join(dir, "scenarios.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestPairWithBaseline(t *testing.T) {
	root := t.TempDir()
	cand, base := filepath.Join(root, "candidate"), filepath.Join(root, "base")
	checkout(t, cand, "a", "b")
	checkout(t, base, "a", "b")
	t.Chdir(cand)
	o := &Scenario{File: "scenarios.yaml", Baseline: base, AA: 1}
	p, err := scenarioPlan(o, []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Paired || p.Rounds() != 3 || len(p.Cells) != 2*2*3+2*2 {
		t.Fatalf("paired %v, %d rounds, %d cells; want 3 rounds of 2 sides of 2 targets and one A/A round", p.Paired, p.Rounds(), len(p.Cells))
	}
	var tags []string
	for _, b := range p.Builds {
		tags = append(tags, b.Tag())
	}
	if strings.Join(tags, " ") != "iotbench/a:base iotbench/a:latest iotbench/b:base iotbench/b:latest" {
		t.Errorf("builds %v: want each target's baseline and candidate images apart", tags)
	}
	for _, c := range p.Cells {
		fromBase := strings.HasPrefix(c.Build.Context, base)
		if fromBase != (c.Variant != results.VariantCandidate) {
			t.Errorf("%s (%s) builds from %s", c.Target, c.Variant, c.Build.Context)
		}
	}

	// A target the baseline lacks has nothing to pair with.
	checkout(t, base, "a")
	if _, err := scenarioPlan(o, []int{0, 1}); err == nil || !strings.Contains(err.Error(), "target b (scenario s, trial 1) is not in the baseline") {
		t.Errorf("err %v, want target b named", err)
	}
	o.Baseline = filepath.Join(root, "nowhere")
	if _, err := scenarioPlan(o, []int{0, 1}); err == nil || !strings.Contains(err.Error(), "not a folder") {
		t.Errorf("err %v, want the missing checkout named", err)
	}
}
