package run

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/cpuset"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/reference"
	"github.com/iotbench/iotbench/internal/resources"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/units"
)

// The limits a calibration's figures must hold (docs/results.md, "Calibration"): the bars the
// project's own acceptance check (scripts/acceptance.sh) holds the instrument to.
const (
	CalibrationP50Limit  = 1500 * time.Microsecond
	CalibrationP99Limit  = 5 * time.Millisecond
	CalibrationRateLimit = 0.995
	// CalibrationOwnDelayLimit bounds the generator's own delay at p99, a part of what it
	// measures: held to the p99 error's limit, since against the freezing reference the frozen
	// tail hides a late generator from the p99 itself.
	CalibrationOwnDelayLimit = CalibrationP99Limit
)

// The reference servers a calibration measures: a fixed delay, and the same delay with a
// freeze of a tenth of each period, whose p99 (47 ms) lies in the frozen tail.
var (
	fixedDelay = reference.Shape{Delay: 2 * time.Millisecond}
	freezing   = reference.Shape{Delay: 2 * time.Millisecond, Freeze: 50 * time.Millisecond, Period: 500 * time.Millisecond}
)

// CalibrationPhases is how long each reference is loaded: a warm-up, then whole periods of the
// freeze measured.
type CalibrationPhases struct {
	Warmup, Duration time.Duration
}

// DefaultCalibration costs about 5.5 s a calibration: a look at its CPUs, two references, 0.5 s
// warm-up and 2 s each.
var DefaultCalibration = CalibrationPhases{Warmup: 500 * time.Millisecond, Duration: 2 * time.Second}

// Calibration is the instrument's error measuring the reference servers: measured minus true,
// the larger in size over the two.
type Calibration struct {
	// Where says where the reference servers ran.
	Where              string
	Rate               int
	P50Error, P99Error time.Duration
	// RateRatio is the lower of the two references' achieved over requested rate.
	RateRatio   float64
	OwnDelayP99 time.Duration
	// Disturbed says what other work took the watched CPUs while a reference was measured,
	// as a disturbed cell's warning does; empty: none that was measured.
	Disturbed string
	// Missed says which limits the figures missed; empty: within every one.
	Missed []string
	// Undecided says why the calibration decided nothing about the instrument: after a cell, every
	// attempt missed while other work took its CPUs, so its figures are the host's, and the rows keep
	// the calibration before it. Empty: it decided (within its limits, or missed).
	Undecided string
}

// Within says the figures held every limit.
func (c Calibration) Within() bool { return len(c.Missed) == 0 }

// interrupted says what kept the calibration from measuring the instrument as it is: other work
// on its CPUs, or the generator held up past the own delay's limit (a stall of tens of ms, too
// short for the 0.05 of a core over 2.5 s that names a disturbance: make run's calibration missed
// once with an own delay p99 of 27.4 ms, nothing named); "" when neither. A miss so explained is
// measured again; one that repeats in every attempt is the instrument's.
func (c Calibration) interrupted() string {
	if c.Disturbed != "" {
		return c.Disturbed
	}
	if c.OwnDelayP99 > CalibrationOwnDelayLimit {
		return fmt.Sprintf("the generator was held up (own delay p99 %s)", units.Millis(c.OwnDelayP99))
	}
	return ""
}

