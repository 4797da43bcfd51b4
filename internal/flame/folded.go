package flame

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// ParseFolded reads folded stacks, `root;caller;leaf count` a line, as FlameGraph's
// stackcollapse tools and WriteFolded write them. The count follows the last space or tab, so
// frames may hold spaces (C++ names do). Duplicate stacks add up, blank lines are skipped, and
// every malformed line is reported with its number: a missing, negative or fractional count,
// an empty frame. Frames are cleaned as ParsePerfScript's are, so that text from any tool is
// safe to print.
func ParseFolded(r io.Reader) (Profile, error) {
	var (
		p    Profile
		errs lineErrors
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, maxLine)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		i := strings.LastIndexAny(line, " \t")
		if i < 0 {
			errs.add(n, `want "frame;frame count", got %s`, quote(line))
			continue
		}
		count, err := strconv.ParseInt(line[i+1:], 10, 64)
		switch {
		case err != nil:
			errs.add(n, `want "frame;frame count" with a whole number of samples, got %s`, quote(line))
			continue
		case count < 0:
			errs.add(n, "a count of samples cannot be negative, got %d", count)
			continue
		}
		stack, err := cleanStack(line[:i])
		if err != nil {
			errs.add(n, "%v in %s", err, quote(line))
			continue
		}
		if count == 0 {
			continue // a stack never sampled adds nothing
		}
		if err := p.add(stack, count); err != nil {
			errs.add(n, "%v", err)
		}
	}
	if err := sc.Err(); err != nil {
		return Profile{}, scanError(n+1, err)
	}
	if err := errs.err(); err != nil {
		return Profile{}, err
	}
	return p, nil
}

// cleanStack is folded frames with each frame tidied.
func cleanStack(s string) (string, error) {
	frames := strings.Split(strings.TrimSpace(s), ";")
	for i, f := range frames {
		frames[i] = tidy(f)
		if frames[i] == "" {
			return "", fmt.Errorf("frame %d is empty", i+1)
		}
	}
	return strings.Join(frames, ";"), nil
}

// WriteFolded writes p as folded stacks, one `root;caller;leaf count` a line, sorted by stack so
// that the same profile always makes the same file.
func (p Profile) WriteFolded(w io.Writer) error {
	stacks := make([]string, 0, len(p.Stacks))
	for s, n := range p.Stacks {
		if n > 0 {
			stacks = append(stacks, s)
		}
	}
	slices.Sort(stacks)
	bw := bufio.NewWriter(w)
	for _, s := range stacks {
		bw.WriteString(s)
		bw.WriteByte(' ')
		bw.WriteString(strconv.FormatInt(p.Stacks[s], 10))
		bw.WriteByte('\n')
	}
	return bw.Flush() // bufio keeps the first write error
}
