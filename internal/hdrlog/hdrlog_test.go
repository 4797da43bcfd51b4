package hdrlog

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/iotbench/iotbench/internal/golden"
	"github.com/iotbench/iotbench/internal/latency"
)

func goldenFile(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), got)
}

// known is 1..1000 ms, one value each, as the load engine records (µs, 3 digits, 1 min ceiling).
func known() *latency.Recorder {
	r := latency.NewRecorder(time.Minute)
	for i := 1; i <= 1000; i++ {
		r.Record(time.Duration(i) * time.Millisecond)
	}
	return r
}

func TestPercentileDistribution(t *testing.T) {
	r := known()
	var buf bytes.Buffer
	if err := WritePercentiles(&buf, r.Histogram()); err != nil {
		t.Fatal(err)
	}
	goldenFile(t, "known.hgrm", buf.Bytes())
	rows, err := ReadPercentiles(&buf)
	if err != nil {
		t.Fatal(err)
	}
	s := r.Summary()
	want := map[float64]time.Duration{0.5: s.P50, 0.9: s.P90, 0.99: s.P99, 0.999: s.P999, 1: s.Max}
	for _, row := range rows {
		if d, ok := want[row.Percentile]; ok {
			// The summary and the file come from one histogram: equal to the microsecond.
			if got := time.Duration(row.Value * float64(time.Millisecond)).Round(time.Microsecond); got != d {
				t.Errorf("percentile %v: %v in the file, %v in the summary", row.Percentile, got, d)
			}
			delete(want, row.Percentile)
		}
	}
	if len(want) > 0 {
		t.Errorf("percentiles missing from the file: %v", want)
	}
	for i := 1; i < len(rows); i++ {
		if rows[i].Value < rows[i-1].Value || rows[i].Percentile <= rows[i-1].Percentile || rows[i].TotalCount < rows[i-1].TotalCount {
			t.Errorf("row %d %+v does not follow row %d %+v", i, rows[i], i-1, rows[i-1])
		}
	}
	if last := rows[len(rows)-1]; last.Percentile != 1 || last.TotalCount != 1000 {
		t.Errorf("last row %+v, want percentile 1 and all 1000 values", last)
	}
}

func TestFooterGeometry(t *testing.T) {
	// 1 µs .. 1 min at 3 digits: 2048 sub-buckets; 2048·2^(n-1) > 60e6 takes 16 more doublings.
	h := known().Histogram()
	if got := subBucketCount(h); got != 2048 {
		t.Errorf("sub-buckets %d, want 2048", got)
	}
	if got := bucketCount(h); got != 16 {
		t.Errorf("buckets %d, want 16", got)
	}
}

func TestLogRoundTrip(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 678_000_000, time.UTC)
	var intervals []Interval
	whole := latency.NewRecorder(time.Minute)
	for s := range 3 {
		r := latency.NewRecorder(time.Minute)
		for i := 1; i <= 100*(s+1); i++ {
			d := time.Duration(i*(s+1)) * time.Millisecond
			r.Record(d)
			whole.Record(d)
		}
		enc, err := r.Encode()
		if err != nil {
			t.Fatal(err)
		}
		tag := ""
		if s == 0 {
			tag = "warmup"
		}
		intervals = append(intervals, Interval{Tag: tag, Start: time.Duration(s) * time.Second, Length: time.Second, Max: r.Summary().Max, Encoded: enc})
	}
	in := Log{Comment: "iotbench test", StartTime: start, Intervals: intervals}
	var buf bytes.Buffer
	if err := Write(&buf, in); err != nil {
		t.Fatal(err)
	}
	goldenFile(t, "three.hlog", buf.Bytes())
	out, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if out.Comment != in.Comment || !out.StartTime.Equal(start) || len(out.Intervals) != 3 {
		t.Fatalf("read %q %v with %d intervals, wrote %q %v with 3", out.Comment, out.StartTime, len(out.Intervals), in.Comment, start)
	}
	var hs []*hdrhistogram.Histogram
	for i, got := range out.Intervals {
		w := in.Intervals[i]
		if got.Tag != w.Tag || got.Start != w.Start || got.Length != w.Length || got.Max != w.Max {
			t.Errorf("interval %d read as %s %v+%v max %v, written %s %v+%v max %v", i, got.Tag, got.Start, got.Length, got.Max, w.Tag, w.Start, w.Length, w.Max)
		}
		h, err := got.Histogram()
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	pool, err := Merge(hs...)
	if err != nil {
		t.Fatal(err)
	}
	if !pool.Equals(whole.Histogram()) {
		t.Errorf("the intervals merged differ from the values recorded: %d values, p99 %d µs; want %d, %d µs",
			pool.TotalCount(), pool.ValueAtQuantile(99), whole.Summary().Count, whole.Summary().P99.Microseconds())
	}
}

func TestMergeWidensAndKeepsEveryValue(t *testing.T) {
	narrow := latency.NewRecorder(time.Second)
	narrow.Record(500 * time.Millisecond)
	wide := latency.NewRecorder(time.Minute)
	wide.Record(30 * time.Second)
	pool, err := Merge(narrow.Histogram(), wide.Histogram())
	if err != nil {
		t.Fatal(err)
	}
	if pool.TotalCount() != 2 || pool.Max() < 29_900_000 {
		t.Errorf("pool of %d values, max %d µs; want 2 and 30 s", pool.TotalCount(), pool.Max())
	}
}

func TestReadErrorsNameTheLine(t *testing.T) {
	enc, _ := known().Encode()
	cases := []struct{ name, log, want string }{
		{"three fields", "#c\n0.000,1.000,2.000\n", "line 2: an interval has 4 fields"},
		{"bad start", "x,1.000,2.000," + string(enc) + "\n", `line 1: interval start "x"`},
		{"bad histogram", "0.000,1.000,2.000,HISTFAAAAnope\n", "line 1: interval histogram"},
		{"tag alone", "Tag=warmup\n", "line 1: a tag without an interval"},
		{"bad start time", "#[StartTime: soon (seconds since epoch)]\n", "line 1: StartTime"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(c.log))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

func FuzzRead(f *testing.F) {
	enc, _ := known().Encode()
	f.Add("#[StartTime: 1.000 (seconds since epoch), x]\n" + Legend + "\nTag=a,0.000,1.000,2.000," + string(enc) + "\n")
	f.Add("0,0,0,\n#\n\"StartTimestamp\"\n")
	f.Fuzz(func(t *testing.T, log string) {
		l, err := Read(strings.NewReader(log))
		if err != nil {
			return
		}
		// What was read writes back and reads again the same.
		var buf bytes.Buffer
		if err := Write(&buf, l); err != nil {
			return // a tag Write refuses (Read is lenient about tags)
		}
		again, err := Read(&buf)
		if err != nil || len(again.Intervals) != len(l.Intervals) {
			t.Fatalf("rewritten log read back with %v, %d intervals of %d", err, len(again.Intervals), len(l.Intervals))
		}
	})
}
