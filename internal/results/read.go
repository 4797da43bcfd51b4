package results

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/iotbench/iotbench/internal/fault"
)

// ParseError is what is wrong with a results file, and where.
type ParseError struct {
	Line int // 1-based; the header is line 1
	Msg  string
}

func (e *ParseError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

func parseErr(line int, format string, args ...any) error {
	return &ParseError{Line: line, Msg: fmt.Sprintf(format, args...)}
}

// Cut is a last row cut off mid-way: the run that wrote it stopped during the write (kill -9, a
// full disk). The rows before it are complete; the cell it began was never recorded whole.
type Cut struct {
	Line   int   // 1-based line where the cut row starts
	Offset int64 // its byte offset: the length of the file's complete part
}

// Read parses a results CSV. Columns it does not know are ignored, so that files with more
// columns stay readable; a missing column, a newer schema version or a malformed row is a
// *ParseError naming the line. Only the last line may be incomplete: without a line end (every
// row iotbench writes has one) and the beginning of a row, it is a row cut off mid-way, left out
// of rows and described by cut.
func Read(r io.Reader) (rows []Row, cut *Cut, err error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, nil, err
	}
	p, err := parse(data)
	if err != nil {
		return nil, nil, err
	}
	if p.version < fieldsSchema {
		numberSearches(p.rows)
	}
	return p.rows, p.cut, nil
}

// ReadFile reads a results CSV from disk. A last row cut off mid-way is left out with a warning
// naming its line; every other problem is an error naming the line.
func ReadFile(path string) (rows []Row, warnings []string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	rows, cut, err := Read(f)
	if err != nil {
		return nil, nil, located(path, err)
	}
	if cut != nil {
		warnings = append(warnings, cutWarning(path, cut, len(rows), "left out"))
	}
	return rows, warnings, nil
}

func cutWarning(path string, cut *Cut, complete int, what string) string {
	if cut.Line == 1 {
		return fmt.Sprintf("%s:1: the header is cut off (no line end): the run that wrote it stopped before its first row; there is no row", path)
	}
	return fmt.Sprintf("%s:%d: the last row is cut off (no line end): the run that wrote it stopped mid-row; that row is %s, the %d complete row(s) before it are read", path, cut.Line, what, complete)
}

// located prefixes a parse error with the file and line, as an editor reads them.
func located(path string, err error) error {
	var pe *ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s:%d: %s", path, pe.Line, pe.Msg)
	}
	return fmt.Errorf("%s: %w", path, err)
}

// parsed is the content of a results file.
type parsed struct {
	header  []string // nil when the header itself was cut
	version int      // the rows' schema version; 0 when there is no row
	rows    []Row
	cut     *Cut
}

func parse(data []byte) (*parsed, error) {
	body, cut := splitCut(data)
	if cut != nil && cut.Offset == 0 {
		return &parsed{cut: cut}, nil // the header itself was cut: no row was written
	}
	p, err := parseComplete(body)
	if err != nil && cut != nil {
		// The last line continues a row of the lines before it: the whole file tells what is wrong.
		if _, whole := parseComplete(data); whole != nil {
			err = whole
		}
	}
	if err != nil {
		return nil, err
	}
	if cut != nil {
		// A beginning of a row of this file has at most as many fields as its header.
		if n := fieldCount(data[cut.Offset:]); n > len(p.header) {
			return nil, parseErr(cut.Line, "%d fields, but the header has %d", n, len(p.header))
		}
		p.cut = cut
	}
	return p, nil
}

// splitCut separates a last line without a line end, when it can be the beginning of a row (or of
// the header), from the complete lines before it. A cut row spanning lines (a quoted line break)
// is not recognised: it reads as the error it is.
func splitCut(data []byte) ([]byte, *Cut) {
	if len(data) == 0 || data[len(data)-1] == '\n' {
		return data, nil
	}
	start := bytes.LastIndexByte(data, '\n') + 1
	tail := data[start:]
	if start == 0 {
		// The header is written in one piece, and the headers of older schemas begin newer ones.
		if !strings.HasPrefix(strings.Join(Header(), ","), string(tail)) {
			return data, nil
		}
	} else if fieldCount(tail) < 0 {
		return data, nil
	}
	return data[:start], &Cut{Line: bytes.Count(data[:start], []byte{'\n'}) + 1, Offset: int64(start)}
}

// fieldCount is the number of fields of line, a CSV record without its line end, possibly cut
// inside a quoted field; -1 when no record begins so.
func fieldCount(line []byte) int {
	for _, end := range []string{"\n", "\"\n"} {
		cr := csv.NewReader(io.MultiReader(bytes.NewReader(line), strings.NewReader(end)))
		cr.FieldsPerRecord = -1
		rec, err := cr.Read()
		if err != nil {
			continue
		}
		if _, err := cr.Read(); errors.Is(err, io.EOF) {
			return len(rec)
		}
	}
	return -1
}

