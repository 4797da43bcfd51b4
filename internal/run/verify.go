package run

import (
	"context"
	"fmt"
	"io"

	"github.com/iotbench/iotbench/internal/bench"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/protocol"
	"github.com/iotbench/iotbench/internal/scenario"
	"github.com/iotbench/iotbench/internal/verify"
)

// Verification is a check of targets against every endpoint of the contract (docs/contract.md).
type Verification struct {
	// File is the scenario matrix naming the targets; Targets those checked (empty: all).
	File      string
	Targets   []string
	Overrides plan.Overrides
	// Payload is the standard reading document the contract's writes send.
	Payload []byte
	// Engine and CABundle are as a run's (Setup).
	Engine, CABundle string
	// Protocols are those checked, of each target's declared ones; empty: all.
	Protocols []protocol.Protocol
	Log       io.Writer
}

// Verify builds and starts each target of v in turn, as a run would, and checks every endpoint
// of the contract. It returns the targets that failed, of how many.
func (rs *Runs) Verify(ctx context.Context, v Verification) (failed []string, total int, err error) {
	if v.Log == nil {
		v.Log = io.Discard
	}
	f, err := scenario.Load(v.File)
	if err != nil {
		return nil, 0, PlanError(err)
	}
	allowed, err := rs.Effects.AllowedCPUs()
	if err != nil {
		return nil, 0, err
	}
	// Planned before the engine is reached, so that a mistake in the flags or the file is found
	// first; planned again on another host's CPUs when the engine is there.
	p, err := plan.Targets(f, v.Targets, v.Overrides, allowed)
	if err != nil {
		return nil, 0, PlanError(err)
	}
	d, err := rs.connect(ctx, v.Engine, nil, v.CABundle, v.Log)
	if err != nil {
		return nil, 0, err
	}
	if d.Remote() != "" {
		facts, err := d.Facts(ctx)
		if err != nil {
			return nil, 0, fmt.Errorf("asking the engine at %s about its host: %w", d.Remote(), err)
		}
		if p, err = plan.Targets(f, v.Targets, v.Overrides, allCPUs(facts.CPUs)); err != nil {
			return nil, 0, PlanError(err)
		}
	}
	r := &bench.Runner{Lifecycle: d, Log: v.Log, RemoteHost: d.Remote()}
	failed, err = r.Verify(ctx, p, verify.Contract(v.Payload), v.Protocols)
	return failed, len(p.Cells), err
}
