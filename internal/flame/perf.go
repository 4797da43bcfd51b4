package flame

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/iotbench/iotbench/internal/safetext"
)

// noStack stands for a sample perf recorded without its call chain (perf record without -g):
// its CPU time is still spent, and a box of this name says why the graph is flat.
const noStack = "[no call stack]"

// maxLine is the longest line the parsers read: a stack of a thousand long C++ frames fits.
const maxLine = 4 << 20

// maxErrors is how many line errors a parse reports before it counts the rest: a binary file
// must not print a million lines.
const maxErrors = 20

// ParsePerfScript reads the output of `perf script` with its default fields: per sample a header
// line (`comm pid [cpu] time: period event:`), the call chain one frame a line, leaf first,
// and a blank line. Each sample becomes one stack, root first, of cleaned frames (see cleanFrame);
// the thread's name is not part of it, so that a pool of workers folds into one graph. A line
// that is neither a header, a frame nor blank is an error naming its line.
func ParsePerfScript(r io.Reader) (Profile, error) {
	var (
		p        Profile
		errs     lineErrors
		frames   []string // the current sample's, leaf first
		inSample bool
	)
	flush := func(line int) {
		if !inSample {
			return
		}
		if len(frames) == 0 {
			frames = append(frames, noStack)
		}
		slices.Reverse(frames)
		if err := p.add(strings.Join(frames, ";"), 1); err != nil {
			errs.add(line, "%v", err)
		}
		frames, inSample = frames[:0], false
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, maxLine)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" {
			flush(n)
			continue
		}
		// perf indents frames with a tab and right-aligns the thread's name with spaces: a tab
		// says frame first, since an address could pass for a thread's name.
		if line[0] != '\t' && isHeader(line) {
			flush(n)
			inSample = true
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			if f, ok := parseFrame(line); ok {
				if !inSample {
					errs.add(n, "a frame before any sample's header line: %s", quote(line))
					continue
				}
				frames = append(frames, f)
				continue
			}
		}
		if isHeader(line) {
			flush(n)
			inSample = true
			continue
		}
		errs.add(n, "want a sample's header (comm pid time: event:), a frame (address symbol (dso)) or a blank line, got %s", quote(line))
	}
	if err := sc.Err(); err != nil {
		return Profile{}, scanError(n+1, err)
	}
	flush(n) // a last sample without its blank line
	if err := errs.err(); err != nil {
		return Profile{}, err
	}
	return p, nil
}

// isHeader says whether line opens a sample: after the thread's name (which may hold spaces),
// the first all-digit field (pid, or pid/tid) followed by a time ending in ':', a CPU in
// brackets possibly between them.
func isHeader(line string) bool {
	fields := strings.Fields(line)
	for i := 1; i < len(fields); i++ { // fields[0] is the name at least
		if !isPID(fields[i]) {
			continue
		}
		j := i + 1
		if j < len(fields) && isCPU(fields[j]) {
			j++
		}
		if j < len(fields) && isTime(fields[j]) {
			return true
		}
	}
	return false
}

func isPID(s string) bool {
	pid, tid, ok := strings.Cut(s, "/")
	return digits(pid) && (!ok || digits(tid))
}

func isCPU(s string) bool {
	inner, ok := strings.CutPrefix(s, "[")
	inner, ok2 := strings.CutSuffix(inner, "]")
	return ok && ok2 && digits(inner)
}

func isTime(s string) bool {
	t, ok := strings.CutSuffix(s, ":")
	sec, frac, dot := strings.Cut(t, ".")
	return ok && digits(sec) && (!dot || digits(frac))
}

func digits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

func hexDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789abcdefABCDEF") == ""
}

// parseFrame reads a call chain's line, `address symbol+offset (dso)`, into a clean frame.
func parseFrame(line string) (string, bool) {
	rest := strings.TrimSpace(line)
	addr, rest, _ := strings.Cut(rest, " ")
	if !hexDigits(addr) {
		return "", false
	}
	rest = strings.TrimSpace(rest)
	sym, dso := rest, ""
	if open := dsoStart(rest); open >= 0 {
		sym, dso = strings.TrimSpace(rest[:open]), rest[open+1:len(rest)-1]
	}
	return cleanFrame(sym, dso), true
}

// dsoStart is the index of the '(' that opens the parenthesis closing s, or -1. Matching the
// parentheses, not the last " (", keeps "(/memfd:x (deleted))" whole.
func dsoStart(s string) int {
	if !strings.HasSuffix(s, ")") {
		return -1
	}
	depth := 0
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				if i > 0 && s[i-1] != ' ' {
					return -1 // a symbol's own parentheses, foo(int), and no DSO
				}
				return i
			}
		}
	}
	return -1
}

// cleanFrame makes one frame of a stack from perf's symbol and DSO: short and readable, its kind
// annotated (see the package comment).
//
//	JS:*monteCarloPi file:///app/contract/work.js:22:29  monteCarloPi (contract/work.js:22)_[j]
//	JS:^ file:///app/fastify/server.js:203:5             (anonymous) (fastify/server.js:203)_[j]
//	Lcom/example/Foo;::bar (/tmp/perf-1.map)             com.example.Foo::bar_[j]
//	tcp_sendmsg ([kernel.kallsyms])                      tcp_sendmsg_[k]
//	[unknown] (/usr/lib/x86_64-linux-gnu/libc.so.6)      [unknown in libc.so.6]
func cleanFrame(sym, dso string) string {
	sym = stripOffset(sym)
	kernel := strings.HasPrefix(dso, "[kernel.")
	jit := isPerfMap(dso)
	var name string
	switch {
	case sym == "" || sym == "[unknown]":
		name = "[unknown]"
		if dso != "" && dso != "[unknown]" && !kernel {
			name = "[unknown in " + path.Base(dso) + "]"
		}
		jit = false // its colour says unknown, not JIT
	case isV8(sym):
		name, jit = v8Frame(sym), true
	case isJavaClass(sym):
		name = javaFrame(sym)
	case jit && hotspotMethod.MatchString(sym):
		// A lambda's or hidden class's address differs from one run to the next.
		name = hiddenClassAddress.ReplaceAllString(hotspotMethod.FindStringSubmatch(sym)[1], "")
	default:
		name = sym
	}
	name = tidy(name)
	if name == "" {
		name = "[unknown]"
	}
	switch {
	case kernel:
		name += kernelMark
	case jit:
		name += jitMark
	}
	return name
}

