package compare

import (
	"fmt"
	"io"

	"github.com/iotbench/iotbench/internal/flame"
	"github.com/iotbench/iotbench/internal/profile"
)

// ProfileChange is how one target's CPU profile at its maximum moved between two runs that both
// took one (run --profile): the functions whose own share of the samples moved most. One profile
// a side is a description, not a verdict: no interval, no gate.
type ProfileChange struct {
	Scenario, Target string
	Old, New         profile.Record
	Changes          []flame.Change
}

// profileChanges is how many functions each target's change lists.
const profileChanges = 10

// ProfileChanges pairs the profiles of old and new by scenario and target (the first of each
// side's searches), in old's order.
func ProfileChanges(old, new []profile.Record) []ProfileChange {
	var out []ProfileChange
	seen := map[[2]string]bool{}
	for _, o := range old {
		k := [2]string{o.Scenario, o.Target}
		if seen[k] {
			continue
		}
		seen[k] = true
		for _, n := range new {
			if n.Scenario == o.Scenario && n.Target == o.Target {
				out = append(out, ProfileChange{Scenario: o.Scenario, Target: o.Target, Old: o, New: n, Changes: flame.Diff(o.Stacks, n.Stacks, profileChanges)})
				break
			}
		}
	}
	return out
}

// WriteProfileChanges prints each target's change as a small table.
func WriteProfileChanges(w io.Writer, changes []ProfileChange) error {
	for _, c := range changes {
		fmt.Fprintf(w, "\nCPU profile of %s (%s) at its maximum: %d samples at %d rps → %d samples at %d rps; one profile a side: what moved, not a verdict\n",
			c.Target, c.Scenario, c.Old.Stacks.Total, c.Old.Rate, c.New.Stacks.Total, c.New.Rate)
		if len(c.Changes) == 0 {
			fmt.Fprintln(w, "  no function's own share moved")
			continue
		}
		fmt.Fprintf(w, "  %-60s %8s %8s %8s\n", "function (own share of samples)", "old", "new", "change")
		for _, ch := range c.Changes {
			name := flame.Label(ch.Frame)
			if r := []rune(name); len(r) > 60 {
				name = string(r[:59]) + "…"
			}
			fmt.Fprintf(w, "  %-60s %7.1f%% %7.1f%% %+7.1f\n", name, 100*ch.Old, 100*ch.New, 100*ch.Delta())
		}
	}
	return nil
}
