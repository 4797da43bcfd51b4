package flame

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestParseFolded(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     map[string]int64
	}{
		{"duplicates merge", "a;b;c 12\na;b 3\na;b;c 1\n", map[string]int64{"a;b;c": 13, "a;b": 3}},
		{"spaces in frames, tab before the count",
			"main;v8::internal::(anonymous namespace)::Invoke\t4\n", map[string]int64{"main;v8::internal::(anonymous namespace)::Invoke": 4}},
		{"blank lines, CRLF, white space around", "\r\n  a;b 2  \r\n\n", map[string]int64{"a;b": 2}},
		{"frames trimmed", "a ; b 1\n", map[string]int64{"a;b": 1}},
		{"zero counts add nothing", "a 0\n", nil},
		{"control codes escaped", "a\x1b[2J;b 1\n", map[string]int64{`a\x1b[2J;b`: 1}},
		{"empty", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParseFolded(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			equalStacks(t, p, tc.want)
		})
	}
}

func TestParseFoldedErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"a;b 1\na;b 2\na;b;c\n", `line 3: want "frame;frame count", got "a;b;c"`},
		{"a;b 1.5\n", `line 1: want "frame;frame count" with a whole number of samples, got "a;b 1.5"`},
		{"a;b x\n", `line 1: want "frame;frame count" with a whole number of samples, got "a;b x"`},
		{"a;b -3\n", "line 1: a count of samples cannot be negative, got -3"},
		{"a;;b 3\n", `line 1: frame 2 is empty in "a;;b 3"`},
		{"a 99999999999999999999\n", "line 1: want"},
		{"a 9223372036854775807\nb 1\n", "line 2: the samples add up to more than an int64 holds"},
		{"a;b -1\nc 1\nd 1.0\n", "line 1: a count of samples cannot be negative, got -1\nline 3: want"},
	} {
		_, err := ParseFolded(strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseFolded(%q) = %v, want an error with %q", tc.in, err, tc.want)
		}
	}
}

func TestWriteFoldedRoundTrip(t *testing.T) {
	in := "z;y 1\na;b;c 12\na;b 3\nv8::internal::(anonymous namespace)::Invoke;tcp_sendmsg_[k] 7\n"
	p, err := ParseFolded(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := p.WriteFolded(&buf); err != nil {
		t.Fatal(err)
	}
	want := "a;b 3\na;b;c 12\nv8::internal::(anonymous namespace)::Invoke;tcp_sendmsg_[k] 7\nz;y 1\n"
	if buf.String() != want {
		t.Errorf("WriteFolded:\n%s\nwant (sorted):\n%s", buf.String(), want)
	}
	again, err := ParseFolded(&buf)
	if err != nil {
		t.Fatal(err)
	}
	equalStacks(t, again, p.Stacks)
}

func TestWriteFoldedError(t *testing.T) {
	p := Profile{Stacks: map[string]int64{"a": 1}, Total: 1}
	if err := p.WriteFolded(failing{}); err == nil {
		t.Error("WriteFolded to a failing writer: no error")
	}
}

type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, errors.New("disk full") }
