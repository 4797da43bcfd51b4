package flame

import (
	"cmp"
	"container/heap"
	"fmt"
	"hash/fnv"
	"html/template"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The flame graph draws only what a reader can see, so that its size stays bounded whatever
// the profile: a frame narrower than MinShare of the samples is left out, and of the rest only
// the MaxBoxes widest are drawn. A box takes about 130 bytes besides its name (once in the
// tooltip, at most maxTipName runes, and once in the label, cut to the box): some 300 KB for
// MaxBoxes boxes of 100-character names, about 1 MB if every name runs to 300 characters.
const (
	// MinShare is the narrowest frame drawn, as a share of the samples: 0.1%, 1.2 of the graph's
	// 1200 units of width. A frame left out leaves a gap in its parent, as its parent's own time does.
	MinShare = 0.001
	// MaxBoxes is the most frames drawn, "all" at the root included: the widest are kept,
	// and a frame kept always has its callers kept too.
	MaxBoxes = 1500
)

// Geometry of the graph, in the units of its viewBox (pixels at its natural size). The browser
// scales the whole to the page's width, text included, so labels cut to fit still fit.
const (
	graphWidth = 1200.0
	margin     = 10.0
	framesTop  = 48.0 // below the title and the legend
	rowHeight  = 17.0
	fontSize   = 11.0
	charWidth  = 0.6 * fontSize // a monospace font's advance, so labels can be cut to fit
	maxTipName = 300            // runes of a name in a tooltip: C++ templates run to thousands
	titleChars = 140            // runes of the title at 14 units a character, the width
)

// SVG is p drawn as a flame graph, a self-contained <svg> element for an HTML page: no script,
// no style sheet, no font to fetch. The root ("all") is at the bottom and callees stack above
// their callers, as in Brendan Gregg's flame graphs; each box's width is its share of the
// samples, siblings are in alphabetical order (the x axis is not time), and a box's tooltip
// says "name — N samples (x.x%)". Frames are coloured by Kind, with a legend. Frames narrower
// than MinShare are not drawn, nor any beyond the MaxBoxes widest. Every text from the profile
// and the title is escaped. An empty profile draws a line saying so.
func (p Profile) SVG(title string) template.HTML {
	g := graph{Title: cut(title, titleChars)}
	if p.Total <= 0 || len(p.Stacks) == 0 {
		g.Empty, g.Height = true, "50"
		g.Note = "No CPU samples were recorded."
	} else {
		g.layout(p)
	}
	return template.HTML(g.svg())
}

// svg writes the graph out. Every text that came from the profile or the caller (the title,
// names in tooltips and labels) goes through text(), which escapes it for HTML and XML alike;
// the rest is numbers and colours made here. Written by hand rather than by html/template,
// which took ten times as long for the same graph. The font is set on the <svg> element, not
// in a <style>, which would restyle the page around it.
func (g *graph) svg() string {
	var b strings.Builder
	text := func(s string) { b.WriteString(template.HTMLEscapeString(s)) }
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 1200 ` + g.Height + `" width="100%" ` +
		`font-family="ui-monospace,SFMono-Regular,Menlo,Consolas,monospace" font-size="11" role="img" aria-label="`)
	text(g.Title)
	b.WriteString(`">` + "\n" + `<text x="10" y="18" font-size="14" font-weight="bold">`)
	text(g.Title)
	noteY := "36"
	if g.Empty {
		noteY = "40"
	}
	b.WriteString("</text>\n" + `<text x="10" y="` + noteY + `" fill="#555">`)
	text(g.Note)
	b.WriteString("</text>\n")
	for _, l := range g.Legend {
		b.WriteString(`<rect x="` + l.X + `" y="27" width="10" height="10" fill="` + l.Fill + `"/><text x="` + l.TX + `" y="36">`)
		text(l.Label)
		b.WriteString("</text>\n")
	}
	for _, x := range g.Boxes {
		b.WriteString("<g><title>")
		text(x.Tip)
		b.WriteString(`</title><rect x="` + x.X + `" y="` + x.Y + `" width="` + x.W + `" height="16" rx="2" fill="` + x.Fill + `"/>`)
		if x.Label != "" {
			b.WriteString(`<text x="` + x.TX + `" y="` + x.TY + `">`)
			text(x.Label)
			b.WriteString("</text>")
		}
		b.WriteString("</g>\n")
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// graph is a flame graph laid out: numbers already formatted, texts not yet escaped.
type graph struct {
	Title, Note, Height string
	Empty               bool
	Legend              []legendItem
	Boxes               []box
}

type legendItem struct{ X, TX, Fill, Label string }

type box struct{ X, Y, W, TX, TY, Fill, Tip, Label string }

// node is a frame at its place in the call tree: samples counts the stacks through it.
type node struct {
	name     string
	samples  int64
	children map[string]*node
	kids     []*node // children by name, once sorted
	drawn    bool
}

// tree is p's stacks merged from the root: a frame called from two places is two nodes.
func (p Profile) tree() *node {
	root := &node{name: "all"}
	for stack, n := range p.Stacks {
		at := root
		at.samples += n
		for rest := stack; rest != ""; {
			var f string
			f, rest, _ = strings.Cut(rest, ";")
			c := at.children[f]
			if c == nil {
				if at.children == nil {
					at.children = map[string]*node{}
				}
				c = &node{name: f}
				at.children[f] = c
			}
			c.samples += n
			at = c
		}
	}
	return root
}

// sortChildren puts n's children in kids by name, as flame graphs order them.
func (n *node) sortChildren() {
	n.kids = make([]*node, 0, len(n.children))
	for _, c := range n.children {
		n.kids = append(n.kids, c)
	}
	slices.SortFunc(n.kids, func(a, b *node) int { return strings.Compare(a.name, b.name) })
}

// choose marks the frames to draw: those of at least MinShare of the samples, widest first,
// until MaxBoxes. A frame enters the choice only once its caller is chosen, so the frames drawn
// hang together from the root; among frames of equal width the shallower and then the leftmost
// go first, so that a cut through many equal frames (a broad, deep tree) trims the top of the
// graph evenly. capped says whether MaxBoxes left out frames wide enough to draw.
func choose(root *node) (capped bool) {
	least := max(1, int64(math.Ceil(MinShare*float64(root.samples))))
	f := &frontier{{n: root}}
	for drawn, seq := 0, 0; f.Len() > 0; drawn++ {
		if drawn == MaxBoxes {
			return true
		}
		c := heap.Pop(f).(candidate)
		c.n.drawn = true
		c.n.sortChildren()
		for _, k := range c.n.kids {
			if k.samples >= least {
				seq++
				heap.Push(f, candidate{k, c.depth + 1, seq})
			}
		}
	}
	return false
}

// candidate is a frame whose caller is drawn; seq orders siblings left to right.
type candidate struct {
	n          *node
	depth, seq int
}

// frontier is a heap of candidates, the next to draw on top.
type frontier []candidate

func (f frontier) Len() int { return len(f) }
func (f frontier) Less(i, j int) bool {
	a, b := f[i], f[j]
	return cmp.Or(cmp.Compare(b.n.samples, a.n.samples), cmp.Compare(a.depth, b.depth), cmp.Compare(a.seq, b.seq)) < 0
}
func (f frontier) Swap(i, j int) { f[i], f[j] = f[j], f[i] }
func (f *frontier) Push(x any)   { *f = append(*f, x.(candidate)) }
func (f *frontier) Pop() any {
	old := *f
	x := old[len(old)-1]
	*f = old[:len(old)-1]
	return x
}

// placed is a frame's box before it is drawn: where it starts, in samples, and its depth.
type placed struct {
	n     *node
	x     int64
	depth int
}

// layout places p's frames and the legend.
func (g *graph) layout(p Profile) {
	root := p.tree()
	capped := choose(root)
	var boxes []placed
	depth := 0
	var walk func(n *node, x int64, d int)
	walk = func(n *node, x int64, d int) {
		boxes = append(boxes, placed{n, x, d})
		depth = max(depth, d)
		for _, c := range n.kids {
			if c.drawn {
				walk(c, x, d+1)
			}
			x += c.samples // one left out leaves its gap: the others stay where they are
		}
	}
	walk(root, 0, 0)

	scale := (graphWidth - 2*margin) / float64(root.samples)
	g.Height = num(framesTop + float64(depth+1)*rowHeight + margin)
	for _, b := range boxes {
		x, w := margin+float64(b.x)*scale, float64(b.n.samples)*scale
		y := framesTop + float64(depth-b.depth)*rowHeight // the root at the bottom
		name, fill := Label(b.n.name), colour(KindOf(b.n.name), b.n.name)
		if b.depth == 0 {
			name, fill = "all", "#c8c8d0"
		}
		g.Boxes = append(g.Boxes, box{
			X: num(x), Y: num(y), W: num(w), TX: num(x + 3), TY: num(y + 12), Fill: fill,
			Tip:   fmt.Sprintf("%s — %s (%.1f%%)", cut(name, maxTipName), plural(b.n.samples, "sample"), 100*share(b.n.samples, root.samples)),
			Label: cut(name, int((w-6)/charWidth)),
		})
	}
	g.Note = plural(root.samples, "sample") + fmt.Sprintf(" · root at the bottom · frames under %g%% not drawn", 100*MinShare)
	if capped {
		g.Note += fmt.Sprintf(", nor beyond the %d widest", MaxBoxes)
	}
	g.legend()
}

// legend lays the kinds' colours out right-aligned on the note's line.
func (g *graph) legend() {
	kinds := []Kind{JIT, Native, Kernel, Unknown}
	width := 0.0
	for _, k := range kinds {
		width += 14 + charWidth*float64(utf8.RuneCountInString(k.String())) + 14
	}
	x := graphWidth - margin - width + 14 // no gap after the last
	for _, k := range kinds {
		g.Legend = append(g.Legend, legendItem{X: num(x), TX: num(x + 14), Fill: colour(k, ""), Label: k.String()})
		x += 14 + charWidth*float64(utf8.RuneCountInString(k.String())) + 14
	}
}

// colour is a frame's fill: a hue by kind, varied a little by name so that neighbours differ
// and a function has the same colour wherever it appears.
func colour(k Kind, name string) string {
	h := fnv.New32a()
	h.Write([]byte(name))
	v := h.Sum32()
	a, b, c := float64(v&0xff)/255, float64(v>>8&0xff)/255, float64(v>>16&0xff)/255
	var r, g, bl float64
	switch k {
	case JIT: // greens
		r, g, bl = 80+70*a, 190+50*b, 70+50*c
	case Kernel: // blues
		r, g, bl = 100+50*a, 160+50*b, 220+30*c
	case Unknown: // greys
		r = 175 + 40*a
		g, bl = r, r
	default: // native: reds to yellows, as flame graphs are
		r, g, bl = 220+35*a, 90+130*b, 40+40*c
	}
	return fmt.Sprintf("#%02x%02x%02x", int(r), int(g), int(bl))
}

// cut is s in at most n runes, "…" ending it if it was longer; "" when n is below 3, where a
// label would say nothing.
func cut(s string, n int) string {
	if n < 3 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// num is a coordinate in tenths: finer than a pixel, short in the file.
func num(v float64) string {
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
}

// plural is "1 sample", "12,345 samples".
func plural(n int64, unit string) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if n != 1 {
		unit += "s"
	}
	return s + " " + unit
}
