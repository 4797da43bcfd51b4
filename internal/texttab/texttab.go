// Package texttab is the one setup of iotbench's terminal tables: headers as written (never
// upper-cased), numbers right-aligned beside left-aligned names.
package texttab

import (
	"io"

	"github.com/iotbench/iotbench/internal/safetext"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// Layout says how a table's columns are aligned and wrapped.
type Layout struct {
	// Left are the columns aligned left; the others are right-aligned (numbers). Nil with Wrap:
	// the writer's own alignment.
	Left []int
	// Wrap is the width past which a cell's text wraps; 0 never wraps.
	Wrap int
	// TightHeader leaves the header cells unpadded (the experiments' published tables).
	TightHeader bool
}

// New makes a table of header on w.
func New(w io.Writer, header []string, l Layout) *tablewriter.Table {
	head := tw.CellConfig{Formatting: tw.CellFormatting{AutoFormat: tw.Off}}
	if !l.TightHeader {
		head.Padding = tw.CellPadding{Global: tw.PaddingDefault}
	}
	opts := []tablewriter.Option{tablewriter.WithHeaderConfig(head)}
	if l.Left != nil {
		align := make([]tw.Align, len(header))
		for i := range align {
			align[i] = tw.AlignRight
		}
		for _, i := range l.Left {
			align[i] = tw.AlignLeft
		}
		opts = append(opts, tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}))
	}
	if l.Wrap > 0 {
		opts = append(opts, tablewriter.WithRowAutoWrap(tw.WrapNormal), tablewriter.WithRowMaxWidth(l.Wrap))
	}
	// A cell may quote a file (a name, a value): its control codes are shown, not obeyed.
	t := tablewriter.NewTable(safetext.Lines{W: w}, opts...)
	h := make([]any, len(header))
	for i, c := range header {
		h[i] = c
	}
	t.Header(h...)
	return t
}

// Row turns cells into what a table appends.
func Row(cells []string) []any {
	out := make([]any, len(cells))
	for i, c := range cells {
		out[i] = c
	}
	return out
}
