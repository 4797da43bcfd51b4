package cli

import (
	"fmt"

	"github.com/iotbench/iotbench/internal/payload"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/scenario"
)

// makePlan plans scenario name of f. A scenario sweeping payload sizes (request.body_sizes) is
// planned once per size: its cells are named <scenario>.<size>, so that every size has its own
// rows and table, and they carry the body grown to that size.
func makePlan(f *scenario.File, name string, o plan.Overrides, allowed []int) (*plan.Plan, error) {
	p, err := plan.Make(f, name, o, allowed)
	if err != nil {
		return nil, err
	}
	r := p.Scenario.Request
	if len(r.Sizes) == 0 {
		return p, nil
	}
	base := p.Cells
	p.Cells = nil
	for _, size := range r.Sizes {
		for _, c := range base {
			// Checked when the file was read; an error here is a changed body file.
			body, err := payload.Pad(c.Load.Request.Body, r.PadField, size.Bytes)
			if err != nil {
				return nil, fmt.Errorf("%s: scenario %s: request.body_sizes %s: %v", f.Path, name, size.Label, err)
			}
			c.Scenario = name + "." + size.Label
			c.Load.Request.Body = body
			p.Cells = append(p.Cells, c)
		}
	}
	return p, nil
}
