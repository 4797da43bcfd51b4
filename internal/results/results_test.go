package results

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/fault"
	"github.com/iotbench/iotbench/internal/golden"
)

func sample(trial int, valid bool) Row {
	fk := fault.None
	if !valid {
		fk = fault.Errors
	}
	return Row{Fault: fk,
		Scenario: "io-heavy", Target: "fastify", Trial: trial, Mode: "open",
		RequestedRPS: 1000, Connections: 300, PeakInFlight: 61, AchievedRPS: 999.95, ThroughputRPS: 998.5,
		Requests: 20000, Successes: 19970, Errors: 30, Timeouts: 2, SuccessRatio: 0.9985, StatusCodes: "0:2 200:19970 500:28",
		LatencyMean: 51234 * time.Microsecond, LatencyP50: 50512 * time.Microsecond, LatencyP90: 52 * time.Millisecond,
		LatencyP99: 58123 * time.Microsecond, LatencyP999: 71 * time.Millisecond, LatencyMax: 120 * time.Millisecond,
		SendLagP99: 812 * time.Microsecond, SendLagMax: 3 * time.Millisecond, GeneratorDelayP99: 1234 * time.Microsecond,
		Duration: 20 * time.Second, Warmup: 1500 * time.Millisecond, Valid: valid, InvalidReason: "a, \"quoted\" reason",
		StartedAt: time.Date(2026, 11, 22, 13, 0, 0, 0, time.UTC), CPUSet: "1", GeneratorCPUSet: "0", Memory: "1g",
		ImageID: "sha256:abc", TargetRuntime: "node 24.21.0", Version: "v0.1.0", GitCommit: "0855432",
		HostCPU: "AMD EPYC, 2 cores", Kernel: "6.1.0", DockerVersion: "20.10.24",
		Seed: -7243, PayloadSHA: "9f86d081884c7d65", Generators: 1,
	}
}

func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.csv")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []Row{sample(1, true), sample(2, false)}
	// Three generators, one of them on another host whose clock was measured.
	want[1].Generators, want[1].GeneratorClockOffset, want[1].GeneratorClockMeasured = 3, 1234*time.Microsecond, true
	want[1].Arrival, want[1].Stages, want[1].Stage = "poisson", "1m:500-5000", 2
	// One judged not steady, measured after a calibration that missed its limits; the other
	// neither judged nor calibrated.
	want[1].Steady, want[1].SteadyJudged = false, true
	want[1].Calibrated, want[1].CalibrationWithin = true, false
	want[1].CalibrationP50Error, want[1].CalibrationP99Error = 120*time.Microsecond, -3100*time.Microsecond
	want[1].CalibrationRateRatio, want[1].CalibrationOwnDelayP99 = 0.9931, 80*time.Microsecond
	// A JVM whose JIT told its busy time; the other target told none.
	want[0].JITBusy, want[0].JITJudged = 1234*time.Millisecond, true
	// One whose cgroup gave its pressure (PSI); the other's host kept none.
	want[0].PressureRead, want[0].CPUPressure, want[0].MemoryPressure = true, 0.312, 0
	for _, r := range want {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	// Each row is on disk before Close: an interrupted run keeps what it measured.
	early, _, err := ReadFile(path)
	if err != nil || len(early) != 2 {
		t.Fatalf("before close: %d rows, %v; want 2 rows on disk", len(early), err)
	}
	w.Close()
	got, warnings, err := ReadFile(path)
	if err != nil || len(warnings) > 0 {
		t.Fatal(err, warnings)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip changed rows:\n got %+v\nwant %+v", got, want)
	}
}

