package run

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iotbench/iotbench/internal/fault"
	"github.com/iotbench/iotbench/internal/results"
)

type keptRows struct{ rows []results.Row }

func (k *keptRows) Add(_ context.Context, rows []results.Row) error {
	k.rows = append(k.rows, rows...)
	return nil
}

// TestExecuteAddsToHistory: a run given a history hands it every row as the row is recorded
// (here cells skipped on a host too small: recorded, never loaded).
func TestExecuteAddsToHistory(t *testing.T) {
	dir := t.TempDir()
	e, connects := fakeEngine(), 0
	rs := New(effects(e, &connects))
	kept := &keptRows{}
	out, err := rs.Execute(context.Background(), Setup{Scenario: &Scenario{File: matrix(t, dir)}, File: filepath.Join(dir, "small.csv"), NeedsCPUs: 4, History: kept})
	if err != nil {
		t.Fatal(err)
	}
	if len(kept.rows) != len(out.Rows) || len(kept.rows) != 4 {
		t.Fatalf("history holds %d rows, the file %d; want the 4 cells in both", len(kept.rows), len(out.Rows))
	}
	for _, r := range kept.rows {
		if !strings.HasPrefix(r.InvalidReason, string(fault.Skipped)) {
			t.Errorf("%+v", r)
		}
	}
}
