// Package safetext keeps text that came from input (a results file, a scenario, a target's
// answer or log) from acting on whoever reads an output: names are checked where they enter,
// free text is neutralised where it is printed. A terminal must not receive control codes (an
// escape sequence can move the cursor, recolour or erase what was printed), a markdown comment
// must not receive markup (a tag, a link, emphasis painted over a verdict).
package safetext

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// NameChars says, for error messages and docs, which characters a name may hold.
const NameChars = "letters, digits and . _ - : / + [ ]"

// MaxNameLen is the longest name: a longer one is not a name but a payload.
const MaxNameLen = 100

// CheckName reports what is wrong with name as the name of a target, a scenario, a variant or a
// run: it must be 1 to MaxNameLen characters from NameChars. The set holds every name iotbench
// writes (scenario names, host:port of --url, [::1]:port) and nothing a terminal or markdown acts
// on but '_', '[' and ']', which the markdown writers escape.
func CheckName(name string) error {
	if name == "" {
		return fmt.Errorf("a name cannot be empty: use %s", NameChars)
	}
	for _, r := range name {
		if !nameRune(r) {
			return fmt.Errorf("%q is not allowed in a name: use %s", r, NameChars)
		}
	}
	if len(name) > MaxNameLen { // its characters are bytes now
		return fmt.Errorf("%d characters is too long for a name: at most %d, of %s", len(name), MaxNameLen, NameChars)
	}
	return nil
}

func nameRune(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("._-:/+[]", r)
}

// Terminal is s with every character that can act on a terminal or fake a line shown as an
// escape: control characters (line ends and tabs too) as \x1b, \n, \t; bidirectional overrides
// and line separators as \u202e; bytes that are not UTF-8 as \xff. Text without them is returned
// as it is.
func Terminal(s string) string { return neutralise(s, "") }

// TerminalLines is Terminal keeping line ends: for text of several lines whose breaks belong to
// it (an error listing one problem a line, a quoted log).
func TerminalLines(s string) string { return neutralise(s, "\n") }

// Document is Terminal keeping line ends, carriage returns and tabs: for a whole document whose
// layout they are (an HTML page, where they are white space), so that only what it quotes from
// input loses its control codes and bidirectional overrides.
func Document(s string) string { return neutralise(s, "\n\r\t") }

// neutralise escapes every unsafe character of s but those in keep.
func neutralise(s string, keep string) string {
	if clean(s, keep) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case hazard(r) && !strings.ContainsRune(keep, r):
			b.WriteString(escape(r))
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// clean says whether s has nothing neutralise would change: the common case, without allocating.
func clean(s string, keep string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 || hazard(r) && !strings.ContainsRune(keep, r) {
			return false
		}
		i += size
	}
	return true
}

// hazard says whether r acts on a terminal or changes how the text around it reads: C0 and C1
// controls, DEL, the bidirectional embeddings, overrides and isolates (they reorder what is
// shown), and the Unicode line and paragraph separators.
func hazard(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, 0x80 <= r && r <= 0x9f:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, 0x202a <= r && r <= 0x202e, 0x2066 <= r && r <= 0x2069:
		return true
	case r == 0x2028, r == 0x2029, r == 0xfeff:
		return true
	}
	return false
}

func escape(r rune) string {
	switch r {
	case '\n':
		return `\n`
	case '\r':
		return `\r`
	case '\t':
		return `\t`
	}
	if r < 0x100 {
		return fmt.Sprintf(`\x%02x`, r)
	}
	return fmt.Sprintf(`\u%04x`, r)
}

// markup are the characters GitHub-flavoured markdown acts on inside a line: a backslash escape
// makes each literal. '<' and '&' start HTML and entities, '[' ']' links and images, '*' '_' '~'
// emphasis and strike-through, '`' code, '|' a table cell's end, '$' math.
const markup = "\\`*_[]<>|~&$"

// Markdown is s as literal text inside a line of GitHub-flavoured markdown (a table cell, a list
// item): Terminal's escapes for control characters, so no line can be added, and a backslash
// before every character that would be markup. A line-start marker at its beginning (# + - >, or
// "1. " of a numbered list) is escaped too, since a list item's text begins a block of its own.
func Markdown(s string) string {
	s = Terminal(s)
	if !strings.ContainsAny(s, markup) && !blockStart(s) {
		return s
	}
	var b strings.Builder
	if blockStart(s) {
		// The marker itself, when markup does not escape it already.
		n := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' })
		if !strings.ContainsRune(markup, rune(s[n])) {
			b.WriteString(s[:n])
			b.WriteByte('\\')
			b.WriteByte(s[n])
			s = s[n+1:]
		}
	}
	for _, r := range s {
		if strings.ContainsRune(markup, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// MarkdownCode is s as a code span in a table cell of GitHub-flavoured markdown (a commit, an
// id): Terminal's escapes, so no line can be added; a fence of backticks longer than any run of
// them in s, so none ends the span early (with a space inside when s starts or ends with one);
// and '|' as "\|", which a table reads as part of the cell, also inside code, so that it cannot end
// the cell. Markup inside a code span is shown, never acted on.
func MarkdownCode(s string) string {
	s = strings.ReplaceAll(Terminal(s), "|", `\|`)
	longest, run := 0, 0
	for _, r := range s {
		run++
		if r != '`' {
			run = 0
		}
		longest = max(longest, run)
	}
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	fence := strings.Repeat("`", longest+1)
	return fence + s + fence
}

// blockStart says whether s begins with what starts a block at the beginning of a line: a
// heading, a list, a quote, a numbered list's "1. " or "1) ".
func blockStart(s string) bool {
	if s == "" {
		return false
	}
	if strings.ContainsRune("#+->", rune(s[0])) {
		return true
	}
	n := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	return n > 0 && (s[n] == '.' || s[n] == ')') && (n+1 == len(s) || s[n+1] == ' ')
}