// A row is distrusted as still warming up from a JIT busy for more than half of its measured
// phase, and only when the target told the time; not steady and the calibration are named first.
func TestDistrust(t *testing.T) {
	for _, c := range []struct {
		name              string
		busy              time.Duration
		judged, unsteady  bool
		calibrationMissed bool
		want              string
	}{
		{"no JIT told", 0, false, false, false, ""},
		{"a settled JIT", 8 * time.Second, true, false, false, ""},
		{"a JIT compiling", 12 * time.Second, true, false, false, DistrustWarming},
		{"not steady first", 12 * time.Second, true, true, false, DistrustNotSteady},
		{"calibration before the JIT", 12 * time.Second, true, false, true, DistrustCalibration},
	} {
		r := sample(1, true) // a 20-s phase: half is 10 s
		r.JITBusy, r.JITJudged = c.busy, c.judged
		r.SteadyJudged, r.Steady = true, !c.unsteady
		r.Calibrated, r.CalibrationWithin = c.calibrationMissed, !c.calibrationMissed
		if got := r.Distrust(); got != c.want {
			t.Errorf("%s: distrust %q, want %q", c.name, got, c.want)
		}
	}
}

func TestHeaderHasTheDocumentedColumns(t *testing.T) {
	doc, err := os.ReadFile("../../docs/results.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range Header() {
		if !strings.Contains(string(doc), "`"+name+"`") {
			t.Errorf("column %s is not documented in docs/results.md", name)
		}
	}
}

func TestCreateRefusesToOverwrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.csv")
	os.WriteFile(path, []byte("keep me"), 0o644)
	if _, err := Create(path); err == nil {
		t.Fatal("Create overwrote an existing results file")
	}
}

// TestReadFile reads every file of testdata/read and checks the outcome, the error message or
// the rows read and the warnings, against its .golden file: the messages are part of the interface.
func TestReadFile(t *testing.T) {
	files, _ := filepath.Glob("testdata/read/*.csv")
	if len(files) < 10 {
		t.Fatalf("%d files in testdata/read", len(files))
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			rows, warnings, err := ReadFile(path)
			got := fmt.Sprintf("%d row(s)\n", len(rows))
			for _, w := range warnings {
				got += "warning: " + w + "\n"
			}
			if err != nil {
				got = err.Error() + "\n"
			}
			goldenPath := strings.TrimSuffix(path, ".csv") + ".golden"
			golden.Check(t, goldenPath, []byte(got))
		})
	}
}

// TestOldFilesStillRead: a file from before schema_version (version 1) reads, without the newer
// columns.
func TestOldFilesStillRead(t *testing.T) {
	rows, _, err := ReadFile("testdata/read/schema-1.csv")
	if err != nil || len(rows) == 0 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	if r := rows[0]; r.Scenario != "io-heavy" || r.Seed != 0 || r.PayloadSHA != "" || !r.Valid {
		t.Errorf("first row %+v", r)
	}
}

// A row of a file from before jit_busy_s has the time its JIT warning gave, so that today's rule
// judges it: 33.23 s over a 30-s phase is a target still warming up, 1.79 s is not.
func TestOldRowsTakeTheirJITTimeFromTheirWarning(t *testing.T) {
	var b bytes.Buffer
	cw := csv.NewWriter(&b)
	head := Header()
	at := slices.Index(head, "jit_busy_s")
	version := slices.Index(head, "schema_version")
	cw.Write(slices.Delete(slices.Clone(head), at, at+1))
	for _, warned := range []string{"33.23s", "1.79s", ""} {
		r := sample(1, true)
		r.Duration = 30 * time.Second
		if warned != "" {
			r.Warnings = "disturbed: the hypervisor took 0.1 cores; the JIT compiled for " + warned + " during the measured phase (110.8% of a CPU): the target was still warming up"
		}
		rec := record(r)
		rec[version] = "10"
		cw.Write(slices.Delete(rec, at, at+1))
	}
	cw.Flush()
	rows, _, err := Read(&b)
	if err != nil || len(rows) != 3 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	for i, want := range []struct {
		busy     time.Duration
		judged   bool
		warming  bool
		warnings string
	}{
		{33230 * time.Millisecond, true, true, "disturbed: the hypervisor took 0.1 cores; the JIT compiled for 33.23s during the measured phase (110.8% of it, its compiler threads' busy time): the target was still warming up"},
		{1790 * time.Millisecond, true, false, "disturbed: the hypervisor took 0.1 cores"},
		{0, false, false, ""},
	} {
		if r := rows[i]; r.JITBusy != want.busy || r.JITJudged != want.judged || r.StillWarming() != want.warming || r.Warnings != want.warnings {
			t.Errorf("row %d: JIT busy %v (judged %v, still warming %v), warnings %q; want %v (%v, %v), %q", i+1, r.JITBusy, r.JITJudged, r.StillWarming(), r.Warnings, want.busy, want.judged, want.warming, want.warnings)
		}
	}
}

