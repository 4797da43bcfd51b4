package flame

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iotbench/iotbench/internal/golden"
)

// The testdata's samples, written as folded stacks: pinned by testdata/perf-script.folded.
func TestParsePerfScript(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "perf-script.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := ParsePerfScript(f)
	if err != nil {
		t.Fatal(err)
	}
	if p.Total != 7 {
		t.Errorf("Total = %d, want 7 samples", p.Total)
	}
	var buf bytes.Buffer
	if err := p.WriteFolded(&buf); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "perf-script.folded"), buf.Bytes())
}

func TestParsePerfScriptSamples(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     map[string]int64
	}{
		{"thread name with spaces, no blank line at the end",
			"V8 DefaultWorke  4170 36005.977010:    5025125 cpu-clock:ppp: \n\t  f0e2a4 leaf+0x84 (/usr/local/bin/node)\n\t  f1b650 root+0x20 (/usr/local/bin/node)",
			map[string]int64{"root;leaf": 1}},
		{"right-aligned name, pid/tid, cpu, CRLF",
			"            cafe 12/13 [001] 1.5: 1 cycles:\r\n\t  1 b (x)\r\n\t  2 a (x)\r\n\r\n            cafe 12/13 [001] 1.6: 1 cycles:\r\n\t  1 b (x)\r\n\t  2 a (x)\r\n",
			map[string]int64{"a;b": 2}},
		{"a name of digits",
			"1234 4163 36005.966932: 1 cpu-clock:\n\t7f f (x)\n",
			map[string]int64{"f": 1}},
		{"a sample without a call chain",
			"node 1 2.0: 1 cpu-clock:\n\nnode 1 2.1: 1 cpu-clock:\n\t7f f (x)\n",
			map[string]int64{noStack: 1, "f": 1}},
		{"blank lines only", "\n\n  \n", nil},
		{"frames indented with spaces",
			"node 1 2.0: 1 cpu-clock:\n    7f f (x)\n    80 g (x)\n",
			map[string]int64{"g;f": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParsePerfScript(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			equalStacks(t, p, tc.want)
		})
	}
}

func TestParsePerfScriptErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"\t7f f (x)\n", `line 1: a frame before any sample's header line: "\t7f f (x)"`},
		{"node 1 2.0: 1 cpu-clock:\n\t7f f (x)\nWarning: lost 3 chunks\n",
			`line 3: want a sample's header (comm pid time: event:), a frame (address symbol (dso)) or a blank line, got "Warning: lost 3 chunks"`},
		{"node 1 2.0: 1 cpu-clock:\n\tnot a frame\n", `line 2: want a sample's header`},
		{"node\n", `line 1: want a sample's header`},
		{strings.Repeat("x\n", 25), "line 20: want"},
		{strings.Repeat("x\n", 25), "and 5 more lines with errors"},
		{"node 1 2.0: 1 c:\n\t7f " + strings.Repeat("f", maxLine) + "\n", "line 2: longer than 4 MiB"},
	} {
		_, err := ParsePerfScript(strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParsePerfScript(%q) = %v, want an error with %q", cut(tc.in, 60), err, tc.want)
		}
	}
}

