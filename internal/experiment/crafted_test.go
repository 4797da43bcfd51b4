package experiment

import (
	"strings"
	"testing"

	"github.com/iotbench/iotbench/internal/results"
)

// TestCraftedReasonsAreQuotedLiterally: a run file's reasons reach the claims table and the notes
// under each run's table; a crafted one must neither act on a terminal nor add markup to the page.
func TestCraftedReasonsAreQuotedLiterally(t *testing.T) {
	sf := scenarios(t)
	f, err := Load("testdata/valid.yaml", sf)
	if err != nil {
		t.Fatal(err)
	}
	reason := "success ratio 0.5\x1b[2K\r<img src=x onerror=alert(1)> **pwned** | ~~does not hold~~"
	rows := join(trials("a", 190, 200, 210), invalid(trials("b", 98, 100, 102), 2, reason))
	notLoaded := []results.Row{{Target: "a", Trial: 1, InvalidReason: "skipped: \x1b]8;;http://example.invalid\x1b\\<b>x</b>"}}
	measured := Measured{"first": {"published": rows}, "second": {"big": notLoaded}}
	for _, c := range []struct {
		format Format
		bad    []string
		want   string
	}{
		{Text, []string{"\x1b", "\r"}, `success ratio 0.5\x1b[2K\r<img src=x onerror=alert(1)>`},
		{Markdown, []string{"\x1b", "\r", "<img", "<b>", "**pwned**", "~~does"}, `success ratio 0.5\\x1b\[2K\\r\<img src=x onerror=alert(1)\> \*\*pwned\*\* \| \~\~does not hold\~\~`},
	} {
		var b strings.Builder
		if err := Write(&b, c.format, f, sf, f.Order, measured); err != nil {
			t.Fatal(err)
		}
		out, shown := b.String(), b.String()
		if c.format == Markdown {
			shown = withoutEscapes(out)
		}
		for _, bad := range c.bad {
			if strings.Contains(shown, bad) {
				t.Errorf("format %d shows %q as it is:\n%s", c.format, bad, out)
			}
		}
		if !strings.Contains(out, c.want) {
			t.Errorf("format %d does not quote the reason as %s:\n%s", c.format, c.want, out)
		}
	}
}

// withoutEscapes is markdown with each backslash escape blanked: what markdown reads as markup.
func withoutEscapes(md string) string {
	var b strings.Builder
	for i := 0; i < len(md); i++ {
		if md[i] == '\\' && i+1 < len(md) {
			b.WriteString("  ")
			i++
			continue
		}
		b.WriteByte(md[i])
	}
	return b.String()
}