// A find-max step of a file from before latency_at reads as its search ran, with steps at 50%,
// 75% and 90% of the maximum; a step of a newer file reads as recorded, none included; a row that
// is no find-max step has none.
func TestOldFindMaxRowsMeasuredLatencyAtTheirFractions(t *testing.T) {
	for _, c := range []struct {
		version, scenario, recorded, want string
	}{
		{"11", "io-heavy" + FindMaxSuffix, "", LegacyLatencyAt},
		{"11", "io-heavy", "", ""},
		{"12", "io-heavy" + FindMaxSuffix, "", ""},
		{"12", "io-heavy" + FindMaxSuffix, "60%", "60%"},
	} {
		var b bytes.Buffer
		cw := csv.NewWriter(&b)
		head := Header()
		at := slices.Index(head, "latency_at")
		version := slices.Index(head, "schema_version")
		r := sample(1, true)
		r.Scenario, r.LatencyAt = c.scenario, c.recorded
		rec := record(r)
		rec[version] = c.version
		if c.version == "11" {
			head, rec = slices.Delete(slices.Clone(head), at, at+1), slices.Delete(rec, at, at+1)
		}
		cw.Write(head)
		cw.Write(rec)
		cw.Flush()
		rows, _, err := Read(&b)
		if err != nil || len(rows) != 1 {
			t.Fatalf("schema %s: %d rows, %v", c.version, len(rows), err)
		}
		if got := rows[0].LatencyAt; got != c.want {
			t.Errorf("schema %s, %s, recorded %q: latency at %q; want %q", c.version, c.scenario, c.recorded, got, c.want)
		}
	}
}

// A row recorded when a lower share of JIT busy time meant still warming up reads back without
// that warning, its others kept: its warnings never say what its distrust does not.
func TestAWarningTheRuleNoLongerGivesIsDropped(t *testing.T) {
	var b bytes.Buffer
	r := sample(1, true)
	r.Duration, r.JITBusy, r.JITJudged = 30*time.Second, 7320*time.Millisecond, true
	r.Warnings = "the JIT compiled for 7.32s during the measured phase (24.4% of it, its compiler threads' busy time): the target was still warming up; seconds not independent"
	if err := write(&b, []Row{r}); err != nil {
		t.Fatal(err)
	}
	rows, _, err := Read(&b)
	if err != nil || len(rows) != 1 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	if got := rows[0].Warnings; got != "seconds not independent" || rows[0].Distrust() != "" {
		t.Errorf("warnings %q, distrust %q; want only the other warning and no distrust", got, rows[0].Distrust())
	}
}