// String is the calibration in one line.
func (c Calibration) String() string {
	verdict := "within limits"
	if !c.Within() {
		verdict = "MISSED: " + strings.Join(c.Missed, "; ")
	}
	where, disturbed := "", ""
	if c.Where != "" {
		where = " (reference " + c.Where + ")"
	}
	if c.Disturbed != "" {
		disturbed = ", " + c.Disturbed
	}
	return fmt.Sprintf("p50 %+.3f ms, p99 %+.3f ms off the truth, %.2f%% of %d rps sent, own delay p99 %s%s%s: %s",
		ms(c.P50Error), ms(c.P99Error), 100*c.RateRatio, c.Rate, units.Millis(c.OwnDelayP99), where, disturbed, verdict)
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// stamp records c on row, with a warning when it missed its limits.
func (c Calibration) stamp(row *results.Row) {
	if !row.Loaded() {
		return
	}
	row.Calibrated, row.CalibrationWithin = true, c.Within()
	row.CalibrationP50Error, row.CalibrationP99Error = c.P50Error, c.P99Error
	row.CalibrationRateRatio, row.CalibrationOwnDelayP99 = c.RateRatio, c.OwnDelayP99
	if !c.Within() {
		w := "calibration missed its limits: " + strings.Join(c.Missed, "; ")
		if row.Warnings != "" {
			w = row.Warnings + "; " + w
		}
		row.Warnings = w
	}
}

// Calibrate measures the reference servers on loopback at rate for phases: in a helper process
// pinned to targetCPUs, as a target is, started from exe (this binary's `iotbench reference`);
// in this process when either is empty or the helper cannot start. Other work on watchedCPUs
// (none: not watched) while it measures is named in its Disturbed.
func Calibrate(ctx context.Context, rate int, phases CalibrationPhases, exe string, targetCPUs, watchedCPUs []int) (Calibration, error) {
	place := inProcess
	if exe != "" && len(targetCPUs) > 0 {
		place = pinnedHelper(exe, targetCPUs)
	}
	return calibrateAt(ctx, rate, phases, place, watchedCPUs)
}

// placement starts a reference server somewhere; stop ends it and returns the CPU time its
// process spent, when it had one of its own.
type placement struct {
	where string
	start func(shape reference.Shape) (url string, stop func() time.Duration, err error)
}

var inProcess = placement{where: "in this process", start: func(shape reference.Shape) (string, func() time.Duration, error) {
	srv, err := reference.Start(shape)
	if err != nil {
		return "", nil, err
	}
	return srv.URL(), func() time.Duration { srv.Close(); return 0 }, nil
}}

// neighbours is one watch, from its start, of the work on some CPUs of this machine that is
// neither this process's nor the reference helper's.
type neighbours struct {
	cpus  []int
	host  resources.HostWatch
	own   time.Duration
	start time.Time
}

// watchNeighbours starts a watch of cpus; nil when there are none, or their counters cannot be
// read (nothing is judged then).
func watchNeighbours(cpus []int) *neighbours {
	if len(cpus) == 0 {
		return nil
	}
	host, err := resources.ThisHost.Watch(cpus)
	if err != nil {
		return nil
	}
	own, err := resources.OwnCPU()
	if err != nil {
		return nil
	}
	return &neighbours{cpus: cpus, host: host, own: own, start: time.Now()}
}

// disturbance is what other work took the CPUs since the watch began, as a cell's warning says
// it ("": none, or not watched); helperCPU is the reference helper's own time, whose names the
// CPUs.
func (n *neighbours) disturbance(helperCPU time.Duration, whose string) string {
	if n == nil {
		return ""
	}
	own, err := resources.OwnCPU()
	if err != nil {
		return ""
	}
	others, steal, err := n.host.Others(own - n.own + helperCPU)
	if err != nil {
		return ""
	}
	return resources.Disturbance(time.Since(n.start), others, steal, n.cpus, whose)
}

// pinnedHelper runs each reference server in `exe reference`, pinned to cpus.
func pinnedHelper(exe string, cpus []int) placement {
	return placement{where: "pinned to CPUs " + cpuset.Format(cpus) + ", the targets'", start: func(shape reference.Shape) (string, func() time.Duration, error) {
		cmd := exec.Command(exe, referenceArgs(shape, cpus)...)
		stdin, err := cmd.StdinPipe()
		if err != nil {
			return "", nil, err
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			return "", nil, err
		}
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			return "", nil, err
		}
		stop := func() time.Duration {
			stdin.Close()
			cmd.Wait()
			return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		}
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil {
			stop()
			return "", nil, fmt.Errorf("the reference helper said nothing: %v %s", err, strings.TrimSpace(stderr.String()))
		}
		return strings.TrimSpace(line), stop, nil
	}}
}

// referenceArgs are the arguments of `iotbench reference` serving shape pinned to cpus.
func referenceArgs(shape reference.Shape, cpus []int) []string {
	return []string{"reference", "--delay", shape.Delay.String(), "--freeze", shape.Freeze.String(), "--period", shape.Period.String(), "--cpus", cpuset.Format(cpus)}
}

// calibrateAt measures the reference servers, placed by place, at rate for phases, watching
// watchedCPUs (none: not watched); a helper that cannot start leaves the calibration to this process, and
// says so.
func calibrateAt(ctx context.Context, rate int, phases CalibrationPhases, place placement, watchedCPUs []int) (Calibration, error) {
	c := Calibration{Where: place.where, Rate: rate, RateRatio: 1}
	for _, shape := range []reference.Shape{fixedDelay, freezing} {
		others := watchNeighbours(watchedCPUs)
		url, stop, err := place.start(shape)
		if err != nil && place.where != inProcess.where {
			c.Where = fmt.Sprintf("in this process: the helper %s failed: %v", place.where, err)
			place = inProcess
			url, stop, err = place.start(shape)
		}
		if err != nil {
			return c, fmt.Errorf("starting the reference server: %w", err)
		}
		res, err := measureReference(ctx, url, shape, rate, phases)
		helperCPU := stop()
		if err != nil {
			return c, err
		}
		if d := others.disturbance(helperCPU, "the generator's and the reference server's"); d != "" {
			c.Disturbed = d
		}
		c.P50Error = larger(c.P50Error, res.Latency.P50-shape.Quantile(0.50))
		c.P99Error = larger(c.P99Error, res.Latency.P99-shape.Quantile(0.99))
		c.RateRatio = min(c.RateRatio, res.AchievedRate()/float64(rate))
		c.OwnDelayP99 = max(c.OwnDelayP99, res.OwnDelay.P99)
		if res.Errors > 0 {
			c.Missed = append(c.Missed, fmt.Sprintf("%d of %d requests to the reference failed", res.Errors, res.Requests))
		}
	}
	c.judge()
	return c, nil
}

// judge adds to Missed each limit the figures miss.
func (c *Calibration) judge() {
	if c.P50Error.Abs() > CalibrationP50Limit {
		c.Missed = append(c.Missed, fmt.Sprintf("p50 off by %.3f ms (limit %s)", ms(c.P50Error), units.Millis(CalibrationP50Limit)))
	}
	if c.P99Error.Abs() > CalibrationP99Limit {
		c.Missed = append(c.Missed, fmt.Sprintf("p99 off by %.3f ms (limit %s)", ms(c.P99Error), units.Millis(CalibrationP99Limit)))
	}
	if c.OwnDelayP99 > CalibrationOwnDelayLimit {
		c.Missed = append(c.Missed, fmt.Sprintf("own delay p99 %s (limit %s)", units.Millis(c.OwnDelayP99), units.Millis(CalibrationOwnDelayLimit)))
	}
	if c.RateRatio < CalibrationRateLimit {
		c.Missed = append(c.Missed, fmt.Sprintf("%.2f%% of the rate sent (limit %.1f%%)", 100*c.RateRatio, 100*CalibrationRateLimit))
	}
}

// larger is whichever of a and b is the larger in size.
func larger(a, b time.Duration) time.Duration {
	if b.Abs() > a.Abs() {
		return b
	}
	return a
}

func measureReference(ctx context.Context, url string, shape reference.Shape, rate int, phases CalibrationPhases) (load.Result, error) {
	return load.Run(ctx, load.Config{
		Request: load.Request{Method: "GET", URL: url}, Check: load.NewCheck(`"ok"`),
		Model:  load.Model{Rate: rate, ExpectedLatency: shape.Quantile(1)},
		Warmup: phases.Warmup, Duration: phases.Duration, Timeout: 5 * time.Second,
	})
}

// calibrationRate is the rate a run's calibration loads the references at: the run's largest
// open-loop rate, within what keeps it cheap and its p99 well sampled (1,000 answers or more).
func calibrationRate(p *plan.Plan) int {
	rate := 0
	for _, c := range p.Cells {
		rate = max(rate, c.Load.Model.Rate)
	}
	return min(max(rate, 500), 2000)
}

