package compare

import (
	"bytes"
	"strings"
	"testing"

	"github.com/iotbench/iotbench/internal/flame"
	"github.com/iotbench/iotbench/internal/profile"
)

func folded(t *testing.T, s string) flame.Profile {
	t.Helper()
	p, err := flame.ParseFolded(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestProfileChangesPairByTargetAndShowWhatMoved(t *testing.T) {
	old := []profile.Record{
		{Scenario: "s", Target: "fastify", Rate: 4000, Stacks: folded(t, "main;parse_[j] 60\nmain;write_[k] 40\n")},
		{Scenario: "s", Target: "fastify", Search: 2, Rate: 4100, Stacks: folded(t, "main;parse_[j] 1\n")}, // a second search: the first one stands
		{Scenario: "s", Target: "koa", Rate: 3000, Stacks: folded(t, "main 1\n")},                          // not in new
	}
	new := []profile.Record{
		{Scenario: "s", Target: "fastify", Rate: 5000, Stacks: folded(t, "main;parse_[j] 30\nmain;write_[k] 50\nmain;gc 20\n")},
	}
	changes := ProfileChanges(old, new)
	if len(changes) != 1 || changes[0].Target != "fastify" || changes[0].Old.Rate != 4000 {
		t.Fatalf("changes %+v, want fastify's first search against new's", changes)
	}
	var b bytes.Buffer
	WriteProfileChanges(&b, changes)
	out := b.String()
	for _, want := range []string{
		"CPU profile of fastify (s) at its maximum: 100 samples at 4000 rps → 100 samples at 5000 rps; one profile a side: what moved, not a verdict",
		"parse                                                           60.0%    30.0%   -30.0",
		"gc                                                               0.0%    20.0%   +20.0",
		"write                                                           40.0%    50.0%   +10.0",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "parse") > strings.Index(out, "gc ") || strings.Index(out, "gc ") > strings.Index(out, "write ") {
		t.Errorf("not ordered by the size of the change:\n%s", out)
	}
}
