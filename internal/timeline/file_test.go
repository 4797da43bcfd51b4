package timeline

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func sampleCell() Cell {
	return Cell{
		Key:    Key{Scenario: "io-heavy", Target: "fastify", Trial: 2, RequestedRPS: 1000},
		Warmup: []Second{{Index: 0, Due: 1000, Sent: 999, Successes: 990, Status: 9, InFlight: 3, P50: 2 * time.Millisecond, P99: 9500 * time.Microsecond, Max: 12 * time.Millisecond}},
		Measure: []Second{
			{Index: 0, Due: 1000, Sent: 1000, Successes: 1000, P50: 1500 * time.Microsecond, P99: 3 * time.Millisecond, Max: 4 * time.Millisecond, OwnDelayP99: 200 * time.Microsecond, CPUCores: 0.812, MemoryBytes: 123 << 20},
			{Index: 1, Due: 1000, Sent: 1000, Successes: 996, Timeouts: 1, Transport: 2, Check: 1, InFlight: 5, P50: 1600 * time.Microsecond, P99: 800 * time.Millisecond, Max: time.Second},
		},
	}
}

func TestFileRoundTrip(t *testing.T) {
	cells := []Cell{sampleCell(), {Key: Key{Scenario: "io-heavy.find-max", Target: "koa", Trial: 1, RequestedRPS: 4000}, Measure: []Second{{Index: 0, Sent: 4000, Successes: 4000}}}}
	var buf bytes.Buffer
	w := csvWriter(&buf)
	for _, c := range cells {
		if err := writeCell(w, c); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	got, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, cells) {
		t.Errorf("read back\n%+v\nwrote\n%+v", got, cells)
	}
}

func TestReadErrors(t *testing.T) {
	head := strings.Join(Header(), ",")
	line := func(version, second string) string {
		return version + ",s,t,1,100,measure," + second + ",1,1,1,0,0,0,0,0,1.000,2.000,3.000,0.100,0.500,1024"
	}
	cases := []struct{ name, file, want string }{
		{"empty", "", "line 1: empty file"},
		{"not a timeline", "scenario,target\n", "line 1: not an iotbench timeline: the header lacks timeline_version"},
		{"newer version", head + "\n" + line("2", "0") + "\n", "line 2: column timeline_version: \"2\" is not version 2, newer than this iotbench reads (1)"},
		{"bad second", head + "\n" + line("1", "-1") + "\n", "line 2: column second: \"-1\" is not a second from the phase's start"},
		{"short line", head + "\n1,s,t\n", "line 2: 3 fields, but the header has 21"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(c.file))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

func FuzzRead(f *testing.F) {
	var buf bytes.Buffer
	w := csvWriter(&buf)
	_ = writeCell(w, sampleCell())
	w.Flush()
	f.Add(buf.String())
	f.Fuzz(func(t *testing.T, file string) {
		cells, err := Read(strings.NewReader(file))
		if err != nil {
			return
		}
		var out bytes.Buffer
		w := csvWriter(&out)
		for _, c := range cells {
			if err := writeCell(w, c); err != nil {
				t.Fatal(err)
			}
		}
		w.Flush()
		again, err := Read(&out)
		if err != nil || len(again) != len(cells) {
			t.Fatalf("rewritten timeline read back with %v, %d cells of %d", err, len(again), len(cells))
		}
	})
}

func TestPaths(t *testing.T) {
	csv := "results/20260102T030405Z.csv"
	if got := Path(csv); got != "results/20260102T030405Z.timeline/timeline.csv" {
		t.Errorf("Path = %s", got)
	}
	cases := []struct {
		k    Key
		want string
	}{
		{Key{"io-heavy", "spring-mvc-virtual", 3, 2000}, "results/20260102T030405Z.timeline/io-heavy_spring-mvc-virtual_t3"},
		{Key{"io-heavy.find-max", "koa", 1, 4500}, "results/20260102T030405Z.timeline/io-heavy.find-max_koa_t1_4500rps"},
		{Key{"a b/c", "x", 1, 0}, "results/20260102T030405Z.timeline/a-b-c_x_t1"},
	}
	for _, c := range cases {
		if got := HistogramBase(csv, c.k); got != c.want {
			t.Errorf("HistogramBase(%v) = %s, want %s", c.k, got, c.want)
		}
	}
}

// TestWriterCutsOffACellItCannotWrite: a cell that fills the disk mid-line is cut off again, so
// the file still reads, and a cell written once there is room again follows the earlier ones.
func TestWriterCutsOffACellItCannotWrite(t *testing.T) {
	for _, c := range []struct {
		name       string
		before     int // cells written before the disk fills
		wantBefore int
	}{
		{"the header and a cell written, then full", 1, 1},
		{"full from the first line", 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "timeline.csv")
			w, err := Create(path)
			if err != nil {
				t.Fatal(err)
			}
			disk := &fillingFile{File: w.f.(*os.File), room: 1 << 20}
			w.f, w.w = disk, csvWriter(disk) // nothing written yet: the header is still buffered
			first, lost, last := sampleCell(), sampleCell(), sampleCell()
			first.Trial, lost.Trial, last.Trial = 1, 2, 3
			for range c.before {
				if err := w.Write(first); err != nil {
					t.Fatal(err)
				}
			}
			disk.room = 40
			if err := w.Write(lost); !errors.Is(err, errNoSpace) {
				t.Fatalf("error %v, want the disk's", err)
			}
			if c.wantBefore == 0 {
				if st, err := os.Stat(path); err != nil || st.Size() != 0 {
					t.Errorf("after the failed cell: %v, want the file empty as created", err)
				}
			} else if got := readCells(t, path); len(got) != c.wantBefore {
				t.Errorf("after the failed cell: %d cells read, want %d", len(got), c.wantBefore)
			}
			disk.room = 1 << 20
			if err := w.Write(last); err != nil {
				t.Fatal(err)
			}
			w.Close()
			got := readCells(t, path)
			if len(got) != c.wantBefore+1 || got[len(got)-1].Trial != 3 {
				t.Errorf("cells %+v, want the earlier ones and trial 3", got)
			}
		})
	}
}

func readCells(t *testing.T, path string) []Cell {
	t.Helper()
	cells, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return cells
}
