// Package run owns "a run": from a setup (what to measure, where, with which generators, into
// which file) to its outcome (the rows, the maxima found, the paired verdicts, whether it was
// interrupted). The command line only turns flags into a Setup and renders the Outcome; the
// published experiments (reproduce) are a loop over the same Execute, so every run leaves the
// same files: results CSV, timeline, histograms, target logs.
//
// The run's effects on the world (connecting an engine, this machine's CPUs, pinning, the
// executable, the clock) are injected through Effects, so that the package is tested against a
// fake engine and in-process servers, without Docker or a process.
package run

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/iotbench/iotbench/internal/bench"
	"github.com/iotbench/iotbench/internal/compare"
	"github.com/iotbench/iotbench/internal/cpuset"
	"github.com/iotbench/iotbench/internal/downstream"
	"github.com/iotbench/iotbench/internal/exitcode"
	"github.com/iotbench/iotbench/internal/kube"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/loadspec"
	"github.com/iotbench/iotbench/internal/maxrate"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/profile"
	"github.com/iotbench/iotbench/internal/progress"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/timeline"
)

// Setup is a run with every choice made: what is measured (a scenario or a running service),
// on which engine, with which generators, into which file.
type Setup struct {
	// Exactly one of Scenario and Service says what is measured.
	Scenario *Scenario
	Service  *Service

	// Engine is the Docker engine the targets run on (a DOCKER_HOST value, an ssh:// address or a
	// context's name); empty: the environment's.
	Engine string
	// Kube, when set, runs the targets and the generator shards on a Kubernetes cluster instead
	// (kube.go); Engine is then the engine that builds the images.
	Kube *kube.Options
	// CABundle is the PEM bundle image builds trust.
	CABundle string

	// Generators is how many generator shards share each cell's load; 0 or 1: this process.
	Generators int
	// GeneratorHosts are engines whose containers run the shards (generatorhost.go).
	GeneratorHosts []string

	// Seed shuffles the targets' order in each round; nil: a new one (or the resumed file's).
	Seed *int64
	// Where the rows go, one of: Out, a folder for a new file named after the run's start;
	// Resume, the file of an interrupted run, appended to (its seed taken); File, a file of its
	// own, created or, when it exists, continued (reproduce's runs).
	Out, Resume, File string

	// FindMax searches each target's maximum sustainable rate instead of measuring at one.
	FindMax *FindMax
	// Gate judges a paired run (Scenario.Baseline or Service.BaselineURL).
	Gate *Gate
	// NeedsCPUs is how many target CPUs the run needs: on a host that gives fewer, every cell is
	// recorded skipped and nothing is started.
	NeedsCPUs int

	// SkipCalibration skips the known-answer calibration measured before the first cell and
	// after the last (calibrate.go).
	SkipCalibration bool
	// KeepDisturbed keeps a disturbed cell's first measurement instead of measuring it again
	// (bench.Runner.KeepDisturbed).
	KeepDisturbed bool

	// History, when set, keeps each row in a performance history as it is recorded (run --history).
	History History

	// Name names the run in its own messages (an experiment's run); empty: none.
	Name string
	// Log hears what the run does and warns of; Progress the steps of every cell (nil: Log).
	// With Terminal set, both go through a status line on that terminal, which shows where the
	// run is, and is taken away when Execute returns.
	Log, Progress io.Writer
	Terminal      *Terminal
}

// Terminal is where a run draws its status line: a terminal as it is (the line writes its own
// control codes), and its width.
type Terminal struct {
	W     io.Writer
	Width func() int
}

// History keeps rows (internal/history's Recorder).
type History interface {
	Add(ctx context.Context, rows []results.Row) error
}

// Scenario is a run of a scenario of a scenario matrix.
type Scenario struct {
	// File is the scenario matrix; Name the scenario (empty: the file's default).
	File, Name string
	Overrides  plan.Overrides
	// Baseline, when set, is a checkout of the baseline (its File and build contexts), measured
	// round by round beside this one; AA adds A/A control rounds.
	Baseline string
	AA       int
}

// Service is a run against a service already listening on loopback: trials of one request.
type Service struct {
	URL string
	// Name names its target; empty: the URL's host:port.
	Name   string
	Method string
	Header http.Header
	Body   []byte
	// Contains are what a successful answer's body must hold.
	Contains []string
	// Load are the command line's load settings (plan.AdHoc).
	Load loadspec.Spec
	// BaselineURL, when set, is the baseline service, measured round by round beside URL.
	BaselineURL string
	AA          int
	// CA is the PEM file of the CA that signed the service's certificate, over TLS.
	CA string
}

