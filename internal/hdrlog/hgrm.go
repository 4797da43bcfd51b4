package hdrlog

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// TicksPerHalfDistance is how finely the percentile distribution steps, as
// outputPercentileDistribution's default: 5 levels between 0 and 50%, 5 more to 75%, and so on.
const TicksPerHalfDistance = 5

// Exact percentiles are listed in every distribution besides its ladder of levels, so that a
// reader finds p50 … p99.99 as iotbench reports them.
var Exact = []float64{50, 90, 99, 99.9, 99.99}

// Row is one line of a percentile distribution: the value (ms) at a percentile (a fraction),
// and how many values are at or below it.
type Row struct {
	Value      float64
	Percentile float64
	TotalCount int64
}

// Percentiles is h's percentile distribution: HdrHistogram's ladder of levels with the Exact
// percentiles among them, each with its value in ms as ValueAtPercentile gives it.
func Percentiles(h *hdrhistogram.Histogram) []Row {
	total := h.TotalCount()
	if total == 0 {
		return nil
	}
	var levels []float64
	for level := 0.0; ; {
		levels = append(levels, level)
		// The ladder ends when a level's rank is the last value.
		if rank := level / 100 * float64(total); rank >= float64(total-1) || level >= 100 {
			break
		}
		ticks := TicksPerHalfDistance * math.Pow(2, math.Floor(math.Log2(100/(100-level)))+1)
		level += 100 / ticks
	}
	levels = append(levels, Exact...)
	levels = append(levels, 100)
	slices.Sort(levels)
	levels = slices.Compact(levels)

	// Cumulative counts by bucket, to say how many values lie at or below each value.
	bars := h.Distribution()
	cum := make([]int64, len(bars))
	var c int64
	for i, b := range bars {
		c += b.Count
		cum[i] = c
	}
	rows := make([]Row, 0, len(levels))
	for _, level := range levels {
		v := h.ValueAtPercentile(level)
		i := sort.Search(len(bars), func(i int) bool { return bars[i].To >= v })
		n := total
		if i < len(bars) {
			n = cum[i]
		}
		rows = append(rows, Row{Value: float64(v) / UnitRatio, Percentile: level / 100, TotalCount: n})
	}
	return rows
}

// WritePercentiles writes h's percentile distribution as outputPercentileDistribution does
// (the .hgrm files HdrHistogram's plotter reads), values in ms.
func WritePercentiles(w io.Writer, h *hdrhistogram.Histogram) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%12s %14s %10s %14s\n\n", "Value", "Percentile", "TotalCount", "1/(1-Percentile)")
	for _, r := range Percentiles(h) {
		if r.Percentile < 1 {
			fmt.Fprintf(bw, "%12.3f %2.12f %10d %14.2f\n", r.Value, r.Percentile, r.TotalCount, 1/(1-r.Percentile))
		} else {
			fmt.Fprintf(bw, "%12.3f %2.12f %10d\n", r.Value, r.Percentile, r.TotalCount)
		}
	}
	fmt.Fprintf(bw, "#[Mean    = %12.3f, StdDeviation   = %12.3f]\n", h.Mean()/UnitRatio, h.StdDev()/UnitRatio)
	fmt.Fprintf(bw, "#[Max     = %12.3f, Total count    = %12d]\n", float64(h.Max())/UnitRatio, h.TotalCount())
	fmt.Fprintf(bw, "#[Buckets = %12d, SubBuckets     = %12d]\n", bucketCount(h), subBucketCount(h))
	return bw.Flush()
}

// bucketCount and subBucketCount describe h's geometry as outputPercentileDistribution's footer
// does; hdrhistogram-go keeps both unexported, so they are derived from its counts' length:
// (buckets + 1) × subBuckets/2.
func subBucketCount(h *hdrhistogram.Histogram) int64 {
	largest := 2 * math.Pow10(int(h.SignificantFigures()))
	return int64(math.Pow(2, math.Ceil(math.Log2(largest))))
}

func bucketCount(h *hdrhistogram.Histogram) int64 {
	return int64(len(h.Export().Counts))/(subBucketCount(h)/2) - 1
}

// ReadPercentiles reads the rows of a percentile distribution, skipping its header and footer.
func ReadPercentiles(r io.Reader) ([]Row, error) {
	var rows []Row
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		f := strings.Fields(sc.Text())
		if len(f) < 3 || strings.HasPrefix(f[0], "#") || f[0] == "Value" {
			continue
		}
		v, err1 := strconv.ParseFloat(f[0], 64)
		p, err2 := strconv.ParseFloat(f[1], 64)
		c, err3 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil || p < 0 || p > 1 {
			return nil, fmt.Errorf("line %d: not a value, percentile and count: %q", n, sc.Text())
		}
		rows = append(rows, Row{Value: v, Percentile: p, TotalCount: c})
	}
	return rows, sc.Err()
}
