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