// A closed loop's throughput is warned of when its count may be off by more than 2% of it (one
// answer a user over the phase), whenever the row was written: a stale wording is replaced.
func TestCountWarning(t *testing.T) {
	closed := func(conns int, peak int64, du time.Duration, rps float64) Row {
		r := sample(1, true)
		r.Mode, r.Connections, r.PeakInFlight, r.Duration, r.ThroughputRPS = "closed", conns, peak, du, rps
		return r
	}
	for _, c := range []struct {
		name string
		row  Row
		want string
	}{
		{"seed 002's Tomcat at 50 threads", closed(100, 100, 30*time.Second, 8.7),
			"count coarse: throughput within ±3.33 rps (38%) by the count alone, each of 100 users answering one time more or fewer over 30s (all of them when they answer in step), a phase of 9m35s would hold it within 2%"},
		{"streams in flight beyond the connections", closed(10, 40, 20*time.Second, 50),
			"count coarse: throughput within ±2 rps (4%) by the count alone, each of 40 users answering one time more or fewer over 20s (all of them when they answer in step), a phase of 40s would hold it within 2%"},
		{"one connection", closed(1, 1, 30*time.Second, 0.2),
			"count coarse: throughput within ±0.0333 rps (17%) by the count alone, its one user answering one time more or fewer over 30s, a phase of 4m10s would hold it within 2%"},
		{"256 connections at 2,000 rps over 30 s: 0.4%", closed(256, 256, 30*time.Second, 2000), ""},
		{"nothing answered", closed(100, 100, 30*time.Second, 0), ""},
		{"open loop", sample(1, true), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.row.CountWarning(); got != c.want {
				t.Errorf("got %q\nwant %q", got, c.want)
			}
			r := c.row
			r.Warnings = "count coarse: throughput within ±9 rps, an older wording; seconds not independent"
			var b bytes.Buffer
			if err := write(&b, []Row{r}); err != nil {
				t.Fatal(err)
			}
			rows, _, err := Read(&b)
			if err != nil || len(rows) != 1 {
				t.Fatalf("%d rows, %v", len(rows), err)
			}
			want := "seconds not independent"
			if c.want != "" {
				want += "; " + c.want
			}
			if rows[0].Warnings != want {
				t.Errorf("read back with warnings %q, want %q", rows[0].Warnings, want)
			}
		})
	}
}

// FuzzRead: whatever the bytes, Read returns rows or an error without panicking; a cut row is
// the last line, and the file without it reads as the same rows, uncut; rows Read accepts survive
// being written and read again unchanged. Seed corpus: testdata/read and testdata/fuzz/FuzzRead.
func FuzzRead(f *testing.F) {
	files, _ := filepath.Glob("testdata/read/*.csv")
	for _, path := range files {
		data, _ := os.ReadFile(path)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, cut, err := Read(bytes.NewReader(data))
		if err != nil {
			var pe *ParseError
			if errors.As(err, &pe) && pe.Line < 1 {
				t.Errorf("error at line %d: %v", pe.Line, err)
			}
			return
		}
		if cut != nil {
			complete := data[:cut.Offset]
			if bytes.IndexByte(data[cut.Offset:], '\n') >= 0 || cut.Line != bytes.Count(complete, []byte{'\n'})+1 {
				t.Fatalf("cut %+v is not the last line of %q", cut, data)
			}
			if cut.Offset > 0 {
				again, cut2, err := Read(bytes.NewReader(complete))
				if err != nil || cut2 != nil || !reflect.DeepEqual(again, rows) {
					t.Fatalf("the complete part of %q reads as %d rows, %+v, %v; want the %d rows read with the cut", data, len(again), cut2, err, len(rows))
				}
			}
		}
		var once bytes.Buffer
		if err := write(&once, rows); err != nil {
			t.Fatal(err)
		}
		again, _, err := Read(bytes.NewReader(once.Bytes()))
		if err != nil {
			t.Fatalf("rows read from %q do not read back after writing: %v\n%s", data, err, once.Bytes())
		}
		var twice bytes.Buffer
		write(&twice, again)
		if !bytes.Equal(once.Bytes(), twice.Bytes()) {
			t.Errorf("writing is not stable:\n%s\n%s", once.Bytes(), twice.Bytes())
		}
	})
}

func write(w io.Writer, rows []Row) error {
	cw := csv.NewWriter(w)
	cw.Write(Header())
	for _, r := range rows {
		cw.Write(record(r))
	}
	cw.Flush()
	return cw.Error()
}

