// Package hdrlog reads and writes latency histograms in HdrHistogram's own file formats, so that
// its tools (HistogramLogProcessor, the plotter, wrk2's and Gatling's users' scripts) read
// iotbench's: the interval log (.hlog), one compressed histogram per interval, and the percentile
// distribution (.hgrm). It also pools histograms, checking that no value is lost.
//
// Histograms hold microseconds; both files state values in milliseconds (a unit ratio of 1000),
// as wrk2 does: HistogramLogProcessor reads the logs with -outputValueUnitRatio 1000.
package hdrlog

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// FormatVersion is the version of HdrHistogram's log format written (HistogramLogWriter's).
const FormatVersion = "1.3"

// UnitRatio turns the histograms' microseconds into the milliseconds the files show.
const UnitRatio = 1000.0

// Legend is the log's column header line, as HistogramLogWriter writes it.
const Legend = `"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"`

// Interval is one interval histogram of a log.
type Interval struct {
	// Tag marks intervals apart from the untagged ones HdrHistogram's tools read by default;
	// iotbench tags the warm-up's "warmup". No comma, space or line break.
	Tag string
	// Start is from the log's StartTime; Length the interval's.
	Start, Length time.Duration
	// Max is the largest value of the interval.
	Max time.Duration
	// Encoded is the histogram in HdrHistogram's compressed V2 encoding (base64 text).
	Encoded []byte
}

// Histogram decodes the interval's histogram.
func (i Interval) Histogram() (*hdrhistogram.Histogram, error) {
	return hdrhistogram.Decode(i.Encoded)
}

// Log is an interval log: who wrote it, when its intervals start from, and the intervals.
type Log struct {
	Comment   string // the first line, after '#'
	StartTime time.Time
	Intervals []Interval
}

// Write writes l in HdrHistogram's interval log format, version 1.3: a comment, the format
// version, the start time (unless zero), the legend, then one line per interval.
func Write(w io.Writer, l Log) error {
	bw := bufio.NewWriter(w)
	if l.Comment != "" {
		fmt.Fprintf(bw, "#%s\n", strings.ReplaceAll(l.Comment, "\n", " "))
	}
	fmt.Fprintf(bw, "#[Histogram log format version %s]\n", FormatVersion)
	if !l.StartTime.IsZero() {
		start := float64(l.StartTime.UnixMilli()) / 1000
		fmt.Fprintf(bw, "#[StartTime: %.3f (seconds since epoch), %s]\n", start, l.StartTime.UTC().Format(time.RFC3339Nano))
	}
	fmt.Fprintln(bw, Legend)
	for _, in := range l.Intervals {
		if strings.ContainsAny(in.Tag, ", \r\n") {
			return fmt.Errorf("interval tag %q: a tag holds no comma, space or line break", in.Tag)
		}
		if in.Tag != "" {
			fmt.Fprintf(bw, "Tag=%s,", in.Tag)
		}
		fmt.Fprintf(bw, "%.3f,%.3f,%.3f,%s\n", in.Start.Seconds(), in.Length.Seconds(), float64(in.Max.Microseconds())/UnitRatio, in.Encoded)
	}
	return bw.Flush()
}

// Read reads an interval log as Write writes it, and as HdrHistogram's writers do: comments and
// the legend are skipped, StartTime is read, every other line must be an interval. Errors name
// the line.
func Read(r io.Reader) (Log, error) {
	var l Log
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20) // an interval's histogram is a few KB; a wide one more
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "":
		case strings.HasPrefix(line, "#[StartTime: "):
			f := strings.Fields(strings.TrimPrefix(line, "#[StartTime: "))
			sec, err := strconv.ParseFloat(strings.TrimSuffix(f[0], ","), 64)
			if err != nil || sec < 0 || sec > 1e11 {
				return l, fmt.Errorf("line %d: StartTime %q is not seconds since the epoch", n, f[0])
			}
			l.StartTime = time.UnixMilli(int64(sec * 1000)).UTC()
		case strings.HasPrefix(line, "#"):
			if n == 1 {
				l.Comment = line[1:]
			}
		case strings.HasPrefix(line, `"StartTimestamp"`):
		default:
			in, err := parseInterval(line)
			if err != nil {
				return l, fmt.Errorf("line %d: %v", n, err)
			}
			l.Intervals = append(l.Intervals, in)
		}
	}
	return l, sc.Err()
}

func parseInterval(line string) (Interval, error) {
	var in Interval
	if rest, ok := strings.CutPrefix(line, "Tag="); ok {
		tag, after, found := strings.Cut(rest, ",")
		if !found {
			return in, errors.New("a tag without an interval")
		}
		in.Tag, line = tag, after
	}
	f := strings.Split(line, ",")
	if len(f) != 4 {
		return in, fmt.Errorf("an interval has 4 fields (start, length, max, histogram), this line %d", len(f))
	}
	var secs [3]float64
	for i, name := range []string{"start", "length", "max"} {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil || v < 0 || v > 1e11 {
			return in, fmt.Errorf("interval %s %q is not a number of seconds (milliseconds for max)", name, f[i])
		}
		secs[i] = v
	}
	in.Start = time.Duration(secs[0] * float64(time.Second)).Round(time.Millisecond)
	in.Length = time.Duration(secs[1] * float64(time.Second)).Round(time.Millisecond)
	in.Max = time.Duration(secs[2] * UnitRatio * float64(time.Microsecond)).Round(time.Microsecond)
	in.Encoded = []byte(f[3])
	if _, err := in.Histogram(); err != nil {
		return in, fmt.Errorf("interval histogram: %v", err)
	}
	return in, nil
}

// Merge pools histograms into a new one wide enough for all of them. It refuses to lose a value:
// the pool's count must be the sum of theirs.
func Merge(hs ...*hdrhistogram.Histogram) (*hdrhistogram.Histogram, error) {
	lowest, highest, digits := int64(1), int64(2), 3
	for _, h := range hs {
		highest = max(highest, h.HighestTrackableValue())
		digits = max(digits, int(h.SignificantFigures()))
	}
	pool := hdrhistogram.New(lowest, highest, digits)
	var want int64
	for _, h := range hs {
		want += h.TotalCount()
		if dropped := pool.Merge(h); dropped > 0 {
			return nil, fmt.Errorf("merging histograms dropped %d values", dropped)
		}
	}
	if got := pool.TotalCount(); got != want {
		return nil, fmt.Errorf("merged histogram holds %d values, its parts %d", got, want)
	}
	return pool, nil
}
