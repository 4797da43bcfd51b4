package bench

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/iotbench/iotbench/internal/plan"
)

// ordered returns cells in the order to measure them: trial by trial, every target once per
// round, the targets of each round in an order shuffled by seed. Interleaving spreads the
// machine's drift (heat, other tenants) over every target alike; shuffling keeps one target from
// always following another, whose leftovers (page cache, freed memory) it would inherit.
func ordered(cells []plan.Cell, seed int64) []plan.Cell {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x10b))
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
		h.Write(want)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
