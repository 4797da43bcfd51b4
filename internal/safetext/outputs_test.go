package safetext_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/compare"
	"github.com/iotbench/iotbench/internal/golden"
	"github.com/iotbench/iotbench/internal/overview"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/summary"
)

// crafted is a results file as an untrusted pull request could bring it: its names are valid,
// but its invalid reasons, warnings, memory and host fields carry terminal escape codes (erase a
// line, move up, a hyperlink), a line break faking a note, a bidirectional override, HTML tags
// and markdown painting "equivalent" over "regressed".
var crafted = filepath.Join("testdata", "crafted.csv")

// The pieces of the crafted file that an output must not show as they are: control codes on a
// terminal (and anywhere), tags in HTML and markdown, markup in markdown.
var (
	controls = []string{"\x1b", "\a", "\r", "\u202e"}
	tags     = []string{"<img", "<script", "<b>", "<i>"}
	markup   = []string{"**equivalent**", "~~regressed~~", "[ok](", "`x`", "| *k*"}
)

func TestCraftedFileInEveryOutput(t *testing.T) {
	rows, _, err := results.ReadFile(crafted)
	if err != nil {
		t.Fatal(err)
	}
	src, err := summary.Load(crafted)
	if err != nil {
		t.Fatal(err)
	}
	o, err := summary.Build([]summary.Source{src})
	if err != nil {
		t.Fatal(err)
	}
	// Compared with the same rows measured with a plain memory limit: the note refusing the
	// mismatch quotes the crafted value.
	plain := slices.Clone(rows)
	for i := range plain {
		plain[i].Memory = "1g"
	}
	cmp := compare.Compare("plain.csv", plain, crafted, rows, compare.Options{Alpha: 0.05, NoisePct: 3})

	// With --format csv the notes go to the terminal on their own.
	for _, n := range cmp.Notes() {
		for _, c := range controls {
			if strings.Contains(n, c) {
				t.Errorf("compare note shows %q as it is: %q", c, n)
			}
		}
	}

	outputs := map[string]func(*bytes.Buffer) error{
		"table.txt":     func(b *bytes.Buffer) error { return overview.Write(b, rows) },
		"overview.md":   func(b *bytes.Buffer) error { return overview.WriteMarkdown(b, o) },
		"compare.txt":   func(b *bytes.Buffer) error { return compare.Write(b, cmp, "table") },
		"compare.md":    func(b *bytes.Buffer) error { return compare.Write(b, cmp, "markdown") },
		"overview.json": func(b *bytes.Buffer) error { return overview.WriteJSON(b, o) },
		"overview.html": func(b *bytes.Buffer) error {
			return overview.WriteHTML(b, o, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
		},
		"compare.json": func(b *bytes.Buffer) error { return compare.Write(b, cmp, "json") },
	}
	for name, write := range outputs {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			if err := write(&b); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			attacks, shown := controls, out
			switch filepath.Ext(name) {
			case ".html":
				// A line end, a carriage return or a tab is white space in HTML.
				attacks = slices.Concat([]string{"\x1b", "\a", "\u202e"}, tags)
			case ".md":
				attacks, shown = slices.Concat(controls, tags, markup), unescaped(out)
			case ".json":
				attacks = nil // encoded: checked below
			}
			for _, a := range attacks {
				if strings.Contains(shown, a) {
					t.Errorf("%s shows %q as it is:\n%s", name, a, out)
				}
			}
			switch filepath.Ext(name) {
			case ".json":
				// JSON keeps the text as measured, encoded: a reader decodes it back whole.
				var doc any
				if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
					t.Fatalf("not JSON: %v", err)
				}
				if name == "overview.json" && !strings.Contains(out, `\u001b[2K\r\u001b[1A`) {
					t.Errorf("the invalid reason is not kept, encoded:\n%s", out)
				}
			case ".html":
				if !strings.Contains(out, "&lt;img src=x onerror=alert(1)&gt;") {
					t.Errorf("the reason's tag is not escaped as text")
				}
			default:
				golden.Check(t, filepath.Join("testdata", "crafted."+name+".golden"), b.Bytes())
			}
		})
	}
}

// unescaped is markdown without its backslash escapes: what markdown reads as markup.
func unescaped(md string) string {
	var b strings.Builder
	for i := 0; i < len(md); i++ {
		if md[i] == '\\' && i+1 < len(md) {
			b.WriteByte(' ')
			i++
			continue
		}
		b.WriteByte(md[i])
	}
	return b.String()
}

// TestCraftedNamesAreRefused: a results file whose names hold a tag, an escape code or a line
// break is refused where it is read, naming the line, the column and what a name may hold.
func TestCraftedNamesAreRefused(t *testing.T) {
	for _, tc := range []struct{ file, column, value string }{
		{"name-tag", "target", "<img src=x onerror=alert(1)>"},
		{"name-escape", "scenario", "fixture\x1b[2J"},
		{"name-newline", "target", "steady\n  • candidate: equivalent"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "results.csv")
			withFirstRow(t, path, tc.column, tc.value)
			_, _, err := results.ReadFile(path)
			if err == nil {
				t.Fatalf("a %s of %q was read", tc.column, tc.value)
			}
			msg := strings.TrimPrefix(err.Error(), path)
			golden.Check(t, filepath.Join("testdata", "crafted."+tc.file+".golden"), []byte(msg+"\n"))
		})
	}
}

// withFirstRow writes the crafted file to path with column of its first row set to value.
func withFirstRow(t *testing.T, path, column, value string) {
	t.Helper()
	data, err := os.ReadFile(crafted)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.Index(recs[0], column)
	if i < 0 {
		t.Fatalf("no column %s", column)
	}
	recs[1][i] = value
	var b bytes.Buffer
	if err := csv.NewWriter(&b).WriteAll(recs); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
