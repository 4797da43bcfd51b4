package container

import "testing"

// TestLastLinesAreQuotedWithoutControlCodes: a build's or a shard's last lines are quoted in
// errors printed on a terminal; what the untrusted side printed must not act on it.
func TestLastLinesAreQuotedWithoutControlCodes(t *testing.T) {
	l := &lastLines{n: 2}
	_, _ = l.Write([]byte("step 1\nstep 2\x1b[2J\x1b[H\nbuilt \u202eok"))
	if got, want := l.String(), "step 1\nstep 2\\x1b[2J\\x1b[H\nbuilt \\u202eok"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
