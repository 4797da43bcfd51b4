// Package sampling checks the samples a cell's figures rest on, as Lancet (USENIX ATC'19) does:
// that the requests were sent as the intended arrival process would send them (arrivals.go), and
// how independent the measured phase's seconds are, the effective number of them an interval may
// count (independence.go). Both are pure functions of small summaries the engine and the
// timeline already keep: nothing here measures anything.
package sampling

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/iotbench/iotbench/internal/arrival"
	"github.com/iotbench/iotbench/internal/units"
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

// Dispersion summarizes the counts of the windows lying wholly within a phase of length du, and
// the same counts merged into windows twice, four times… as wide while MinWindows of them fit: a
// stall and its catch-up show at the width of their clump.
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
	d := summarize(c.counts[:n], c.width)
	wide := Counts{width: c.width, counts: slices.Clone(c.counts[:n])}
	for len(wide.counts)/2 >= MinWindows {
		wide.counts = wide.counts[:len(wide.counts)&^1] // an odd last window would merge alone
		wide.merge()
		d.Wider = append(d.Wider, summarize(wide.counts, wide.width))
	}
	return d
}

// summarize is the mean and variance of counts in windows of width.
func summarize(counts []uint32, width time.Duration) Dispersion {
	var sum, sq float64
	for _, x := range counts {
		sum += float64(x)
	}
	mean := sum / float64(len(counts))
	for _, x := range counts {
		sq += (float64(x) - mean) * (float64(x) - mean)
	}
	return Dispersion{Width: width, Windows: len(counts), Mean: mean, Variance: sq / float64(len(counts)-1)}
}

// Dispersion is the counts of sends in equal windows of Width: how many windows, their mean and
// variance; Wider, the same sends in wider windows (Counts.Dispersion).
type Dispersion struct {
	Width          time.Duration
	Windows        int
	Mean, Variance float64
	Wider          []Dispersion `json:",omitempty"`
}

// Index is the variance over the mean: 1 for a Poisson process at any window's width, near 0
// for evenly spaced sends, above 1 for bursts; NaN when nothing was counted.
func (d Dispersion) Index() float64 {
	if d.Windows < 2 || d.Mean <= 0 {
		return math.NaN()
	}
	return d.Variance / d.Mean
}

// Spread is how far the sends ran ahead of or behind their mean pace, in time: a window's
// standard deviation of requests at the phase's rate (Mean per Width). A clump of sends that
// should have been spread over s spreads about s; a Poisson process's grows as the square root of
// the window's width.
func (d Dispersion) Spread() time.Duration {
	if d.Windows < 2 || d.Mean <= 0 {
		return 0
	}
	return time.Duration(math.Sqrt(d.Variance) / d.Mean * float64(d.Width))
}

// MinWindows is the fewest windows the check judges: with fewer, a Poisson process's index
// varies by more than the margins below.
const MinWindows = 50

// The arrival check's bars on the dispersion index. Evenly spaced sends fail when, at some
// window's width, their index is UniformMaxIndex or more (half of a Poisson process's 1: clumps a
// uniform schedule does not have) and their spread reaches the own delay the generator may add
// (the check's tolerance): the clumps a target then meets are a visible part of its latency. Below
// that spread they are not (at 36,000 rps a host's scheduling gave indexes 0.5–1.5 with spreads
// under 0.5 ms), and a bar on the index alone grew stricter with the rate, whatever the target.
// A Poisson process passes unless its index is off 1 both
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
	// dispersion index in windows of about ten requests (NaN when not judged).
	Process arrival.Process
	Index   float64
	// Clump is, for uniform sends that do not fit, the windows at whose width their spread
	// was widest; Tolerance the spread allowed.
	Clump     Dispersion
	Tolerance time.Duration
	// Judged is false when there was no process to test against or too few windows.
	Judged, Fits bool
}

// JudgeArrivals tests the achieved sends d against the intended process, uniform sends' clumps
// against tolerance (the generator's own delay allowed).
func JudgeArrivals(process arrival.Process, d Dispersion, tolerance time.Duration) ArrivalCheck {
	c := ArrivalCheck{Process: process.Or(), Index: d.Index(), Tolerance: tolerance}
	if d.Windows < MinWindows || math.IsNaN(c.Index) {
		return c
	}
	switch c.Process {
	case arrival.Uniform:
		c.Judged, c.Fits = true, true
		for _, w := range append([]Dispersion{d}, d.Wider...) {
			if w.Index() >= UniformMaxIndex && w.Spread() >= tolerance && w.Spread() > c.Clump.Spread() {
				c.Fits, c.Clump = false, w
			}
		}
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
		return fmt.Sprintf("arrivals not as intended: the sends came in clumps (dispersion %.2f in windows of %s; evenly spaced is near 0, a Poisson process 1), running %s ahead of or behind their pace where the generator may add %s: the target met a burstier load than the evenly spaced one asked, so its latencies read worse than that load's",
			c.Clump.Index(), units.Millis(c.Clump.Width), units.Millis(c.Clump.Spread()), units.Millis(c.Tolerance))
	case c.Index > 1:
		return fmt.Sprintf("arrivals not as intended: the sends were burstier than a Poisson process (dispersion %.2f, Poisson 1): the target met a harsher load than asked, so its latencies read worse than that load's", c.Index)
	}
	return fmt.Sprintf("arrivals not as intended: the sends were more even than a Poisson process (dispersion %.2f, Poisson 1): the generator smoothed the random arrivals asked, so the latencies read better than that load's", c.Index)
}

func normalCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }
