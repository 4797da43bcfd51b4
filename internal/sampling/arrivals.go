// Package sampling checks the samples a cell's figures rest on, as Lancet (USENIX ATC'19) does:
// that the requests were sent as the intended arrival process would send them (arrivals.go), and
// how independent the measured phase's seconds are, the effective number of them an interval may
// count (independence.go). Both are pure functions of small summaries the engine and the
// timeline already keep: nothing here measures anything.
package sampling

import (
	"fmt"
	"math"
	"time"

	"github.com/iotbench/iotbench/internal/arrival"
)

// Counts counts the requests sent in consecutive windows of a phase, each expected to hold about
// WindowRequests of them: the summary of the achieved send times the arrival check needs, kept
// as the requests are sent (in any order: by the answers' order), at a few bytes a window.
// Past MaxWindows windows, neighbours are merged and the windows doubled in width: a Poisson
// process's dispersion is the same at every width, an even schedule's stays near 0.
type Counts struct {
	width  time.Duration
	counts []uint32
}

// WindowRequests is the requests a window is expected to hold: enough that an even schedule's
// counts barely vary (a request more or less at a window's edge is a tenth of it), few enough
// that a Poisson process's spread is plain.
const WindowRequests = 10

// MaxWindows bounds a phase's windows (256 KiB): a 10-minute phase at 40,000 rps would need 2.4
// million.
const MaxWindows = 1 << 16

// NewCounts counts the sends of a phase of du at rate (requests per second), its windows
// allocated at once (none while the phase runs); nil when rate is not positive (closed loop, or
// stages whose rate changes: no one process to test against).
func NewCounts(rate int, du time.Duration) *Counts {
	if rate <= 0 {
		return nil
	}
	c := &Counts{width: max(time.Duration(float64(time.Second)*WindowRequests/float64(rate)), time.Microsecond)}
	for du/c.width >= MaxWindows {
		c.width *= 2
	}
	c.counts = make([]uint32, 0, du/c.width+1)
	return c
}

// Add counts a request sent at offset from the phase's start.
func (c *Counts) Add(offset time.Duration) {
	if c == nil || offset < 0 {
		return
	}
	i := int(offset / c.width)
	for i >= MaxWindows {
		c.merge()
		i = int(offset / c.width)
	}
	if i >= len(c.counts) {
		c.counts = append(c.counts, make([]uint32, i+1-len(c.counts))...)
	}
	c.counts[i]++
}

// merge doubles the windows' width.
func (c *Counts) merge() {
	for i := range (len(c.counts) + 1) / 2 {
		n := c.counts[2*i]
		if 2*i+1 < len(c.counts) {
			n += c.counts[2*i+1]
		}
		c.counts[i] = n
	}
	c.counts = c.counts[:(len(c.counts)+1)/2]
	c.width *= 2
}

// Dispersion summarizes the counts of the windows lying wholly within a phase of length du.
func (c *Counts) Dispersion(du time.Duration) Dispersion {
	if c == nil {
		return Dispersion{}
	}
	// Windows after the last send recorded are left out: a generator that stopped sending
	// early is the rate check's to judge, not the shape of what it sent.
	n := min(int(du/c.width), len(c.counts))
	if n < 2 {
		return Dispersion{}
	}
	var sum, sq float64
	for _, x := range c.counts[:n] {
		sum += float64(x)
	}
	mean := sum / float64(n)
	for _, x := range c.counts[:n] {
		sq += (float64(x) - mean) * (float64(x) - mean)
	}
	return Dispersion{Windows: n, Mean: mean, Variance: sq / float64(n-1)}
}

// Dispersion is the counts of sends in equal windows: how many windows, their mean and variance.
type Dispersion struct {
	Windows        int
	Mean, Variance float64
}

// Index is the variance over the mean: 1 for a Poisson process at any window's width, near 0
// for evenly spaced sends, above 1 for bursts; NaN when nothing was counted.
func (d Dispersion) Index() float64 {
	if d.Windows < 2 || d.Mean <= 0 {
		return math.NaN()
	}
	return d.Variance / d.Mean
}

// MinWindows is the fewest windows the check judges: with fewer, a Poisson process's index
// varies by more than the margins below.
const MinWindows = 50

// The arrival check's bars on the dispersion index. Evenly spaced sends pass below
// UniformMaxIndex (half of a Poisson process's 1: burstier than that, the load came in clumps a
// uniform schedule does not have). A Poisson process passes unless its index is off 1 both
// significantly (its chi-square test, p < PoissonAlpha) and by more than PoissonMargin: with
// thousands of windows any departure is significant, and a small one means nothing for latency.
const (
	UniformMaxIndex = 0.5
	PoissonAlpha    = 0.001
	PoissonMargin   = 0.25
)

// ArrivalCheck is what the arrival check found of a phase.
type ArrivalCheck struct {
	// Process is the intended arrival process; Index the achieved sends'
	// dispersion index (NaN when not judged).
	Process arrival.Process
	Index   float64
	// Judged is false when there was no process to test against or too few windows.
	Judged, Fits bool
}

// JudgeArrivals tests the achieved sends d against the intended process.
func JudgeArrivals(process arrival.Process, d Dispersion) ArrivalCheck {
	c := ArrivalCheck{Process: process.Or(), Index: d.Index()}
	if d.Windows < MinWindows || math.IsNaN(c.Index) {
		return c
	}
	switch c.Process {
	case arrival.Uniform:
		c.Judged, c.Fits = true, c.Index < UniformMaxIndex
	case arrival.Poisson:
		// (n−1)·index is chi-square with n−1 degrees of freedom under a Poisson process; its
		// normal approximation, with thousands of windows, is exact enough for p < 0.001.
		z := (c.Index - 1) * math.Sqrt(float64(d.Windows-1)/2)
		significant := 2*(1-normalCDF(math.Abs(z))) < PoissonAlpha
		c.Judged, c.Fits = true, !(significant && math.Abs(c.Index-1) > PoissonMargin)
	}
	return c
}

// String says in words what a failed check means for the cell's figures; empty when it passed
// or was not judged.
func (c ArrivalCheck) String() string {
	if !c.Judged || c.Fits {
		return ""
	}
	switch {
	case c.Process == arrival.Uniform:
		return fmt.Sprintf("arrivals not as intended: the sends came in clumps (dispersion %.2f; evenly spaced is near 0, a Poisson process 1): the target met a burstier load than the evenly spaced one asked, so its latencies read worse than that load's", c.Index)
	case c.Index > 1:
		return fmt.Sprintf("arrivals not as intended: the sends were burstier than a Poisson process (dispersion %.2f, Poisson 1): the target met a harsher load than asked, so its latencies read worse than that load's", c.Index)
	}
	return fmt.Sprintf("arrivals not as intended: the sends were more even than a Poisson process (dispersion %.2f, Poisson 1): the generator smoothed the random arrivals asked, so the latencies read better than that load's", c.Index)
}

func normalCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }
