package safetext

import "io"

// Lines is an io.Writer that passes what it is given to w as TerminalLines would show it: for a
// stream of log lines that quote input (target logs, reasons, warnings) on its way to a terminal or
// a CI log, which interprets escape codes as well. Writes are taken whole: a rune cut between two
// writes shows as its bytes.
type Lines struct{ W io.Writer }

func (l Lines) Write(p []byte) (int, error) {
	s := string(p)
	safe := TerminalLines(s)
	if safe == s {
		return l.W.Write(p)
	}
	if _, err := io.WriteString(l.W, safe); err != nil {
		return 0, err
	}
	return len(p), nil
}
