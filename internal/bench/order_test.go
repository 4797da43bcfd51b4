package bench

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/plan"
)

func cells(targets []string, trials int) []plan.Cell {
	var out []plan.Cell
	for trial := 1; trial <= trials; trial++ {
		for _, t := range targets {
			out = append(out, plan.Cell{Target: t, Trial: trial})
		}
	}
	return out
}

func orderOf(cs []plan.Cell) string {
	var s []string
	for _, c := range cs {
		s = append(s, fmt.Sprintf("%s%d", c.Target, c.Trial))
	}
	return strings.Join(s, " ")
}

func TestOrderedInterleavesShuffledRounds(t *testing.T) {
	targets := []string{"a", "b", "c", "d"}
	in := cells(targets, 6)
	got := ordered(in, 42)
	if orderOf(ordered(in, 42)) != orderOf(got) {
		t.Fatal("the same seed gave two orders")
	}
	if orderOf(in) != orderOf(cells(targets, 6)) {
		t.Fatal("ordered changed its argument")
	}
	shuffled := false
	for round := 0; round < 6; round++ {
		var names []string
		for _, c := range got[4*round : 4*round+4] {
			if c.Trial != round+1 {
				t.Fatalf("round %d holds trial %d: %s", round+1, c.Trial, orderOf(got))
			}
			names = append(names, c.Target)
		}
		if !slices.Equal(slices.Sorted(slices.Values(names)), targets) {
			t.Fatalf("round %d is %v, want every target once", round+1, names)
		}
		shuffled = shuffled || !slices.Equal(names, targets)
	}
	if !shuffled {
		t.Errorf("six rounds all in plan order: %s", orderOf(got))
	}
	if orderOf(ordered(in, 43)) == orderOf(got) {
		t.Errorf("seeds 42 and 43 gave the same order %s", orderOf(got))
	}
}

func TestPayloadSHA(t *testing.T) {
	base := plan.Cell{Path: "/ingest", Load: load.Config{Request: load.Request{Method: "POST", Body: []byte(`{"a":1}`)}, Check: load.NewCheck("id")}}
	body := base
	body.Load.Request.Body = []byte(`{"a":2}`)
	check := base
	check.Load.Check = load.NewCheck("ok")
	path := base
	path.Path = "/ingest/realistic"
	sum := payloadSHA(base)
	if len(sum) != 16 || payloadSHA(base) != sum {
		t.Fatalf("payloadSHA = %q, not a stable 16-digit hash", sum)
	}
	for name, c := range map[string]plan.Cell{"body": body, "check": check, "path": path} {
		if payloadSHA(c) == sum {
			t.Errorf("a different %s gives the same payload hash", name)
		}
	}
}

func TestOrderedPairsRunBackToBack(t *testing.T) {
	var in []plan.Cell
	for round := 1; round <= 8; round++ {
		for _, target := range []string{"a", "b", "c"} {
			for _, v := range []string{"base", "candidate"} {
				in = append(in, plan.Cell{Target: target, Trial: round, Round: round, Variant: v})
			}
		}
	}
	got := ordered(in, 7)
	if len(got) != len(in) {
		t.Fatalf("%d cells, want %d", len(got), len(in))
	}
	candidateFirst, targetOrders := 0, map[string]bool{}
	for i := 0; i < len(got); i += 2 {
		a, b := got[i], got[i+1]
		if a.Target != b.Target || a.Round != b.Round || a.Variant == b.Variant {
			t.Fatalf("cells %d and %d are %s/%s@%d and %s/%s@%d, not a pair", i, i+1, a.Target, a.Variant, a.Round, b.Target, b.Variant, b.Round)
		}
		if a.Round != i/6+1 {
			t.Fatalf("cell %d is of round %d, want %d", i, a.Round, i/6+1)
		}
		if a.Variant == "candidate" {
			candidateFirst++
		}
		if i%6 == 0 {
			targetOrders[got[i].Target+got[i+2].Target+got[i+4].Target] = true
		}
	}
	// 24 pairs: which side goes first is a coin each time, and so is the targets' turn.
	if candidateFirst == 0 || candidateFirst == 24 || len(targetOrders) < 2 {
		t.Errorf("candidate first in %d of 24 pairs, %d target orders: not shuffled", candidateFirst, len(targetOrders))
	}
	// A round added later leaves the order of those before it alone (an adaptive run replays).
	more := append(slices.Clone(in), plan.Cell{Target: "a", Trial: 9, Round: 9, Variant: "base"}, plan.Cell{Target: "a", Trial: 9, Round: 9, Variant: "candidate"})
	if longer := ordered(more, 7); orderOfPairs(longer[:len(got)]) != orderOfPairs(got) {
		t.Error("adding a round changed the order of the rounds before it")
	}
}

func orderOfPairs(cs []plan.Cell) string {
	var s []string
	for _, c := range cs {
		s = append(s, fmt.Sprintf("%s/%s@%d", c.Target, c.Variant, c.Round))
	}
	return strings.Join(s, " ")
}
