package flame

import (
	"bytes"
	"strings"
	"testing"
)

// roundTrip fails t unless p, written as folded stacks and read back, is p.
func roundTrip(t *testing.T, p Profile) {
	t.Helper()
	var buf bytes.Buffer
	if err := p.WriteFolded(&buf); err != nil {
		t.Fatal(err)
	}
	again, err := ParseFolded(&buf)
	if err != nil {
		t.Fatalf("%v reading back:\n%s", err, buf.String())
	}
	if again.Total != p.Total || len(again.Stacks) != len(p.Stacks) {
		t.Fatalf("read back %d stacks, %d samples; wrote %d, %d", len(again.Stacks), again.Total, len(p.Stacks), p.Total)
	}
	for s, n := range p.Stacks {
		if again.Stacks[s] != n {
			t.Fatalf("stack %q read back with %d samples, written with %d", s, again.Stacks[s], n)
		}
	}
	// Whatever was read draws: no panic, and no frame name escapes its element.
	if svg := string(p.SVG("fuzz")); strings.Count(svg, "<title>") != strings.Count(svg, "</title>") {
		t.Fatalf("unbalanced <title> in\n%s", svg)
	}
	p.Top(5)
	Diff(p, again, 5)
}

func FuzzParseFolded(f *testing.F) {
	for _, s := range []string{
		"a;b;c 12\na;b 3\n",
		"main;v8::internal::(anonymous namespace)::Invoke\t4\r\n",
		"a;;b 1\n", "a -1\n", "a 1.5\n", "x\n", " 5\n", "a\u00a0 1\n", "a\x1b;b 2\n",
		"a 9223372036854775807\nb 1\n", "<script>;\"q\" 1\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		p, err := ParseFolded(strings.NewReader(in))
		if err != nil {
			return
		}
		roundTrip(t, p)
	})
}

func FuzzParsePerfScript(f *testing.F) {
	// Short seeds: the fuzzer minimizes every new input it finds, which for a copy of the whole
	// testdata file takes most of a 20-second run.
	for _, s := range []string{
		"MainThread  4163 36005.966932:    5025125 cpu-clock:ppp: \n" +
			"\t    7fb4ef0e47e7 JS:*monteCarloPi file:///app/contract/work.js:22:29+0x2e7 (/tmp/perf-4163.map)\n" +
			"\t          a22df1 v8::internal::(anonymous namespace)::Invoke+0x161 (/usr/local/bin/node)\n\n" +
			"V8 DefaultWorke  4170 36005.977010: 1 cpu-clock:\n\tffffffff8a1b2c3d tcp_sendmsg+0x2d ([kernel.kallsyms])\n" +
			"\t    7f3a12345678 [unknown] (/usr/lib/x86_64-linux-gnu/libc.so.6)\n",
		"node 1 2.0: 1 cpu-clock:\n\t7f JS:^ file:///app/x.js:1:2+0x1 (/tmp/perf-1.map)\n",
		"            cafe 12/13 [001] 1.5: 1 cycles:\n\t  1 b;c (x)\n\n",
		"n 1 1: e:\n\tff [unknown] ([kernel.kallsyms])\n\tff Lx;::y (/tmp/perf-2.map)\n",
		"n 1 1: e:\n\t1 \u00a0 (a (b))\n\t2 \x1b[2J ()\n",
		"\t7f f (x)\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		p, err := ParsePerfScript(strings.NewReader(in))
		if err != nil {
			return
		}
		roundTrip(t, p)
	})
}
