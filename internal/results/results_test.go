package results

import (
	"bytes"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func sample(trial int, valid bool) Row {
	return Row{
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
		Seed: -7243, PayloadSHA: "9f86d081884c7d65",
	}
}

func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.csv")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []Row{sample(1, true), sample(2, false)}
	for _, r := range want {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	// Each row is on disk before Close: an interrupted run keeps what it measured.
	early, err := ReadFile(path)
	if err != nil || len(early) != 2 {
		t.Fatalf("before close: %d rows, %v; want 2 rows on disk", len(early), err)
	}
	w.Close()
	got, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("round trip changed rows:\n got %+v\nwant %+v", got, want)
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

var update = flag.Bool("update", false, "rewrite golden files")

// TestReadFile reads every file of testdata/read and checks the outcome, the error message or
// the rows read, against its .golden file: the messages are part of the interface.
func TestReadFile(t *testing.T) {
	files, _ := filepath.Glob("testdata/read/*.csv")
	if len(files) < 10 {
		t.Fatalf("%d files in testdata/read", len(files))
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			rows, err := ReadFile(path)
			got := fmt.Sprintf("%d row(s)\n", len(rows))
			if err != nil {
				got = err.Error() + "\n"
			}
			golden := strings.TrimSuffix(path, ".csv") + ".golden"
			if *update {
				os.WriteFile(golden, []byte(got), 0o644)
				return
			}
			want, _ := os.ReadFile(golden)
			if got != string(want) {
				t.Errorf("got %q\nwant %q", got, want)
			}
		})
	}
}

// TestOldFilesStillRead: a file from before schema_version (version 1) reads, without the newer
// columns.
func TestOldFilesStillRead(t *testing.T) {
	rows, err := ReadFile("testdata/read/schema-1.csv")
	if err != nil || len(rows) == 0 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	if r := rows[0]; r.Scenario != "io-heavy" || r.Seed != 0 || r.PayloadSHA != "" || !r.Valid {
		t.Errorf("first row %+v", r)
	}
}

// FuzzRead: whatever the bytes, Read returns rows or an error without panicking, and rows it
// accepts survive being written and read again unchanged. Seed corpus: testdata/read and
// testdata/fuzz/FuzzRead.
func FuzzRead(f *testing.F) {
	files, _ := filepath.Glob("testdata/read/*.csv")
	for _, path := range files {
		data, _ := os.ReadFile(path)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := Read(bytes.NewReader(data))
		if err != nil {
			var pe *ParseError
			if errors.As(err, &pe) && pe.Line < 1 {
				t.Errorf("error at line %d: %v", pe.Line, err)
			}
			return
		}
		var once bytes.Buffer
		if err := write(&once, rows); err != nil {
			t.Fatal(err)
		}
		again, err := Read(bytes.NewReader(once.Bytes()))
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
