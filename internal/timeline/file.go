package timeline

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// FormatVersion is the version of the timeline file this iotbench writes; every line records
// it, and a newer one is refused. docs/timeline.md documents each version's columns.
const FormatVersion = 1

// Cell is one cell's timeline: its warm-up and measured seconds. It is keyed as its row in the
// results file: scenario, target, trial, and the requested rate (find-max steps share a trial).
type Cell struct {
	Key
	Warmup, Measure []Second
}

// Key names a cell as its results row does.
type Key struct {
	Scenario, Target string
	Trial            int
	RequestedRPS     int
}

// SideTarget is the target a row's timeline is filed under: a paired run's baseline and
// candidate of one target and trial, apart ("fastify (base)").
func SideTarget(target, variant string) string {
	if variant == "" {
		return target
	}
	return target + " (" + variant + ")"
}

// RampKey names the cell that keeps the seconds of the nth ramp of a --find-max search
// (docs/timeline.md): its scenario's with ".ramp-<n>", the search's number for a trial, the rate
// the ramp rose towards for a requested rate.
func RampKey(scenario, target string, search, n, towards int) Key {
	return Key{Scenario: fmt.Sprintf("%s%s%d", scenario, rampInfix, n), Target: target, Trial: search, RequestedRPS: towards}
}

// RampOf says k names a ramp (RampKey) of search number search of target in scenario.
func (k Key) RampOf(scenario, target string, search int) bool {
	return strings.HasPrefix(k.Scenario, scenario+rampInfix) && k.Target == target && k.Trial == search
}

const rampInfix = ".ramp-"

func (k Key) String() string {
	s := fmt.Sprintf("%s · %s · trial %d", k.Scenario, k.Target, k.Trial)
	if strings.Contains(k.Scenario, ".find-max") {
		s += fmt.Sprintf(" · %d rps", k.RequestedRPS)
	}
	return s
}

type field struct {
	name string
	get  func(*Cell, Phase, *Second) string
	set  func(*Cell, *Phase, *Second, string) error
}

func intField(name string, f func(*Second) *int64) field {
	return field{name,
		func(_ *Cell, _ Phase, s *Second) string { return strconv.FormatInt(*f(s), 10) },
		func(_ *Cell, _ *Phase, s *Second, v string) (err error) {
			*f(s), err = strconv.ParseInt(v, 10, 64)
			if err != nil || *f(s) < 0 {
				return errors.New("a whole number, 0 or more")
			}
			return nil
		}}
}

func msField(name string, f func(*Second) *time.Duration) field {
	return field{name,
		func(_ *Cell, _ Phase, s *Second) string { return strconv.FormatFloat(float64(*f(s))/1e6, 'f', 3, 64) },
		func(_ *Cell, _ *Phase, s *Second, v string) error {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil || !(x >= 0 && x < 1e9) {
				return errors.New("milliseconds, 0 or more")
			}
			*f(s) = time.Duration(x * 1e6).Round(time.Microsecond)
			return nil
		}}
}

func keyField(name string, f func(*Cell) *string) field {
	return field{name,
		func(c *Cell, _ Phase, _ *Second) string { return *f(c) },
		func(c *Cell, _ *Phase, _ *Second, v string) error { *f(c) = v; return nil }}
}

func keyInt(name string, f func(*Cell) *int) field {
	return field{name,
		func(c *Cell, _ Phase, _ *Second) string { return strconv.Itoa(*f(c)) },
		func(c *Cell, _ *Phase, _ *Second, v string) (err error) {
			*f(c), err = strconv.Atoi(v)
			if err != nil {
				return errors.New("a whole number")
			}
			return nil
		}}
}

// fields is the file's layout, in order; docs/timeline.md documents each.
var fields = []field{
	{"timeline_version",
		func(*Cell, Phase, *Second) string { return strconv.Itoa(FormatVersion) },
		func(_ *Cell, _ *Phase, _ *Second, v string) error {
			n, err := strconv.Atoi(v)
			switch {
			case err != nil || n < 1:
				return errors.New("a version number")
			case n > FormatVersion:
				return fmt.Errorf("version %d, newer than this iotbench reads (%d): use the iotbench that wrote the file, or a newer one", n, FormatVersion)
			}
			return nil
		}},
	keyField("scenario", func(c *Cell) *string { return &c.Scenario }),
	keyField("target", func(c *Cell) *string { return &c.Target }),
	keyInt("trial", func(c *Cell) *int { return &c.Trial }),
	keyInt("requested_rps", func(c *Cell) *int { return &c.RequestedRPS }),
	{"phase",
		func(_ *Cell, p Phase, _ *Second) string { return string(p) },
		func(_ *Cell, p *Phase, _ *Second, v string) error {
			if Phase(v) != Warmup && Phase(v) != Measure {
				return fmt.Errorf("%s or %s", Warmup, Measure)
			}
			*p = Phase(v)
			return nil
		}},
	{"second",
		func(_ *Cell, _ Phase, s *Second) string { return strconv.Itoa(s.Index) },
		func(_ *Cell, _ *Phase, s *Second, v string) (err error) {
			s.Index, err = strconv.Atoi(v)
			if err != nil || s.Index < 0 || s.Index > 1e7 {
				return errors.New("a second from the phase's start")
			}
			return nil
		}},
	intField("due", func(s *Second) *int64 { return &s.Due }),
	intField("sent", func(s *Second) *int64 { return &s.Sent }),
	intField("successes", func(s *Second) *int64 { return &s.Successes }),
	intField("timeouts", func(s *Second) *int64 { return &s.Timeouts }),
	intField("transport_errors", func(s *Second) *int64 { return &s.Transport }),
	intField("status_errors", func(s *Second) *int64 { return &s.Status }),
	intField("check_errors", func(s *Second) *int64 { return &s.Check }),
	intField("in_flight", func(s *Second) *int64 { return &s.InFlight }),
	msField("latency_p50_ms", func(s *Second) *time.Duration { return &s.P50 }),
	msField("latency_p99_ms", func(s *Second) *time.Duration { return &s.P99 }),
	msField("latency_max_ms", func(s *Second) *time.Duration { return &s.Max }),
	msField("generator_delay_p99_ms", func(s *Second) *time.Duration { return &s.OwnDelayP99 }),
	{"cpu_cores",
		func(_ *Cell, _ Phase, s *Second) string { return strconv.FormatFloat(s.CPUCores, 'f', 3, 64) },
		func(_ *Cell, _ *Phase, s *Second, v string) (err error) {
			s.CPUCores, err = strconv.ParseFloat(v, 64)
			if err != nil || !(s.CPUCores >= 0 && s.CPUCores < 1e6) {
				return errors.New("a number of cores, 0 or more")
			}
			return nil
		}},
	intField("memory_bytes", func(s *Second) *int64 { return &s.MemoryBytes }),
}