// CalibrateEvery is how many cells of a run at one load pass between calibrations: a matrix
// longer than that is calibrated again after every CalibrateEvery-th cell, so that no row is
// more than that many cells (15–20 minutes at the default phases) from a calibration. A
// calibration costs about 5 s, 0.5% of those cells' time. A --find-max run is calibrated before
// its first search and after its last only: its steps are recorded with the target running.
const CalibrateEvery = 20

// calibrateEvery is CalibrateEvery, lowered by tests.
var calibrateEvery = CalibrateEvery

// calibrator runs a run's calibrations and stamps each row with the latest one measured before
// the row is written.
type calibrator struct {
	log  io.Writer
	rate int
	cpus []int // the targets', where the reference runs; nil: in this process
	// watched are the CPUs watched for other work (the generator's and the targets'); nil: none.
	watched []int
	run     func(ctx context.Context, rate int, targetCPUs, watchedCPUs []int) (Calibration, error)
	// settle waits until the watched CPUs are quiet (settle); nil: it does not wait.
	settle func(ctx context.Context) (waited time.Duration, disturbed string)
	// latest is the latest calibration measured; nil when none was.
	latest *Calibration
	// missed counts the calibrations that missed their limits.
	missed int
	// cellsSince counts the cells measured since the latest calibration.
	cellsSince int
}

// measure runs a calibration, when, and says what it found: loudly when it missed its limits.
// It returns the calibration; nil when none could be measured.
func (c *calibrator) measure(ctx context.Context, when string) *Calibration {
	run := func() (Calibration, error) {
		c.waitQuiet(ctx, when)
		return c.run(ctx, c.rate, c.cpus, c.watched)
	}
	cal, err := run()
	// Measured again, as a disturbed cell is: a neighbour's burst, or a stall of the generator
	// it measured itself, is not the instrument's error. Any other miss stands.
	for attempt := 1; err == nil && !cal.Within() && cal.interrupted() != "" && attempt < calibrationAttempts; attempt++ {
		fmt.Fprintf(c.log, "calibration %s missed its limits (%s) while %s: measured again\n", when, strings.Join(cal.Missed, "; "), cal.interrupted())
		cal, err = run()
	}
	if err != nil {
		if ctx.Err() == nil {
			fmt.Fprintf(c.log, "calibration %s: not measured: %v\n", when, err)
		}
		return nil
	}
	// After cells, a calibration is one check more of the instrument those cells' own checks
	// (disturbance, own delay, arrivals) already judged; the hypervisor's steal here took
	// 0.80–0.84 cores through all three attempts of the calibration after a 45-minute run, and
	// 0.82–0.90 through those before the next run's first cell, 2 minutes later: the first put
	// every row of that run in doubt. A miss that every attempt met with other work on the CPUs
	// measured the host, not the instrument: it decides nothing, and the rows keep the
	// calibration before it. Before the first cell nothing has checked the instrument yet: a miss
	// there stands, whatever took its CPUs.
	if when != beforeFirst && !cal.Within() && cal.Disturbed != "" {
		cal.Undecided = fmt.Sprintf("every attempt missed its limits while %s", cal.Disturbed)
		fmt.Fprintf(c.log, "calibration %s: not decided: %s (%s): the rows keep the calibration before it\n", when, cal.Undecided, strings.Join(cal.Missed, "; "))
		return &cal
	}
	switch when {
	case afterLast:
	case beforeFirst:
		c.latest, c.cellsSince = &cal, 0
	default:
		// Between cells, when a cell's row is recorded: that cell was measured before it.
		c.latest, c.cellsSince = &cal, -1
	}
	if cal.Within() {
		fmt.Fprintf(c.log, "calibration %s: %s\n", when, cal)
		return &cal
	}
	c.missed++
	fmt.Fprintf(c.log, "CALIBRATION %s MISSED ITS LIMITS: %s\n  the instrument measured a server of known latency wrongly on this machine now: %s\n", strings.ToUpper(when), cal, suspect(when))
	return &cal
}

