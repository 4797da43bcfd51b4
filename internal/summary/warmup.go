package summary

import (
	"time"

	"github.com/iotbench/iotbench/internal/loadspec"
)

// WarmupText says how a scenario's cells warmed up: a fixed time, or until steady with its
// maximum (each cell's own time is in its row, warmup_taken_s).
func WarmupText(warmup time.Duration, auto bool) string {
	if auto {
		return "a warm-up until steady (at most " + loadspec.FormatDuration(warmup) + ")"
	}
	return "a " + loadspec.FormatDuration(warmup) + " warm-up"
}