func TestCleanFrame(t *testing.T) {
	for _, tc := range []struct{ sym, dso, want string }{
		{"JS:*monteCarloPi file:///app/contract/work.js:22:29+0x2e7", "/tmp/perf-4163.map", "monteCarloPi (contract/work.js:22)_[j]"},
		{"JS:^cpu file:///app/fastify/tasks.js:13:20+0xab", "/tmp/perf-4163.map", "cpu (fastify/tasks.js:13)_[j]"},
		{"JS:~get size node:internal/streams/readable:1:1", "/tmp/perf-1.map", "get size (node:internal/streams/readable:1)_[j]"},
		{"JS:+fast file:///srv/x.mjs:5:1", "/tmp/perf-1.map", "fast (/srv/x.mjs:5)_[j]"},
		{"JS:^ file:///app/fastify/server.js:203:5", "/tmp/perf-4163.map", "(anonymous) (fastify/server.js:203)_[j]"},
		{"JS:^emit node:events:489:44+0x316", "/tmp/perf-4163.map", "emit (node:events:489)_[j]"},
		{"LazyCompile:*old /app/a.js:7", "/tmp/perf-9.map", "old (a.js:7)_[j]"},
		{"JS:*noplace", "/tmp/perf-9.map", "noplace_[j]"},
		{"double iotbench.contract.Work.monteCarloPi(int)+0x94c", "/tmp/perf-5012.map", "iotbench.contract.Work.monteCarloPi_[j]"},
		{"void org.apache.catalina.core.ApplicationFilterChain.doFilter(jakarta.servlet.ServletRequest, jakarta.servlet.ServletResponse)+0x34", "/tmp/perf-5012.map", "org.apache.catalina.core.ApplicationFilterChain.doFilter_[j]"},
		{"java.lang.Object iotbench.contract.Answers$Cpu$$Lambda/0x000000006c56aa60.get()+0xc4", "/tmp/perf-5012.map", "iotbench.contract.Answers$Cpu$$Lambda.get_[j]"},
		{"org.apache.tomcat.util.net.AbstractEndpoint$Handler$SocketState org.apache.coyote.AbstractProtocol$ConnectionHandler.process(org.apache.tomcat.util.net.SocketWrapperBase, org.apache.tomcat.util.net.SocketEvent)+0x4ca4", "/tmp/perf-5012.map", "org.apache.coyote.AbstractProtocol$ConnectionHandler.process_[j]"},
		{"int[] a.B.c(int[], java.lang.String[])", "/tmp/perf-1.map", "a.B.c_[j]"},
		{"Interpreter+0x6d8", "/tmp/perf-5012.map", "Interpreter_[j]"},
		{"StubRoutines (initialstubs)+0xc6", "/tmp/perf-5012.map", "StubRoutines (initialstubs)_[j]"},
		{"void f(int)", "/usr/lib/libx.so", "void f(int)"},
		{"Builtins_InterpreterEntryTrampoline+0xd4", "/usr/local/bin/node", "Builtins_InterpreterEntryTrampoline"},
		{"v8::internal::(anonymous namespace)::Invoke+0x161", "/usr/local/bin/node", "v8::internal::(anonymous namespace)::Invoke"},
		{"uv__read+0x312", "/usr/local/bin/node", "uv__read"},
		{"operator+0x1", "/a", "operator"},
		{"operator+", "/a", "operator+"},
		{"tcp_sendmsg+0x2d", "[kernel.kallsyms]", "tcp_sendmsg_[k]"},
		{"[unknown]", "[kernel.kallsyms]", "[unknown]_[k]"},
		{"[unknown]", "/usr/lib/x86_64-linux-gnu/libc.so.6", "[unknown in libc.so.6]"},
		{"[unknown]", "[unknown]", "[unknown]"},
		{"[unknown]", "/tmp/perf-1.map", "[unknown in perf-1.map]"},
		{"", "", "[unknown]"},
		{"Interpreter", "/tmp/perf-1.map", "Interpreter_[j]"},
		{"Lcom/example/Foo;::bar", "/tmp/perf-1.map", "com.example.Foo::bar_[j]"},
		{"java.lang.String::hashCode", "/tmp/perf-1.map", "java.lang.String::hashCode_[j]"},
		{"std::vector<int, std::allocator<int> >::push_back(int const&)", "/bin/x", "std::vector<int, std::allocator<int> >::push_back(int const&)"},
		{"a;b\nc\x1b[2J", "/bin/x", `a:b\nc\x1b[2J`},
		{"  padded  ", "/bin/x", "padded"},
		{";", "/bin/x", ":"},
	} {
		if got := cleanFrame(tc.sym, tc.dso); got != tc.want {
			t.Errorf("cleanFrame(%q, %q) = %q, want %q", tc.sym, tc.dso, got, tc.want)
		}
	}
}

func TestParseFrame(t *testing.T) {
	for _, tc := range []struct {
		line, want string
		ok         bool
	}{
		{"\t    7f3a1 foo+0x1 (/memfd:doublemapper (deleted))", "foo", true},
		{"\t    7f3a1 foo(int) (/bin/x)", "foo(int)", true},
		{"\t    7f3a1 foo(int)", "foo(int)", true},
		{"\t    7f3a1", "[unknown]", true},
		{"\t    zz foo (/bin/x)", "", false},
	} {
		got, ok := parseFrame(tc.line)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseFrame(%q) = %q, %v, want %q, %v", tc.line, got, ok, tc.want, tc.ok)
		}
	}
}

func TestKindAndLabel(t *testing.T) {
	for _, tc := range []struct {
		frame, label string
		kind         Kind
	}{
		{"tcp_sendmsg_[k]", "tcp_sendmsg", Kernel},
		{"cpu (fastify/tasks.js:13)_[j]", "cpu (fastify/tasks.js:13)", JIT},
		{"uv_run", "uv_run", Native},
		{"[unknown in libc.so.6]", "[unknown in libc.so.6]", Unknown},
		{"[unknown]_[k]", "[unknown]", Unknown},
		{"_[k]", "_[k]", Kernel},
	} {
		if got := KindOf(tc.frame); got != tc.kind {
			t.Errorf("KindOf(%q) = %v, want %v", tc.frame, got, tc.kind)
		}
		if got := Label(tc.frame); got != tc.label {
			t.Errorf("Label(%q) = %q, want %q", tc.frame, got, tc.label)
		}
	}
}

// equalStacks fails t unless p holds exactly want, and its Total is their sum.
func equalStacks(t *testing.T, p Profile, want map[string]int64) {
	t.Helper()
	var total int64
	for s, n := range want {
		total += n
		if p.Stacks[s] != n {
			t.Errorf("stack %q: %d samples, want %d", s, p.Stacks[s], n)
		}
	}
	if len(p.Stacks) != len(want) || p.Total != total {
		t.Errorf("got %d stacks, %d samples: %v; want %d, %d", len(p.Stacks), p.Total, p.Stacks, len(want), total)
	}
}
