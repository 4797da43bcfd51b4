package results

import (
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
		SendLagP99: 812 * time.Microsecond, SendLagMax: 3 * time.Millisecond,
		Duration: 20 * time.Second, Warmup: 1500 * time.Millisecond, Valid: valid, InvalidReason: "a, \"quoted\" reason",
		StartedAt: time.Date(2026, 11, 22, 13, 0, 0, 0, time.UTC), CPUSet: "1", GeneratorCPUSet: "0", Memory: "1g",
		ImageID: "sha256:abc", TargetRuntime: "node 24.21.0", Version: "v0.1.0", GitCommit: "0855432",
		HostCPU: "AMD EPYC, 2 cores", Kernel: "6.1.0", DockerVersion: "20.10.24",
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

func TestReadErrors(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"not ours", "a,b\n1,2\n", "missing columns"},
		{"empty", "", "header"},
		{"bad number", strings.Join(Header(), ",") + "\n" + strings.Replace(strings.Repeat("x,", len(Header())-1)+"x", "x", "s", 2) + "\n", "column trial"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(c.in))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want one containing %q", err, c.want)
			}
		})
	}
}
