package safetext

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTerminal(t *testing.T) {
	if got, want := Document("<p>a\tb\r\n\x1b[2J\u202e</p>\n"), "<p>a\tb\r\n\\x1b[2J\\u202e</p>\n"; got != want {
		t.Errorf("Document = %q, want %q", got, want)
	}
	for _, tc := range []struct{ in, want, lines string }{
		{"spring-mvc-virtual", "spring-mvc-virtual", "spring-mvc-virtual"},
		{"p99 765µs ±∞ — “quoted”", "p99 765µs ±∞ — “quoted”", "p99 765µs ±∞ — “quoted”"},
		{"\x1b[2J\x1b[Hequivalent", `\x1b[2J\x1b[Hequivalent`, `\x1b[2J\x1b[Hequivalent`},
		{"a\nb\r\tc", `a\nb\r\tc`, "a\nb\\r\\tc"},
		{"bell\x07 del\x7f c1\u009b", `bell\x07 del\x7f c1\x9b`, `bell\x07 del\x7f c1\x9b`},
		{"abc\u202edcba", `abc\u202edcba`, `abc\u202edcba`},
		{"line\u2028sep", `line\u2028sep`, `line\u2028sep`},
		{"bad \xff\xfe utf8", `bad \xff\xfe utf8`, `bad \xff\xfe utf8`},
		{"", "", ""},
	} {
		if got := Terminal(tc.in); got != tc.want {
			t.Errorf("Terminal(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := TerminalLines(tc.in); got != tc.lines {
			t.Errorf("TerminalLines(%q) = %q, want %q", tc.in, got, tc.lines)
		}
	}
}

func TestMarkdownCode(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"c14..c15", "`c14..c15`"},
		{"3f2a1c9e0b7d", "`3f2a1c9e0b7d`"},
		{"a|b", "`a\\|b`"},
		{"x`y", "``x`y``"},
		{"``a", "``` ``a ```"},
		{"b`", "`` b` ``"},
		{"<b>*x*</b>", "`<b>*x*</b>`"},
		{"a\nb\x1b[31m", "`a\\nb\\x1b[31m`"},
	} {
		if got := MarkdownCode(tc.in); got != tc.want {
			t.Errorf("MarkdownCode(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestMarkdown(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"spring-mvc-virtual", "spring-mvc-virtual"},
		{"127.0.0.1:18999", "127.0.0.1:18999"},
		{"its own p99 delay 1.273ms exceeds 1ms (send lag p99 765µs): short of CPU; done", "its own p99 delay 1.273ms exceeds 1ms (send lag p99 765µs): short of CPU; done"},
		{"<b>x</b>", `\<b\>x\</b\>`},
		{"a|b", `a\|b`},
		{"**equivalent** ~~regressed~~", `\*\*equivalent\*\* \~\~regressed\~\~`},
		{"![x](http://example.invalid/p.png)", `!\[x\](http://example.invalid/p.png)`},
		{"`code` $x$ &lt; a_b_c", "\\`code\\` \\$x\\$ \\&lt; a\\_b\\_c"},
		{`back\slash`, `back\\slash`},
		{"a\nb", `a\\nb`},
		{"\x1b[31m", `\\x1b\[31m`},
		{"# heading", `\# heading`},
		{"- item", `\- item`},
		{"+ item", `\+ item`},
		{"> quote", `\> quote`},
		{"12. numbered", `12\. numbered`},
		{"3) numbered", `3\) numbered`},
		{"2026 rows", "2026 rows"},
		{"", ""},
	} {
		if got := Markdown(tc.in); got != tc.want {
			t.Errorf("Markdown(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCheckName(t *testing.T) {
	for _, name := range []string{"spring-mvc-virtual-jdk21", "io-heavy.find-max", "127.0.0.1:18999", "[::1]:8080", "localhost:8080",
		"Node_20", "team/api+cache", strings.Repeat("a", MaxNameLen)} {
		if err := CheckName(name); err != nil {
			t.Errorf("CheckName(%q) = %v, want nil", name, err)
		}
	}
	for _, tc := range []struct{ name, want string }{
		{"", "a name cannot be empty: use letters, digits and . _ - : / + [ ]"},
		{"<b>x</b>", "'<' is not allowed in a name: use letters, digits and . _ - : / + [ ]"},
		{"evil\x1b[2J", "'\\x1b' is not allowed in a name: use letters, digits and . _ - : / + [ ]"},
		{"two words", "' ' is not allowed in a name: use letters, digits and . _ - : / + [ ]"},
		{"café", "'é' is not allowed in a name: use letters, digits and . _ - : / + [ ]"},
		{"fast\"ify", "'\"' is not allowed in a name: use letters, digits and . _ - : / + [ ]"},
		{strings.Repeat("a", MaxNameLen+1), "101 characters is too long for a name: at most 100, of letters, digits and . _ - : / + [ ]"},
	} {
		err := CheckName(tc.name)
		if err == nil || err.Error() != tc.want {
			t.Errorf("CheckName(%q) = %v, want %s", tc.name, err, tc.want)
		}
	}
}

// noUnsafe fails t when s holds anything Terminal neutralises, apart from allowed.
func noUnsafe(t *testing.T, what, s string, allowed rune) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Fatalf("%s %q is not UTF-8", what, s)
	}
	for _, r := range s {
		if hazard(r) && r != allowed {
			t.Fatalf("%s %q holds %U", what, s, r)
		}
	}
}

func FuzzTerminal(f *testing.F) {
	for _, s := range []string{"plain", "\x1b[2J", "a\nb", "\u202e", "\xff", "\u009b31m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Terminal(s)
		noUnsafe(t, "Terminal", out, -1)
		if clean(s, "") != (out == s) {
			t.Fatalf("Terminal(%q) = %q: changed a clean text, or left an unclean one", s, out)
		}
		lines := TerminalLines(s)
		noUnsafe(t, "TerminalLines", lines, '\n')
		if strings.Count(lines, "\n") != strings.Count(s, "\n") {
			t.Fatalf("TerminalLines(%q) = %q: line ends changed", s, lines)
		}
		doc := Document(s)
		for _, r := range doc {
			if hazard(r) && !strings.ContainsRune("\n\r\t", r) {
				t.Fatalf("Document(%q) = %q holds %U", s, doc, r)
			}
		}
		for _, c := range "\n\r\t" {
			if strings.Count(doc, string(c)) != strings.Count(s, string(c)) {
				t.Fatalf("Document(%q) = %q: its layout changed", s, doc)
			}
		}
	})
}

func FuzzMarkdown(f *testing.F) {
	for _, s := range []string{"plain", "<b>x</b>", "a|b", "**x**", "# h", "1. x", "\\", "\x1b", "[a](b)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Markdown(s)
		noUnsafe(t, "Markdown", out, -1)
		// Read as markdown reads: a backslash takes the character after it literally; every
		// other character must not be markup.
		for i := 0; i < len(out); i++ {
			if out[i] == '\\' {
				if i+1 == len(out) {
					t.Fatalf("Markdown(%q) = %q ends in a lone backslash", s, out)
				}
				i++
				continue
			}
			if strings.IndexByte(markup, out[i]) >= 0 {
				t.Fatalf("Markdown(%q) = %q: %q at %d is not escaped", s, out, out[i], i)
			}
		}
		if blockStart(out) {
			t.Fatalf("Markdown(%q) = %q begins a block", s, out)
		}
	})
}

func FuzzCheckName(f *testing.F) {
	for _, s := range []string{"stub", "127.0.0.1:1", "<b>", "\x1b", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if CheckName(s) != nil {
			return
		}
		if Terminal(s) != s {
			t.Fatalf("name %q is not plain terminal text", s)
		}
		if strings.ContainsAny(s, "<>&|*`~$\\ \n") {
			t.Fatalf("name %q holds markup", s)
		}
	})
}
