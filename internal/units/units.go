// Package units writes iotbench's figures as people read them: latencies in milliseconds, rates
// and counts with thousands separators, bytes, cores and percentages. Every output formats its
// numbers here, so that a p99 reads the same in a table, a report and a log line.
package units

import (
	"fmt"
	"math"
	"time"
)

// Millis writes a latency in milliseconds with three significant digits or so: 0.42 ms, 52.0 ms,
// 2100 ms.
func Millis(d time.Duration) string {
	v := float64(d) / 1e6
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f ms", v)
	case v >= 10:
		return fmt.Sprintf("%.1f ms", v)
	}
	return fmt.Sprintf("%.2f ms", v)
}

// MillisOrSeconds writes ms milliseconds as Millis does below a second and in seconds from one
// on; ∞ for an unbounded interval's end.
func MillisOrSeconds(ms float64) string {
	switch {
	case math.IsInf(ms, 0):
		return "∞"
	case ms >= 1000:
		return fmt.Sprintf("%.2f s", ms/1000)
	}
	return Millis(time.Duration(ms * 1e6))
}

// Count writes a number with thousands separators, and one decimal below 100 when it has any.
func Count(v float64) string {
	if math.IsInf(v, 0) {
		return "∞"
	}
	if math.Abs(v) < 100 && v != math.Trunc(v) {
		return fmt.Sprintf("%.1f", v)
	}
	s := fmt.Sprintf("%.0f", math.Abs(v))
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if v < 0 {
		return "-" + string(out)
	}
	return string(out)
}

// Bytes writes a size in decimal units: 812 B, 4.2 kB, 1.31 MB.
func Bytes(v float64) string {
	switch {
	case math.IsInf(v, 0):
		return "∞"
	case v >= 1e6:
		return fmt.Sprintf("%.2f MB", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1f kB", v/1e3)
	}
	return fmt.Sprintf("%.0f B", v)
}

// MiB writes a memory size given in MiB.
func MiB(mib float64) string { return fmt.Sprintf("%.0f MiB", mib) }

// BytesAsMiB writes a memory size given in bytes, in MiB.
func BytesAsMiB(bytes int64) string { return MiB(float64(bytes) / (1 << 20)) }

// Cores writes CPU cores busy.
func Cores(v float64) string { return fmt.Sprintf("%.2f", v) }

// Percent writes a percentage, with three decimals under 0.1%.
func Percent(v float64) string {
	if v != 0 && v < 0.1 {
		return fmt.Sprintf("%.3f%%", v)
	}
	return fmt.Sprintf("%.1f%%", v)
}