// TestCreateInNeverCollides: runs started in the same second get distinct files, whose names sort
// in the order the runs started.
func TestCreateInNeverCollides(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "results")
	at := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	var names []string
	for i := range 11 {
		w, err := CreateIn(dir, at.Add(time.Duration(i)*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		names = append(names, filepath.Base(w.Path()))
	}
	want := []string{"20260102T150405Z.csv", "20260102T150405Z_02.csv", "20260102T150405Z_03.csv"}
	if !reflect.DeepEqual(names[:3], want) || names[10] != "20260102T150405Z_11.csv" {
		t.Errorf("names %v, want %v … 20260102T150405Z_11.csv", names, want)
	}
	if !slices.IsSorted(names) {
		t.Errorf("names %v do not sort in the order the runs started", names)
	}
	later, err := CreateIn(dir, at.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer later.Close()
	if all := append(names, filepath.Base(later.Path())); !slices.IsSorted(all) {
		t.Errorf("a run a second later sorts before the earlier ones: %v", all)
	}
}

// writeFile writes rows as Create does, then what follows them.
func writeFile(t *testing.T, rows []Row, tail string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "r.csv")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		w.Write(r)
	}
	w.Close()
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(tail)
	f.Close()
	return path
}

// TestAppend: a resumed run's file keeps its complete rows, loses a row cut off mid-way, and
// takes new rows in the same layout; a file of another schema, or one still being written, is refused.
func TestAppend(t *testing.T) {
	one, two, three := sample(1, true), sample(2, false), sample(3, true)
	var full bytes.Buffer
	write(&full, []Row{two})
	cutRow := strings.SplitN(full.String(), "\n", 2)[1][:150] // two's row, cut after its reason
	cases := []struct {
		name      string
		rows      []Row
		tail      string
		wantRows  int
		wantWarn  string
		wantError string
	}{
		{"complete", []Row{one, two}, "", 2, "", ""},
		{"header only", nil, "", 0, "", ""},
		{"last row cut", []Row{one}, cutRow, 1, ":3: the last row is cut off (no line end): the run that wrote it stopped mid-row; that row is removed before rows are appended, the 1 complete row(s) before it are read", ""},
		{"cut inside a quoted field", []Row{one}, "io-heavy,fastify,2,\"a, reason", 1, ":3: the last row is cut off", ""},
		{"malformed row", []Row{one}, "io-heavy,fastify,two\n", 0, "", ":3: 3 fields, but the header has"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, c.rows, c.tail)
			w, rows, warnings, err := Append(path)
			if c.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantError) {
					t.Fatalf("err %v, want %q", err, c.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != c.wantRows || !reflect.DeepEqual(rows, c.rows[:c.wantRows]) {
				t.Errorf("%d rows, want %d: %+v", len(rows), c.wantRows, rows)
			}
			if got := strings.Join(warnings, "\n"); c.wantWarn == "" && got != "" || !strings.Contains(got, c.wantWarn) {
				t.Errorf("warnings %q, want %q", got, c.wantWarn)
			}
			if err := w.Write(three); err != nil {
				t.Fatal(err)
			}
			w.Close()
			again, warnings, err := ReadFile(path)
			if err != nil || len(warnings) > 0 {
				t.Fatalf("after appending: %v %v", err, warnings)
			}
			if want := append(slices.Clone(c.rows[:c.wantRows]), three); !reflect.DeepEqual(again, want) {
				t.Errorf("after appending %d rows, want %d", len(again), len(want))
			}
		})
	}
}