// waitQuiet waits, before a calibration, for the watched CPUs to be quiet, and says so when that
// took longer than one look or never came.
func (c *calibrator) waitQuiet(ctx context.Context, when string) {
	if c.settle == nil {
		return
	}
	switch waited, disturbed := c.settle(ctx); {
	case disturbed != "":
		fmt.Fprintf(c.log, "calibration %s: its CPUs were not quiet within %s (%s): measured all the same\n", when, waited, disturbed)
	case waited > quietLook:
		fmt.Fprintf(c.log, "calibration %s: waited %s for other work on its CPUs to stop\n", when, waited)
	}
}

// A calibration measures the instrument, not what the cell before it left behind (its target's
// container being removed, the kernel's work on its sockets and memory): a burst too short for
// the disturbance of its 2 s to name can still move its p99 by milliseconds. Its CPUs must first
// be quiet, other work below resources.Disturbed, over one look of quietLook; it waits quietWait
// at most, then measures all the same.
const (
	quietLook = 500 * time.Millisecond
	quietWait = 10 * time.Second
)

// settle looks at the CPUs, a look at a time (look: "" when they were quiet over it, else
// what disturbed them), until one is quiet or wait has passed; it returns the time looked and
// the last look's disturbance when none was quiet.
func settle(ctx context.Context, look func(context.Context) string, wait time.Duration) (time.Duration, string) {
	var waited time.Duration
	for {
		d := look(ctx)
		waited += quietLook
		if d == "" || waited >= wait || ctx.Err() != nil {
			return waited, d
		}
	}
}

// quietOn is a calibrator's settle for cpus: looks of quietLook at the work on them that is not
// this process's, for wait at most.
func quietOn(cpus []int, wait time.Duration) func(context.Context) (time.Duration, string) {
	look := func(ctx context.Context) string {
		others := watchNeighbours(cpus)
		if others == nil {
			return ""
		}
		select {
		case <-ctx.Done():
		case <-time.After(quietLook):
		}
		return others.disturbance(0, "the generator's and the targets'")
	}
	return func(ctx context.Context) (time.Duration, string) { return settle(ctx, look, wait) }
}

// calibrationAttempts bounds how often a calibration that missed its limits while disturbed is
// measured, as a disturbed cell is.
const calibrationAttempts = 3

// SuspectSinceLast is what a calibration after the last cell that missed its limits puts in
// doubt, and where that is kept: the log says it, and the run's end again.
const SuspectSinceLast = "the figures measured since the calibration before it are suspect (their rows written again, marked calibration_within_limits=false)"

// suspect says which figures a calibration missed at when puts in doubt.
func suspect(when string) string {
	if when == afterLast {
		return SuspectSinceLast
	}
	return "its figures are suspect (rows marked calibration_within_limits=false)"
}

// The calibrations of a run.
const (
	beforeFirst = "before the first cell"
	afterLast   = "after the last cell"
)

// stamp records the latest calibration on row.
func (c *calibrator) stamp(row *results.Row) {
	if !row.Part() {
		c.cellsSince++
	}
	if c.latest != nil {
		c.latest.stamp(row)
	}
}

// restamp records last, a calibration after the rows that missed its limits, on the rows of the
// cells measured since the latest one before it: the file's last rows, and rows' (the run's rows
// in memory). A row that carries a missed calibration already keeps it.
func (c *calibrator) restamp(w *results.Writer, rows []results.Row, last Calibration) error {
	mark := func(rs []results.Row) {
		// From the end: a cell's stage and request rows follow its own row.
		for i, cells := len(rs)-1, c.cellsSince; i >= 0 && cells > 0; i-- {
			if !rs[i].Calibrated || rs[i].CalibrationWithin {
				last.stamp(&rs[i])
			}
			if !rs[i].Part() {
				cells--
			}
		}
	}
	mark(rows)
	return w.Rewrite(mark)
}

// afterCell is the calibration between cells, after the n-th.
func afterCell(n int) string { return fmt.Sprintf("after cell %d", n) }