// servicePool is the CA a service over TLS is trusted by (nil in plaintext), from s.CA.
func (s *Service) servicePool(p *plan.Plan) (*x509.CertPool, error) {
	tls := len(p.Cells) > 0 && p.Cells[0].Load.Request.Protocol.TLS()
	switch {
	case !tls && s.CA != "":
		return nil, exitcode.Flag("ca", s.CA, fmt.Errorf("a CA is for a service over TLS: give an https:// --url (or --protocol https or h2)"))
	case !tls:
		return nil, nil
	case s.CA == "":
		return nil, exitcode.Usagef("--url %s is over TLS: give --ca FILE, the PEM CA that signed the service's certificate (the generator trusts nothing else)", s.URL)
	}
	pem, err := os.ReadFile(s.CA)
	if err != nil {
		return nil, exitcode.Flag("ca", s.CA, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, exitcode.Flag("ca", s.CA, fmt.Errorf("no PEM certificate in it"))
	}
	return pool, nil
}

// adHoc is the plan's view of the service at url.
func (s *Service) adHoc(url, name string) plan.AdHoc {
	return plan.AdHoc{
		URL: url, Name: name, Request: load.Request{Method: s.Method, Header: s.Header, Body: s.Body}, Check: load.NewCheck(s.Contains...),
		Load: s.Load,
	}
}

// FindMax is how each target's maximum sustainable rate is searched.
type FindMax struct {
	bench.MaxSearch
}

// Outcome is what a run did: every row of its file (resumed ones first), and what it answers.
type Outcome struct {
	Plan *plan.Plan
	// Path is the results file.
	Path string
	Rows []results.Row
	// Found are the maxima of a find-max run, one a search.
	Found   []maxrate.Outcome
	FindMax *FindMax
	// Paired are a paired run's verdicts (nil otherwise).
	Paired *compare.PairedResult
	Gate   *Gate
	// Interrupted: the run was cancelled; the rows are those recorded before.
	Interrupted bool
	// Skipped is why no cell was loaded (a host with too few CPUs); empty otherwise.
	Skipped string
	// CalibrationsMissed counts the run's calibrations that missed their limits.
	CalibrationsMissed int
	// LastCalibrationMissed is the calibration after the last cell when it missed its limits
	// (the rows since the one before it carry it too), for the run's end to say it.
	LastCalibrationMissed string
	// LastCalibrationUndecided says why the calibration after the last cell decided nothing
	// (Calibration.Undecided), for the run's end to say it; empty when it decided.
	LastCalibrationUndecided string
}

// Err is the outcome's exit status as an error: nil when every cell is valid (a find-max run:
// every search found a maximum; a paired run: the gate passed), else an exitcode error.
func (o *Outcome) Err() error {
	if o.Paired != nil {
		return o.Gate.verdict(*o.Paired)
	}
	if o.FindMax != nil {
		for _, f := range o.Found {
			if f.Failed != "" || f.Max == 0 {
				return exitcode.ErrInvalidCells
			}
		}
		return nil
	}
	for _, row := range o.Rows {
		if !row.Valid {
			return exitcode.ErrInvalidCells
		}
	}
	return nil
}

// Execute runs s with the effects of rs, in three stages as a k6 test is built: prepare (the
// plan, the engine, the generators, the results file), measure (every cell, each row handed to
// the sinks as it ends: calibration, the file, the history) and judge (the last calibration, a
// paired run's verdicts). The outcome holds what was recorded even when the error is not nil (an
// interrupted run, a row that could not be written).
func (rs *Runs) Execute(ctx context.Context, s Setup) (*Outcome, error) {
	s, status, closeTerminal := s.onTerminal()
	defer closeTerminal()
	if s.FindMax != nil && s.Resume != "" {
		return nil, exitcode.Usagef("--resume continues a run at one load; a --find-max search cannot be resumed: start it again")
	}
	st, err := rs.prepareRun(ctx, s, status)
	if err != nil {
		return nil, err
	}
	defer st.close()
	if done, err := st.nothingToMeasure(); done {
		return st.out, err
	}
	if err := rs.readyToMeasure(st); err != nil {
		return nil, err
	}
	rs.calibrate(ctx, st)
	defer st.judgeCalibration(ctx) // for a run that ends early
	if err := st.measure(ctx); err != nil {
		return st.out, err
	}
	st.judge(ctx)
	return st.out, nil
}

// onTerminal routes s's log and progress through a status line when it has a terminal; the
// returned function takes the line away.
func (s Setup) onTerminal() (Setup, bench.Status, func()) {
	if s.Log == nil {
		s.Log = io.Discard
	}
	if s.Progress == nil {
		s.Progress = s.Log
	}
	if t := s.Terminal; t != nil {
		l := progress.New(t.W, t.Width)
		s.Log, s.Progress = l, l
		return s, l, func() { l.Close() }
	}
	return s, nil, func() {}
}

// staged is a run between its stages: what prepareRun made, for measure and judge to use.
type staged struct {
	s      Setup
	p      *plan.Plan
	r      *bench.Runner
	f      *resultsFile
	out    *Outcome
	remote string
	// sinks take each row as its cell ends, in order (sink).
	sinks []sink
	// recorded are the rows as written (calibration stamped), in the order they were.
	recorded []results.Row
	// judgeCalibration measures the calibration after the last cell, once (rs.calibrate).
	judgeCalibration func(context.Context)
	closers          []func()
}

// A sink takes a row as its cell ends, before the sinks after it: it may change it (a
// calibration's stamp), keep it (the results file, the history), or stop the run with an error.
type sink func(*results.Row) error

// record hands row to every sink in order.
func (st *staged) record(row results.Row) error {
	for _, sk := range st.sinks {
		if err := sk(&row); err != nil {
			return err
		}
	}
	st.recorded = append(st.recorded, row)
	return nil
}

func (st *staged) close() {
	for i := len(st.closers) - 1; i >= 0; i-- {
		st.closers[i]()
	}
}

// prepareRun is the first stage: the plan and its engine, the generators (a generator host that
// cannot be used stops the run before any file is written), the results file and its sinks.
func (rs *Runs) prepareRun(ctx context.Context, s Setup, status bench.Status) (st *staged, err error) {
	p, lifecycle, remote, meta, err := rs.prepare(ctx, s)
	if err != nil {
		return nil, err
	}
	var serviceCA *x509.CertPool
	if s.Service != nil {
		if serviceCA, err = s.Service.servicePool(p); err != nil {
			return nil, err
		}
	}
	st = &staged{s: s, p: p, remote: remote, judgeCalibration: func(context.Context) {}}
	made := st // st is nil once an error is returned
	defer func() {
		if err != nil {
			made.close()
		}
	}()
	st.r = &bench.Runner{Lifecycle: lifecycle, ServiceCA: serviceCA, Meta: meta, Log: s.Progress, Status: status, RemoteHost: remote,
		// A service the user started is measured even when its answers fail their check: its
		// error ratio under load is what they came for.
		WarnUnverified: s.Service != nil, KeepDisturbed: s.KeepDisturbed}
	// A run that loads something pins the generator to its CPUs, or, where the plan gives it none (a --url run), to
	// those it was allowed (taskset's): a no-op for the affinity, but pinning also gives the Go
	// scheduler the spare Ps the load loop needs. With one P, each wait of the loop in epoll longer
	// than the runtime's 20 µs tick handed the P to another thread and back: at 3,000 rps, 1.4
	// context switches and 3.6 futex calls a request, 30% more CPU a request than with spare Ps.
	if lifecycle != nil {
		generatorCPUs := p.GeneratorCPUs
		if len(generatorCPUs) == 0 {
			if generatorCPUs, err = rs.Effects.AllowedCPUs(); err != nil {
				return nil, err
			}
		}
		if err := rs.Effects.Pin(generatorCPUs); err != nil {
			return nil, err
		}
		st.r.Downstream = rs.downstreamHelper(generatorCPUs)
		closeHosts, err := rs.useGenerators(ctx, s, st.r, p)
		if err != nil {
			return nil, err
		}
		st.closers = append(st.closers, closeHosts)
	}
	if st.f, err = rs.openResults(s); err != nil {
		return nil, err
	}
	st.closers = append(st.closers, st.f.close)
	st.r.Seed, st.r.Resumed, st.r.Record = st.f.seed, st.f.resumed, st.record
	st.sinks = append(st.sinks, func(row *results.Row) error { return st.f.w.Write(*row) })
	if s.History != nil {
		st.sinks = append(st.sinks, func(row *results.Row) error {
			// The row is safe in the results file: a store that fails costs the history a
			// point (history add FILE adds it later), not the run.
			if err := s.History.Add(ctx, []results.Row{*row}); err != nil {
				fmt.Fprintf(s.Log, "warning: history: %v (iotbench history add %s adds the rows later)\n", err, st.f.path)
			}
			return nil
		})
	}
	st.r.LogDir = strings.TrimSuffix(st.f.path, filepath.Ext(st.f.path)) + ".logs"
	st.out = &Outcome{Plan: p, Path: st.f.path, Rows: st.f.resumed, FindMax: s.FindMax, Gate: s.Gate}
	return st, nil
}

// downstreamHelper starts the downstream service in a helper process of this binary, pinned to
// the generator's CPUs at the lowest priority: its work, heavier than the generator's a call,
// then waits for the load loop rather than delay it, and its CPU time is not the generator's.
// One that cannot start leaves the service to this process, which says so.
func (rs *Runs) downstreamHelper(cpus []int) func() (downstream.Service, string, error) {
	return func() (downstream.Service, string, error) {
		where := "a helper process on CPUs " + cpuset.Format(cpus) + ", the generator's, at the lowest priority"
		exe, err := rs.Effects.Executable()
		var h *downstream.Helper
		if err == nil {
			if h, err = downstream.StartHelper(exe, cpus); err == nil {
				return h, where, nil
			}
		}
		s, serr := downstream.Start(downstream.Delay)
		return s, fmt.Sprintf("in this process: %s failed: %v", where, err), serr
	}
}

// readyToMeasure is what only a run that measures needs: the generator's GC held off, the
// timeline and histogram files, an adaptive run's rounds, the run announced.
func (rs *Runs) readyToMeasure(st *staged) error {
	s, p := st.s, st.p
	warnGeneratorCapacity(s.Log, p, st.r.Meta.HostCPU, rs.Effects.AllowedCPUs)
	st.closers = append(st.closers, load.GeneratorGC())
	detail, err := openDetail(st.f.path)
	if err != nil {
		return err
	}
	st.closers = append(st.closers, detail.close)
	st.r.Detail, st.r.Unmeasured = detail.keep, detail.tw.Write
	profiles := timeline.Dir(st.f.path)
	st.r.Profiled = func(r profile.Record) error {
		if err := profile.Write(profiles, &r); err != nil {
			return err
		}
		fmt.Fprintf(s.Log, "  kept in %s; its flame graph is in the HTML report\n", filepath.Join(profiles, r.File))
		return nil
	}
	if s.Gate != nil && s.Gate.Until != nil {
		st.r.More = s.Gate.more(s.Log, p)
	}
	announce(s.Log, s, p, st.f)
	return nil
}

// nothingToMeasure says whether the run ends before measuring: its file holds every cell, or the
// host is too small for it (every cell then recorded skipped).
func (st *staged) nothingToMeasure() (bool, error) {
	s, p := st.s, st.p
	if cellRows(st.f.resumed) >= len(p.Cells) && s.File != "" {
		s.say("all %d cell(s) recorded in %s", len(p.Cells), st.f.path)
		return true, nil
	}
	if st.r.Lifecycle != nil {
		return false, nil
	}
	st.out.Skipped = fmt.Sprintf("needs %d target CPUs; this host gives targets %d (%d CPUs, the generator keeps the others)",
		s.NeedsCPUs, len(p.TargetCPUs), len(p.TargetCPUs)+len(p.GeneratorCPUs))
	s.say("needs a larger host: %s", st.out.Skipped)
	rows, err := st.r.Skip(p, st.out.Skipped)
	st.out.Rows = append(st.out.Rows, rows...)
	return true, err
}

// calibrate puts the calibration first among st's sinks: measured before the first cell, again
// between the cells of a long matrix (no target running: the cell just finished is as near to
// that calibration as to the one before), each row stamped with the latest; the one after the
// last cell, when it misses its limits, is written into the rows measured since the one before.
func (rs *Runs) calibrate(ctx context.Context, st *staged) {
	s, p := st.s, st.p
	if s.SkipCalibration {
		return
	}
	cal := &calibrator{log: s.Log, rate: calibrationRate(p), run: rs.Effects.Calibrate}
	// Placed as a target is: on the targets' CPUs of this machine. A remote engine's targets
	// and a running service's are out of reach: the reference runs here.
	if s.Scenario != nil && st.remote == "" {
		cal.cpus = p.TargetCPUs
		cal.watched = cpuset.Union(p.GeneratorCPUs, p.TargetCPUs)
		cal.settle = quietOn(cal.watched, quietWait)
	}
	cal.measure(ctx, beforeFirst)
	cells, remaining := 0, len(p.Cells)-cellRows(st.f.resumed)
	stamp := func(row *results.Row) error {
		if s.FindMax == nil && row.Stage == 0 {
			if cells++; cells%calibrateEvery == 0 && cells < remaining {
				cal.measure(ctx, afterCell(cells))
			}
		}
		cal.stamp(row)
		return nil
	}
	st.sinks = append([]sink{stamp}, st.sinks...)
	done := false
	st.judgeCalibration = func(ctx context.Context) {
		if done {
			return
		}
		done = true
		if ctx.Err() == nil {
			switch last := cal.measure(ctx, afterLast); {
			case last == nil || last.Within():
			case last.Undecided != "":
				st.out.LastCalibrationUndecided = last.Undecided
			default:
				st.out.LastCalibrationMissed = last.String()
				if err := cal.restamp(st.f.w, st.out.Rows, *last); err != nil {
					fmt.Fprintf(s.Log, "warning: the rows since the calibration before it could not be marked: %v\n", err)
				}
			}
		}
		st.out.CalibrationsMissed = cal.missed
	}
}

// measure is the second stage: every cell of the plan (or every search), its rows in the outcome
// as written.
func (st *staged) measure(ctx context.Context) error {
	s, p, out := st.s, st.p, st.out
	if s.FindMax != nil {
		found, rows, err := findMax(ctx, st.r, p, s.FindMax)
		out.Found, out.Rows = found, append(out.Rows, st.asWritten(rows)...)
		out.Interrupted = errors.Is(err, context.Canceled)
		return err
	}
	rows, err := st.r.Run(ctx, p)
	var re *bench.ResumeError
	if errors.As(err, &re) {
		if s.File != "" {
			return exitcode.Usagef("%s: %v: the experiment or its flags changed since it was written; remove the file to measure the run again", st.f.path, re)
		}
		return exitcode.Usagef("--resume %s: %v: run it with the flags that started it, or start a new run", s.Resume, re)
	}
	out.Rows = append(out.Rows, st.asWritten(rows)...)
	out.Interrupted = errors.Is(err, context.Canceled)
	if out.Interrupted && s.File == "" {
		fmt.Fprintf(s.Log, "interrupted: %d of %d cell(s) recorded in %s; the same command with --resume %s measures the rest\n", cellRows(out.Rows), len(p.Cells), st.f.path, st.f.path)
	}
	return err
}

// asWritten are rows as the file holds them: the engine's rows, stamped on their way.
func (st *staged) asWritten(rows []results.Row) []results.Row {
	if len(st.recorded) == len(rows) {
		return st.recorded
	}
	return rows
}

// judge is the last stage: the calibration after the last cell (its doubt written into the rows
// before a paired run's verdicts read them), then those verdicts.
func (st *staged) judge(ctx context.Context) {
	st.judgeCalibration(ctx)
	if !st.p.Paired {
		return
	}
	res := st.s.Gate.analyze(st.f.path, st.out.Rows)
	if st.s.FindMax == nil && st.s.Gate.Until != nil {
		res.Until = st.s.Gate.outcome(res, st.p.Rounds())
	}
	st.out.Paired = &res
}

// cellRows counts the rows of cells among rows: not those of their stages or requests.
func cellRows(rows []results.Row) int {
	n := 0
	for _, r := range rows {
		if !r.Part() {
			n++
		}
	}
	return n
}

// announce says what the run will do and where its rows go.
func announce(log io.Writer, s Setup, p *plan.Plan, f *resultsFile) {
	switch {
	case s.FindMax != nil:
		targets := map[string]bool{}
		for _, c := range p.Cells {
			targets[c.Target] = true
		}
		fmt.Fprintf(log, "%s: find-max, %d search(es) over %d target(s), one a trial; every step goes to %s as it finishes\n", p.Name, len(p.Cells), len(targets), f.path)
	case p.Paired:
		fmt.Fprintf(log, "%s: paired run, %d round(s) of baseline and candidate (%d cell(s)); results go to %s as each finishes\n", p.Name, p.Rounds(), len(p.Cells), f.path)
	case s.Name != "":
		s.say("%s: %d cell(s), %d recorded; rows go to %s", p.Name, len(p.Cells), cellRows(f.resumed), f.path)
		return
	default:
		fmt.Fprintf(log, "%s: %d cell(s); results go to %s as each finishes\n", p.Name, len(p.Cells), f.path)
	}
	fmt.Fprintf(log, "targets take turns in an order shuffled by seed %d (--seed %d replays it)\n", f.seed, f.seed)
}

// newSeed is a seed for a run that was given none.
func newSeed() int64 { return rand.Int64() }

// say prints a line about the run as a whole, named after it when it has a name.
func (s Setup) say(format string, args ...any) {
	if s.Name != "" {
		format = "  run " + s.Name + ": " + format
	}
	fmt.Fprintf(s.Log, format+"\n", args...)
}
