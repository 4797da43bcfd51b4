package summary

import (
	"fmt"
	"time"

	"github.com/iotbench/iotbench/internal/results"
)

// calibrationOf is what a row records of its run's calibration.
type calibrationOf struct {
	p50, p99, own time.Duration
	rate          float64
	within        bool
}

// CalibrationNotes say, once per calibration the rows carry, how far the instrument was from a
// reference server's known latency when it measured them (docs/results.md, "Calibration").
func CalibrationNotes(rows []results.Row) []string {
	count := map[calibrationOf]int{}
	var order []calibrationOf
	for _, r := range rows {
		if !r.Calibrated {
			continue
		}
		c := calibrationOf{r.CalibrationP50Error, r.CalibrationP99Error, r.CalibrationOwnDelayP99, r.CalibrationRateRatio, r.CalibrationWithin}
		if count[c] == 0 {
			order = append(order, c)
		}
		count[c]++
	}
	var notes []string
	for _, c := range order {
		verdict := "within its limits"
		if !c.within {
			verdict = "MISSED its limits: these rows' figures are suspect"
		}
		notes = append(notes, fmt.Sprintf("calibration of %d row(s): against a reference server of known latency, p50 %+.3f ms and p99 %+.3f ms off the truth, %.2f%% of its rate sent, own delay p99 %.3f ms: %s",
			count[c], ms(c.p50), ms(c.p99), 100*c.rate, ms(c.own), verdict))
	}
	return notes
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
