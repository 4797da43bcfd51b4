package shard

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/iotbench/iotbench/internal/load"
)

// Shards without a parent: where no process can hand them a start time over a pipe (an indexed
// Kubernetes Job, docs/scale.md), each shard gets the start of the measured phase up front, and
// leaves its result and interval log in a folder they share, which MergeDir merges.

// RunFile measures s as shard s.Index, its measured phase starting at start (plus its offset):
// the warm-up must be over by then. It writes shard-<i>.hlog and shard-<i>.json into dir.
func RunFile(ctx context.Context, s Spec, start time.Time, dir string) error {
	s.Hlog = filepath.Join(dir, fmt.Sprintf("shard-%d.hlog", s.Index+1))
	out, err := measure(ctx, s, func() error {
		at := start.Add(s.Offset())
		if late := time.Since(at); late > 0 {
			return fmt.Errorf("%s: warmed up %s after the measured phase's start %s: start the shards earlier or set a later start", s.Name(), late.Round(time.Millisecond), start.Format(time.RFC3339))
		}
		return waitUntil(ctx, at)
	})
	if err != nil {
		return err
	}
	out.Spec = &s
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, fmt.Sprintf("shard-%d.json", s.Index+1)), append(b, '\n'), 0o644)
}

// MergeDir merges the shards RunFile left in dir: every one of the count they were split into
// must be there.
func MergeDir(dir string) (load.Result, error) {
	files, err := filepath.Glob(filepath.Join(dir, "shard-*.json"))
	if err != nil || len(files) == 0 {
		return load.Result{}, fmt.Errorf("%s: no shard-<i>.json: did the shards write there?", dir)
	}
	var parts []Part
	seen := map[int]bool{}
	count := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return load.Result{}, err
		}
		var m message
		if err := json.Unmarshal(b, &m); err != nil || m.Spec == nil || m.Result == nil {
			return load.Result{}, fmt.Errorf("%s: not a shard's result: %v", f, err)
		}
		p, err := readPart(*m.Spec, *m.Result, filepath.Join(dir, filepath.Base(m.Spec.Hlog)))
		if err != nil {
			return load.Result{}, err
		}
		seen[m.Spec.Index], count = true, m.Spec.Count
		parts = append(parts, p)
	}
	for i := range count {
		if !seen[i] {
			return load.Result{}, fmt.Errorf("%s: shard %d of %d left no result", dir, i+1, count)
		}
	}
	return Merge(parts)
}