// Header is the file's header line.
func Header() []string {
	h := make([]string, len(fields))
	for i, f := range fields {
		h[i] = f.name
	}
	return h
}

// Writer appends cells to a timeline file, each synced before Write returns, as the results
// file's rows are.
type Writer struct {
	f file
	w *csv.Writer
}

// file is what a Writer needs of its *os.File: a seam for tests of a disk that fills up.
type file interface {
	io.Writer
	Stat() (fs.FileInfo, error)
	Truncate(size int64) error
	Sync() error
	Close() error
}

// Create makes a new timeline file with its header; it refuses to overwrite one.
func Create(path string) (*Writer, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	// Appending, as Append does: a cell cut off by Write leaves the next one at the file's end.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return &Writer{f: f, w: csvWriter(f)}, nil
}

// Append opens a timeline file to add cells to (a resumed run's), creating it when there is none.
func Append(path string) (*Writer, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if st.Size() == 0 {
		return &Writer{f: f, w: csvWriter(f)}, nil
	}
	return &Writer{f: f, w: csv.NewWriter(f)}, nil
}

// Write appends c's seconds, the warm-up's first. A cell that cannot be written whole (a full
// disk) is cut off again, so the file stays readable, and the cells after it can still be added.
func (w *Writer) Write(c Cell) error {
	st, err := w.f.Stat()
	if err != nil {
		return err
	}
	err = writeCell(w.w, c)
	if err == nil {
		w.w.Flush()
		err = w.w.Error()
	}
	if err == nil {
		err = w.f.Sync()
	}
	if err != nil {
		if terr := w.f.Truncate(st.Size()); terr != nil {
			return fmt.Errorf("%w; and the part written could not be cut off: %v", err, terr)
		}
		// A csv.Writer keeps its first error; the next cell starts on a new one.
		w.w = csv.NewWriter(w.f)
		if st.Size() == 0 {
			w.w = csvWriter(w.f)
		}
		return err
	}
	return nil
}

// csvWriter starts a timeline on w with its header (written at the first flush).
func csvWriter(w io.Writer) *csv.Writer {
	cw := csv.NewWriter(w)
	_ = cw.Write(Header()) // buffered: an error shows at the first flush
	return cw
}

func writeCell(w *csv.Writer, c Cell) error {
	for _, ph := range []struct {
		p       Phase
		seconds []Second
	}{{Warmup, c.Warmup}, {Measure, c.Measure}} {
		for i := range ph.seconds {
			rec := make([]string, len(fields))
			for j, f := range fields {
				rec[j] = f.get(&c, ph.p, &ph.seconds[i])
			}
			if err := w.Write(rec); err != nil {
				return err
			}
		}
	}
	return nil
}

// Close closes the file.
func (w *Writer) Close() error { return w.f.Close() }

// Read parses a timeline file into its cells, in the order they first appear. Errors name the
// line; columns it does not know are ignored, a missing one is an error.
func Read(r io.Reader) ([]Cell, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	head, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, errors.New("line 1: empty file: not an iotbench timeline")
	}
	if err != nil {
		return nil, err
	}
	index := map[string]int{}
	for i, name := range head {
		index[name] = i
	}
	var missing []string
	for _, f := range fields {
		if _, ok := index[f.name]; !ok {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("line 1: not an iotbench timeline: the header lacks %s", strings.Join(missing, ", "))
	}
	var cells []Cell
	at := map[Key]int{}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != len(head) {
			return nil, fmt.Errorf("line %d: %d fields, but the header has %d", line, len(rec), len(head))
		}
		var c Cell
		var p Phase
		var s Second
		for _, f := range fields {
			v := rec[index[f.name]]
			if err := f.set(&c, &p, &s, v); err != nil {
				return nil, fmt.Errorf("line %d: column %s: %q is not %v", line, f.name, v, err)
			}
		}
		i, ok := at[c.Key]
		if !ok {
			i = len(cells)
			at[c.Key] = i
			cells = append(cells, Cell{Key: c.Key})
		}
		if p == Warmup {
			cells[i].Warmup = append(cells[i].Warmup, s)
		} else {
			cells[i].Measure = append(cells[i].Measure, s)
		}
	}
	return cells, nil
}

// ReadFile reads a timeline file from disk; errors start with its path.
func ReadFile(path string) ([]Cell, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cells, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cells, nil
}