// tidy makes s fit to be a frame: no ";" (the folded separator), no control characters, no
// white space around it.
func tidy(s string) string {
	return strings.TrimSpace(strings.ReplaceAll(safetext.Terminal(s), ";", ":"))
}

// stripOffset drops "+0x2e7", where in the function the sample was: the graph counts functions.
func stripOffset(sym string) string {
	if i := strings.LastIndex(sym, "+0x"); i > 0 && hexDigits(sym[i+3:]) {
		return sym[:i]
	}
	return sym
}

// isPerfMap says whether dso is a perf map, /tmp/perf-<pid>.map, where a VM writes the
// symbols of the code it compiled.
func isPerfMap(dso string) bool {
	b := path.Base(dso)
	pid, ok := strings.CutPrefix(b, "perf-")
	pid, ok2 := strings.CutSuffix(pid, ".map")
	return ok && ok2 && digits(pid)
}

// v8Prefixes mark a JavaScript function in V8's perf map: "JS:" since Node 18 or so, the older
// names before.
var v8Prefixes = []string{"JS:", "LazyCompile:", "Function:"}

func isV8(sym string) bool {
	for _, p := range v8Prefixes {
		if strings.HasPrefix(sym, p) {
			return true
		}
	}
	return false
}

// v8Frame is "name (place:line)" from V8's "JS:*name file:///app/x.js:22:29": the tier marker
// (~ interpreted, ^ baseline, + Maglev, * TurboFan) would split one function into several
// boxes, and the container's /app/ and the column are noise beside the line.
func v8Frame(sym string) string {
	for _, p := range v8Prefixes {
		sym = strings.TrimPrefix(sym, p)
	}
	if sym != "" && strings.ContainsRune("*~^+", rune(sym[0])) {
		sym = sym[1:]
	}
	name, place := sym, ""
	if i := strings.LastIndex(sym, " "); i >= 0 && strings.Contains(sym[i+1:], ":") {
		name, place = strings.TrimSpace(sym[:i]), shortPlace(sym[i+1:])
	}
	if name == "" {
		name = "(anonymous)"
	}
	if place == "" {
		return name
	}
	return name + " (" + place + ")"
}

// shortPlace is file:///app/contract/work.js:22:29 as contract/work.js:22.
func shortPlace(s string) string {
	s = strings.TrimPrefix(s, "file://")
	s = strings.TrimPrefix(s, "/app/")
	if i := strings.LastIndex(s, ":"); i > 0 && digits(s[i+1:]) {
		if j := strings.LastIndex(s[:i], ":"); j > 0 && digits(s[j+1:i]) {
			s = s[:i] // line and column: keep the line
		}
	}
	return s
}

// hotspotMethod is a method as HotSpot's own perf map names it, "double
// iotbench.contract.Work.monteCarloPi(int)": the return type and the parameters are noise beside
// the qualified name, and would split an overloaded method's box only where Java does.
var hotspotMethod = regexp.MustCompile(`^[\w$.<>\[\], ?]+ ([\w$.<>/]+\.[\w$<>]+)\(.*\)$`)

var hiddenClassAddress = regexp.MustCompile(`/0x[0-9a-f]+`)

// isJavaClass says whether sym names a method by its class's descriptor, Lcom/example/Foo;::bar,
// as perf-map-agent writes it by default.
func isJavaClass(sym string) bool {
	i := strings.Index(sym, ";::")
	return strings.HasPrefix(sym, "L") && i > 1
}

// javaFrame is Lcom/example/Foo;::bar as com.example.Foo::bar, the name Java programmers read.
func javaFrame(sym string) string {
	class, method, _ := strings.Cut(sym[1:], ";::")
	return strings.ReplaceAll(class, "/", ".") + "::" + method
}

// lineErrors collects a parse's errors, each at its line.
type lineErrors struct {
	list  []error
	extra int
}

func (e *lineErrors) add(line int, format string, args ...any) {
	if len(e.list) == maxErrors {
		e.extra++
		return
	}
	e.list = append(e.list, fmt.Errorf("line %d: %s", line, fmt.Sprintf(format, args...)))
}

func (e *lineErrors) err() error {
	if e.extra > 0 {
		return errors.Join(append(e.list, fmt.Errorf("and %d more lines with errors", e.extra))...)
	}
	return errors.Join(e.list...)
}

// scanError names the line a read stopped at.
func scanError(line int, err error) error {
	if errors.Is(err, bufio.ErrTooLong) {
		return fmt.Errorf("line %d: longer than %d MiB", line, maxLine>>20)
	}
	return fmt.Errorf("line %d: %w", line, err)
}

// quote is line for an error message: quoted, its control codes escaped, and cut short.
func quote(line string) string {
	const most = 80
	if r := []rune(line); len(r) > most {
		return fmt.Sprintf("%q…", string(r[:most]))
	}
	return fmt.Sprintf("%q", line)
}
