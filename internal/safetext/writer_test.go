package safetext

import (
	"fmt"
	"strings"
	"testing"
)

func TestLines(t *testing.T) {
	var b strings.Builder
	w := Lines{&b}
	fmt.Fprintf(w, "target log: %s\n", "ok\x1b[2J\x1b[Hequivalent")
	fmt.Fprintln(w, "plain line")
	want := "target log: ok\\x1b[2J\\x1b[Hequivalent\nplain line\n"
	if b.String() != want {
		t.Errorf("got %q\nwant %q", b.String(), want)
	}
	if n, err := w.Write([]byte("\x07\n")); n != 2 || err != nil {
		t.Errorf("Write = %d, %v: want the length given, as io.Writer requires", n, err)
	}
}
