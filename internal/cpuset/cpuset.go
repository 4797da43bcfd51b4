// Package cpuset reads and writes CPU lists as Docker, taskset and the kernel write them
// ("1", "0-2", "0,2-3").
package cpuset

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// MaxCPUs bounds the CPU numbers of a list read from a file measured elsewhere: Linux's largest
// NR_CPUS. A list measured on this machine is bounded by its own CPU count instead.
const MaxCPUs = 8192

// Parse reads a CPU list into sorted, distinct CPU numbers, each below limit. The bound is checked
// before a range is expanded, so a list such as "0-4000000000" costs nothing. Errors do not repeat
// the list: the caller names it.
func Parse(s string, limit int) ([]int, error) {
	var cpus []int
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a < 0 || b < a {
			return nil, errors.New("not a CPU list (e.g. 1, 2-3, 0,2)")
		}
		if b >= limit {
			return nil, fmt.Errorf("names CPU %d, but CPUs are numbered 0 to %d here", b, limit-1)
		}
		for c := a; c <= b; c++ {
			cpus = append(cpus, c)
		}
	}
	slices.Sort(cpus)
	return slices.Compact(cpus), nil
}

// Union is the CPUs of sets together, sorted and distinct.
func Union(sets ...[]int) []int {
	return slices.Compact(slices.Sorted(slices.Values(slices.Concat(sets...))))
}

// Format writes CPU numbers as a list, folding runs: [0 1 2 5] → "0-2,5".
func Format(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if j > i {
			fmt.Fprintf(&b, "%d-%d", cpus[i], cpus[j])
		} else {
			fmt.Fprintf(&b, "%d", cpus[i])
		}
		i = j + 1
	}
	return b.String()
}
