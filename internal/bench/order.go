package bench

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/iotbench/iotbench/internal/plan"
)

// ordered returns cells in the order to measure them: trial by trial, every target once per
// round, the targets of each round in an order shuffled by seed. Interleaving spreads the
// machine's drift (heat, other tenants) over every target alike; shuffling keeps one target from
// always following another, whose leftovers (page cache, freed memory) it would inherit.
//
// A paired plan's rounds follow their Round; each round holds a baseline and a candidate of each
// target, measured back to back: the targets take turns in a shuffled order, and which of a
// pair goes first is shuffled too, so that neither side always inherits the other's leftovers.
func ordered(cells []plan.Cell, seed int64) []plan.Cell {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x10b))
	if slices.ContainsFunc(cells, func(c plan.Cell) bool { return c.Round > 0 }) {
		return orderedPairs(cells, rng)
	}
	out := slices.Clone(cells)
	slices.SortStableFunc(out, func(a, b plan.Cell) int { return a.Trial - b.Trial })
	for start := 0; start < len(out); {
		end := start
		for end < len(out) && out[end].Trial == out[start].Trial {
			end++
		}
		round := out[start:end]
		rng.Shuffle(len(round), func(i, j int) { round[i], round[j] = round[j], round[i] })
		start = end
	}
	return out
}

func orderedPairs(cells []plan.Cell, rng *rand.Rand) []plan.Cell {
	in := slices.Clone(cells)
	slices.SortStableFunc(in, func(a, b plan.Cell) int { return a.Round - b.Round })
	out := make([]plan.Cell, 0, len(in))
	for start := 0; start < len(in); {
		end := start
		for end < len(in) && in[end].Round == in[start].Round {
			end++
		}
		// The round's cells by target, in order of first appearance.
		var groups [][]plan.Cell
		at := map[string]int{}
		for _, c := range in[start:end] {
			k := c.Scenario + "\x00" + c.Target
			i, ok := at[k]
			if !ok {
				i = len(groups)
				at[k] = i
				groups = append(groups, nil)
			}
			groups[i] = append(groups[i], c)
		}
		rng.Shuffle(len(groups), func(i, j int) { groups[i], groups[j] = groups[j], groups[i] })
		for _, g := range groups {
			rng.Shuffle(len(g), func(i, j int) { g[i], g[j] = g[j], g[i] })
			out = append(out, g...)
		}
		start = end
	}
	return out
}

// payloadSHA identifies what a cell sends and what a success must contain: the first 16 hex
// digits of a SHA-256 over the method, path, headers, body and check.
func payloadSHA(c plan.Cell) string {
	h := sha256.New()
	req := c.Load.Request
	h.Write([]byte(req.Method + "\n" + c.Path + "\n"))
	keys := make([]string, 0, len(req.Header))
	for k := range req.Header {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		h.Write([]byte(k + ": " + strings.Join(req.Header[k], ", ") + "\n"))
	}
	h.Write([]byte("\n"))
	h.Write(req.Body)
	for _, want := range c.Load.Check.Contains {
		h.Write([]byte("\ncontains: "))
		h.Write([]byte(want))
	}
	// A mix's requests, each as the one request is; none for a cell of one, whose hash stays.
	for _, k := range c.Load.Kinds {
		h.Write([]byte("\nrequest " + k.Name + "\n" + k.Request.Method + "\n" + k.Request.URL + "\n"))
		for _, name := range slices.Sorted(maps.Keys(k.Request.Header)) {
			h.Write([]byte(name + ": " + strings.Join(k.Request.Header[name], ", ") + "\n"))
		}
		h.Write([]byte("\n"))
		h.Write(k.Request.Body)
		for _, want := range k.Check.Contains {
			h.Write([]byte("\ncontains: " + want))
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