// parseComplete parses lines that all end: any problem is an error.
func parseComplete(data []byte) (*parsed, error) {
	cr := csv.NewReader(bytes.NewReader(data))
	cr.FieldsPerRecord = -1 // counted below, with a clearer message
	head, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, parseErr(1, "empty file: not an iotbench results file")
	}
	if err != nil {
		return nil, csvErr(err)
	}
	index := map[string]int{}
	for i, name := range head {
		if _, dup := index[name]; dup {
			return nil, parseErr(1, "column %q appears twice in the header", name)
		}
		index[name] = i
	}
	if _, ok := index["scenario"]; !ok {
		return nil, parseErr(1, "not an iotbench results file: the header has no scenario column (it starts %q)", strings.Join(head[:min(3, len(head))], ","))
	}

	p := &parsed{header: head}
	_, hasJIT := index["jit_busy_s"] // else its rows take the time from their warning
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		// A row reaching the end of a file that does not end a line was cut off; it is not left out
		// as a last line is (splitCut), since a quote left open in one row would carry all the rows
		// after it into the same field.
		if cr.InputOffset() == int64(len(data)) && !bytes.HasSuffix(data, []byte{'\n'}) {
			start := 0
			if pe := (*csv.ParseError)(nil); errors.As(err, &pe) {
				start = pe.StartLine
			} else if err == nil {
				start, _ = cr.FieldPos(0)
			}
			if start > 0 && start <= bytes.Count(data, []byte{'\n'}) {
				return nil, parseErr(start, "the last row is cut off (no line end) after a line break inside a quoted field: the run that wrote it stopped mid-row; delete from this line to the end of the file to use the rows before it")
			}
		}
		if err != nil {
			return nil, csvErr(err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != len(head) {
			return nil, parseErr(line, "%d fields, but the header has %d", len(rec), len(head))
		}
		v, err := rowVersion(rec, index)
		if err != nil {
			return nil, parseErr(line, "%v", err)
		}
		if p.version == 0 {
			p.version = v
			if err := checkColumns(index, v); err != nil {
				return nil, err
			}
		} else if v != p.version {
			return nil, parseErr(line, "schema_version %d, but the first row has %d: one file holds rows of one schema", v, p.version)
		}
		var row Row
		var unmeasured string // the first empty measurement column
		for _, c := range columns {
			i, ok := index[c.name]
			if !ok {
				continue // newer than this file
			}
			err := c.set(&row, rec[i])
			if errors.Is(err, errUnmeasured) {
				unmeasured = cmp.Or(unmeasured, c.name)
				continue
			}
			if err != nil {
				return nil, parseErr(line, "column %s: %q is not %v", c.name, rec[i], err)
			}
		}
		if v < fieldsSchema {
			upgrade(&row) // before Loaded, which reads the kind
		} else if row.Valid != (row.Fault == fault.None) {
			return nil, parseErr(line, "column invalid_kind: %q with valid %v: a valid row has no kind of fault, an invalid one has one", row.Fault, row.Valid)
		}
		if unmeasured != "" && row.Loaded() {
			return nil, parseErr(line, "column %s: \"\" is not %v", unmeasured, errUnmeasured)
		}
		if !hasJIT {
			row.JITBusy, row.JITJudged = jitWarned(row.Warnings)
		}
		row.Warnings = rewarned(row)
		p.rows = append(p.rows, row)
	}
	if p.version == 0 {
		if err := checkColumns(index, 1); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// rowVersion is the schema version a row says it has: 1 for files from before the column.
func rowVersion(rec []string, index map[string]int) (int, error) {
	i, ok := index["schema_version"]
	if !ok {
		return 1, nil
	}
	v, err := strconv.Atoi(rec[i])
	switch {
	case err != nil || v < 1:
		return 0, fmt.Errorf("schema_version %q is not a version number", rec[i])
	case v > SchemaVersion:
		return 0, fmt.Errorf("schema_version %d is newer than this iotbench reads (%d): use the iotbench that wrote the file, or a newer one", v, SchemaVersion)
	}
	return v, nil
}

// checkColumns reports the columns a file of the given version must have and lacks.
func checkColumns(index map[string]int, version int) error {
	var missing []string
	for _, c := range columns {
		if _, ok := index[c.name]; !ok && c.since <= version {
			missing = append(missing, c.name)
		}
	}
	if len(missing) > 0 {
		return parseErr(1, "not an iotbench results file of schema %d: the header lacks %s", version, strings.Join(missing, ", "))
	}
	return nil
}

// csvErr turns encoding/csv's error into a ParseError at its line.
func csvErr(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		msg := pe.Err.Error()
		if errors.Is(pe.Err, csv.ErrQuote) {
			msg += " (a quoted field left open?)"
		}
		return parseErr(pe.Line, "%s", msg)
	}
	return err
}