func TestAppendRefusesAnotherLayout(t *testing.T) {
	cases := []struct{ file, want string }{
		{"testdata/read/schema-1.csv", fmt.Sprintf("written in schema 1, but this iotbench writes schema %d: one file holds rows of one schema; finish it with the iotbench that wrote it (0fd2809), or start a new run", SchemaVersion)},
		{"testdata/read/cut-header.csv", ""},
		{"testdata/read/newer-schema.csv", fmt.Sprintf("schema_version 99 is newer than this iotbench reads (%d)", SchemaVersion)},
		{"testdata/read/short-row.csv", ":3: 10 fields, but the header has 42"},
	}
	for _, c := range cases {
		t.Run(filepath.Base(c.file), func(t *testing.T) {
			data, _ := os.ReadFile(c.file)
			path := filepath.Join(t.TempDir(), "r.csv")
			os.WriteFile(path, data, 0o644)
			w, _, _, err := Append(path)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				w.Close()
				if got, _ := os.ReadFile(path); string(got) != strings.Join(Header(), ",")+"\n" {
					t.Errorf("a cut header is not written again whole: %q", got)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err %v, want %q", err, c.want)
			}
			if got, _ := os.ReadFile(path); !bytes.Equal(got, data) {
				t.Error("a refused file was changed")
			}
		})
	}
}

// TestOneWriterAtATime: a file a run is writing cannot be resumed by another iotbench.
func TestOneWriterAtATime(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.csv")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := Append(path); err == nil || !strings.Contains(err.Error(), "another iotbench is writing this file") {
		t.Errorf("Append of a file being written: %v", err)
	}
	w.Close()
	w2, _, _, err := Append(path)
	if err != nil {
		t.Fatalf("Append after the writer closed: %v", err)
	}
	w2.Close()
}

func TestACellNeverLoadedHasNoMeasurement(t *testing.T) {
	never := Row{Scenario: "s", Target: "t", Trial: 1, Mode: "open", Fault: fault.VerifyFailed, InvalidReason: string(fault.VerifyFailed) + ": answered 500", StartedAt: time.Unix(0, 0)}
	loaded := Row{Scenario: "s", Target: "u", Trial: 1, Mode: "open", Fault: fault.Errors, InvalidReason: "success ratio 0.7000 below 0.99", Requests: 10, SuccessRatio: 0.7, StartedAt: time.Unix(0, 0)}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write(Header())
	w.Write(record(never))
	w.Write(record(loaded))
	w.Flush()
	rec := record(never)
	for i, c := range columns {
		if measurementColumn[c.name] && rec[i] != "" {
			t.Errorf("a verify-failed row writes %s=%q, want empty", c.name, rec[i])
		}
	}
	if rec := record(loaded); rec[slices.Index(Header(), "success_ratio")] != "0.700000" {
		t.Errorf("a loaded row lost its success ratio: %v", rec)
	}
	rows, _, err := Read(bytes.NewReader(buf.Bytes()))
	if err != nil || len(rows) != 2 || rows[0].Loaded() || rows[0].SuccessRatio != 0 || rows[1].SuccessRatio != 0.7 {
		t.Fatalf("read back %+v, %v", rows, err)
	}
	// A loaded row with an empty measurement is a damaged file, not a cell never loaded.
	damaged := strings.Replace(buf.String(), ",0.700000,", ",,", 1)
	if _, _, err := Read(strings.NewReader(damaged)); err == nil || !strings.Contains(err.Error(), "column success_ratio") {
		t.Errorf("an empty success_ratio in a loaded row: %v", err)
	}
}

// TestFingerprintGenerators: rows of one generator keep the fingerprint rows had before the
// column (an old file's rows read with none); rows of several differ, named as generators.
func TestFingerprintGenerators(t *testing.T) {
	old, one, two := sample(1, true), sample(1, true), sample(1, true)
	old.Generators, two.Generators = 0, 2
	if old.Fingerprint() != one.Fingerprint() {
		t.Errorf("one generator's fingerprint %s differs from an older row's %s", one.Fingerprint(), old.Fingerprint())
	}
	if one.Fingerprint() == two.Fingerprint() {
		t.Errorf("one generator and two share the fingerprint %s", one.Fingerprint())
	}
	var differ []string
	for i, f := range one.FingerprintFields() {
		if g := two.FingerprintFields()[i]; g != f {
			differ = append(differ, fmt.Sprintf("%s: %s → %s", f.Name, f.Value, g.Value))
		}
	}
	if want := []string{"generators: 1 → 2"}; !slices.Equal(differ, want) {
		t.Errorf("fields that differ: %v, want %v", differ, want)
	}
}

