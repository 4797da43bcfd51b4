// Package flame keeps a target's CPU profile as call stacks with their sample counts: read from
// `perf script` or from folded stacks, written as folded stacks (Brendan Gregg's format, one
// `root;caller;leaf count` a line), drawn as a self-contained SVG flame graph for the HTML report,
// and compared between two runs function by function.
//
// Frame names are cleaned where they enter: no ";" (the folded separator), no control characters
// (safetext.Terminal's escapes), no surrounding white space, never empty. A frame's kind travels
// in its name as Gregg's annotations do, so that a folded file keeps it: "_[k]" ends a kernel
// frame, "_[j]" a JIT-compiled one (JavaScript under V8, Java), and an unknown frame starts with
// "[unknown". Label strips the annotation for display.
package flame

import (
	"errors"
	"math"
	"strings"
)

// Profile is CPU samples counted by call stack.
type Profile struct {
	// Stacks holds the samples of each stack: its frames joined by ";", root first.
	Stacks map[string]int64
	// Total is the sum of Stacks, the 100% of every share.
	Total int64
}

// Kind is what ran in a frame, told by its name; the flame graph colours frames by it.
type Kind int

// The kinds of frame.
const (
	Native  Kind = iota // compiled code: C, C++, Rust, Go, the runtime of a VM
	JIT                 // code a VM compiled at run time: JavaScript under V8, Java
	Kernel              // the operating system's kernel
	Unknown             // a frame perf could not name
)

var kindNames = [...]string{Native: "native", JIT: "JIT (JavaScript, Java)", Kernel: "kernel", Unknown: "unknown"}

// String names the kind as the legend does.
func (k Kind) String() string {
	if k < 0 || int(k) >= len(kindNames) {
		return "kind?"
	}
	return kindNames[k]
}

// The annotations a frame's name may end with, as FlameGraph's tools write them.
const (
	kernelMark = "_[k]"
	jitMark    = "_[j]"
)

// KindOf is the kind of the frame named frame.
func KindOf(frame string) Kind {
	switch {
	case strings.HasPrefix(frame, "[unknown"):
		return Unknown
	case strings.HasSuffix(frame, kernelMark):
		return Kernel
	case strings.HasSuffix(frame, jitMark):
		return JIT
	}
	return Native
}

// Label is frame as a reader sees it: without its kind's annotation, which the colour shows.
func Label(frame string) string {
	for _, m := range []string{kernelMark, jitMark} {
		if s, ok := strings.CutSuffix(frame, m); ok && s != "" {
			return s
		}
	}
	return frame
}

// errOverflow: a count that no int64 holds is not a profile but a broken or hostile file.
var errOverflow = errors.New("the samples add up to more than an int64 holds")

// add counts n samples of stack, the frames already clean and joined.
func (p *Profile) add(stack string, n int64) error {
	if p.Stacks == nil {
		p.Stacks = map[string]int64{}
	}
	if p.Total > math.MaxInt64-n {
		return errOverflow
	}
	p.Stacks[stack] += n
	p.Total += n
	return nil
}

// share is n of total, 0 for an empty profile rather than NaN.
func share(n, total int64) float64 {
	if total <= 0 {
		return 0
	}
	return float64(n) / float64(total)
}
