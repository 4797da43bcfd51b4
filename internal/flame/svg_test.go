package flame

import (
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iotbench/iotbench/internal/golden"
)

func testdataProfile(t *testing.T) Profile {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "perf-script.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := ParsePerfScript(f)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSVG(t *testing.T) {
	svg := testdataProfile(t).SVG("node: CPU during the measured phase")
	golden.Check(t, filepath.Join("testdata", "perf-script.golden.svg"), []byte(svg))
}

func TestSVGEscapes(t *testing.T) {
	p := folded(t, "main;<script>alert(1)</script>;say \"hi\" & 'bye' 3\nmain;</title><text>x</text> 1\n")
	svg := string(p.SVG(`<img src=x onerror="alert(1)">`))
	for _, bad := range []string{"<script", "<img", `"hi"`, "</title><text>", "'bye'", "& "} {
		if strings.Contains(svg, bad) {
			t.Errorf("the SVG holds %q as it is:\n%s", bad, svg)
		}
	}
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "say &#34;hi&#34; &amp; &#39;bye&#39;", "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;"} {
		if !strings.Contains(svg, want) {
			t.Errorf("the SVG lacks %q:\n%s", want, svg)
		}
	}
	if n, m := strings.Count(svg, "<title>"), strings.Count(svg, "</title>"); n != 5 || m != 5 { // all, main, 3 callees
		t.Errorf("%d <title> and %d </title>, want 5 of each: a name closed an element", n, m)
	}
}

func TestSVGEmpty(t *testing.T) {
	svg := string(Profile{}.SVG("idle"))
	if !strings.Contains(svg, "No CPU samples were recorded.") || strings.Contains(svg, "<rect") {
		t.Errorf("an empty profile's SVG should say so, without boxes:\n%s", svg)
	}
}

func TestSVGLabels(t *testing.T) {
	long := strings.Repeat("x", 500)
	p := folded(t, fmt.Sprintf("narrow 1\nmain;%s 99\n", long))
	svg := string(p.SVG("labels"))
	// The long name is cut to its box's width in the label and to maxTipName in the tooltip.
	if strings.Contains(svg, long[:maxTipName+1]) {
		t.Error("a name longer than maxTipName is whole in the SVG")
	}
	if !strings.Contains(svg, "<title>"+long[:maxTipName-1]+"… — 99 samples (99.0%)</title>") {
		t.Errorf("the tooltip of the long name is not cut to %d runes:\n%s", maxTipName, svg)
	}
	if !strings.Contains(svg, ">"+strings.Repeat("x", 175) /* (0.99×1180−6)/6.6 = 176 */ +"…</text>") {
		t.Errorf("the label of the long name is not cut to its box:\n%s", svg)
	}
	// 1% of 1180 is 11.8 wide: no room for three characters, so no label, but a tooltip.
	if !strings.Contains(svg, "<title>narrow — 1 sample (1.0%)</title>") || strings.Contains(svg, ">narrow</text>") {
		t.Errorf("the narrow frame should have a tooltip and no label:\n%s", svg)
	}
}

// A profile of 100,000 distinct stacks, each sampled once, draws within a few hundred KB.
func TestSVGSize(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stack func(i int) string
	}{
		// A service's tree: 10 levels of 10 handlers under a common start.
		{"tree", func(i int) string {
			var b strings.Builder
			b.WriteString("__libc_start_call_main;node::Start;uv_run")
			for level := 0; level < 5; level++ {
				fmt.Fprintf(&b, ";handler%d_%d (app/routes/level%d.js:%d)_[j]", level, i%10, level, i%10)
				i /= 10
			}
			return b.String()
		}},
		// The worst case for the threshold: 500 roots of 0.2% each with a chain of 20 callees,
		// 10,500 frames above MinShare, so MaxBoxes decides.
		{"wide and deep", func(i int) string {
			var b strings.Builder
			fmt.Fprintf(&b, "std::__detail::_Executor<char const*, std::allocator<std::__cxx11::sub_match<char const*> > >::_M_dfs_%d", i%500)
			for d := 0; d < 20; d++ {
				fmt.Fprintf(&b, ";v8::internal::Runtime_CompileLazy_depth%d", d)
			}
			fmt.Fprintf(&b, ";leaf%d", i)
			return b.String()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Profile{Stacks: map[string]int64{}}
			for i := range 100_000 {
				if err := p.add(tc.stack(i), 1); err != nil {
					t.Fatal(err)
				}
			}
			if len(p.Stacks) != 100_000 {
				t.Fatalf("%d distinct stacks, want 100,000", len(p.Stacks))
			}
			svg := p.SVG("big")
			if n := strings.Count(string(svg), "<g>"); n > MaxBoxes {
				t.Errorf("%d boxes drawn, more than MaxBoxes", n)
			}
			if len(svg) > 400<<10 {
				t.Errorf("the SVG of 100,000 stacks is %d KB, want under 400", len(svg)>>10)
			}
			t.Logf("%d KB, %d boxes", len(svg)>>10, strings.Count(string(svg), "<g>"))
		})
	}
}

func TestChoose(t *testing.T) {
	p := folded(t, "a 1997\nb 1\nc 3\n")
	root := p.tree()
	if capped := choose(root); capped {
		t.Error("capped with 3 frames")
	}
	for _, f := range []struct {
		name  string
		drawn bool
	}{{"a", true}, {"b", false}, {"c", true}} { // MinShare of 2001 samples is 3
		if root.children[f.name].drawn != f.drawn {
			t.Errorf("frame %s drawn %v, want %v", f.name, !f.drawn, f.drawn)
		}
	}

	// 600 roots of equal width, each with a chain of two callees: 1801 frames above MinShare.
	// MaxBoxes keeps all, the 600 roots, their 600 callees, and the 299 leftmost of the next row.
	var b strings.Builder
	for i := range 600 {
		fmt.Fprintf(&b, "r%03d;c1;c2 1\n", i)
	}
	root = folded(t, b.String()).tree()
	if capped := choose(root); !capped {
		t.Error("not capped with 1801 frames")
	}
	for _, tc := range []struct {
		root  string
		depth int
		drawn bool
	}{{"r000", 2, true}, {"r298", 2, true}, {"r299", 2, false}, {"r599", 1, true}, {"r599", 0, true}} {
		n := root.children[tc.root]
		for range tc.depth {
			for _, k := range n.children {
				n = k
			}
		}
		if n.drawn != tc.drawn {
			t.Errorf("%s's callee at depth %d drawn %v, want %v", tc.root, tc.depth, n.drawn, tc.drawn)
		}
	}
	if n := strings.Count(string(folded(t, b.String()).SVG("ties")), "<g>"); n != MaxBoxes {
		t.Errorf("%d boxes, want MaxBoxes", n)
	}
}

// The SVG goes into the report as template.HTML: it must parse as a fragment of it.
func TestSVGInPage(t *testing.T) {
	page := template.Must(template.New("p").Parse(`<!doctype html><meta charset="utf-8"><body>{{.}}</body>`))
	var b strings.Builder
	if err := page.Execute(&b, testdataProfile(t).SVG("x")); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "<svg xmlns=") {
		t.Error("the SVG was escaped as text in the page")
	}
}