// TestAddedSettingsKeepOlderFingerprints: every setting added to the fingerprint after it was
// first defined leaves it unchanged at its default (the value older rows read as) and changes it
// otherwise; and the fingerprint names it as a field, so that compare can say which one differs.
func TestAddedSettingsKeepOlderFingerprints(t *testing.T) {
	// The fingerprint before any added setting: the fields that are not added, hashed alone.
	base := sample(1, true)
	base.Timeout, base.Generators = 0, 0
	for name, def := range AddedSettings {
		t.Run(name, func(t *testing.T) {
			atDefault, other := base, base
			switch name {
			case "timeout_s":
				other.Timeout = 2 * time.Second
			case "generators":
				atDefault.Generators, other.Generators = 1, 3
			case "arrival":
				atDefault.Arrival, other.Arrival = "uniform", "poisson"
			case "stages":
				other.Stages = "30s:500,1m:500-5000"
			case "think":
				other.Think = "exp:100ms"
			case "protocol":
				atDefault.Protocol, other.Protocol = "http1", "https"
			case "tls_resumption":
				other.Protocol, other.TLSResumption = "https", "true"
			case "h2_streams":
				other.Protocol, other.H2Streams = "h2c", 10
			case "new_connection":
				other.NewConnection = true
			case "streams":
				other.Streams = "ingest:80,page:20,probe@50"
			case "warmup_auto":
				other.WarmupAuto = true
				atDefault.WarmupTaken, other.WarmupTaken = 17*time.Second, 17*time.Second // measured, no setting
			case "compat":
				other.Compat = CompatWrk
			case "one_load":
				other.OneLoad = true
			default:
				t.Fatalf("no case for the added setting %s: add one (its default %q)", name, def)
			}
			if atDefault.Fingerprint() != base.Fingerprint() {
				t.Errorf("%s at its default %s changes the fingerprint of older rows", name, def)
			}
			if other.Fingerprint() == base.Fingerprint() {
				t.Errorf("%s away from its default leaves the fingerprint unchanged", name)
			}
			if !slices.ContainsFunc(other.FingerprintFields(), func(f Field) bool { return f.Name == name }) {
				t.Errorf("%s is not a field of the fingerprint", name)
			}
		})
	}
}

// A rewrite changes the rows asked for and nothing else: the file is what a writer would have
// written of the changed rows, byte for byte, it keeps its mode and lock, and rows appended after
// it land in it.
func TestRewriteChangesOnlyTheRowsAskedFor(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.csv")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	rows := []Row{sample(1, true), sample(2, true), sample(3, false)}
	for _, r := range rows {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Rewrite(func(rs []Row) { rs[1].Warnings = "changed" }); err != nil {
		t.Fatal(err)
	}
	rows[1].Warnings = "changed"
	if err := w.Write(sample(4, true)); err != nil {
		t.Fatal(err)
	}
	rows = append(rows, sample(4, true))

	want := filepath.Join(dir, "want.csv")
	ww, err := Create(want)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		ww.Write(r)
	}
	ww.Close()
	got, _ := os.ReadFile(path)
	if wantData, _ := os.ReadFile(want); string(got) != string(wantData) {
		t.Errorf("rewritten file:\n%s\nwant:\n%s", got, wantData)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("rewritten file's mode: %v, %v; want 0644", fi.Mode(), err)
	}
	if _, _, _, err := Append(path); err == nil {
		t.Error("the rewritten file is not locked: a second iotbench could append to it")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".r.csv.*")); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}
