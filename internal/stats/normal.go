package stats

import "math"

// Sample-size planning under the normal approximation: how wide an interval from n values is,
// how many values would narrow it to a width wanted, and the smallest shift n values detect.
// Intervals narrow as 1/√n whatever the test, so these plan rounds for the rank tests too.

// NormalQuantile is the standard normal's quantile: NormalQuantile(0.975) = 1.959964; −Inf at 0,
// +Inf at 1.
func NormalQuantile(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }

// HalfWidth is the half-width of the two-sided interval at confidence around a mean of n values
// whose standard deviation is sd: z((1+confidence)/2)·sd/√n.
func HalfWidth(sd float64, n int, confidence float64) float64 {
	return NormalQuantile((1+confidence)/2) * sd / math.Sqrt(float64(n))
}

// SampleSize is how many values would narrow an interval of halfWidth, from n values, to want:
// n·(halfWidth/want)², not rounded. +Inf when want is 0.
func SampleSize(n int, halfWidth, want float64) float64 {
	return float64(n) * (halfWidth / want) * (halfWidth / want)
}

// Detectable is the smallest shift that a two-sided test at alpha detects with probability power
// from n values whose standard deviation is sd: (z(1−alpha/2) + z(power))·sd/√n.
func Detectable(sd float64, n int, alpha, power float64) float64 {
	return (NormalQuantile(1-alpha/2) + NormalQuantile(power)) * sd / math.Sqrt(float64(n))
}
