package bench

import (
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/results"
)

// Status hears where a run is, for a display of its progress (internal/progress). Its methods
// are called from the run's goroutine, in this order per cell: Cell, Phase and Second as the
// cell goes, Done.
type Status interface {
	// Cell: cell i (from 1) of n begins; its target is being started.
	Cell(i, n int, c plan.Cell)
	// Phase: the run enters a phase outside the load (build, start).
	Phase(name string)
	// Second: the load's progress, about once a second, warm-up and measured phase.
	Second(load.Progress)
	// Done: the cell's row is recorded.
	Done(results.Row)
}

// status is r.Status, or one that hears nothing.
func (r *Runner) status() Status {
	if r.Status == nil {
		return quiet{}
	}
	return r.Status
}

type quiet struct{}

func (quiet) Cell(int, int, plan.Cell) {}
func (quiet) Phase(string)             {}
func (quiet) Second(load.Progress)     {}
func (quiet) Done(results.Row)         {}
