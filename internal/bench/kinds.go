package bench

import (
	"context"
	"fmt"
	"slices"

	"github.com/iotbench/iotbench/internal/container"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/verify"
)

// kindRows are the rows of the requests of c, a mix, whose row is row (the whole) and measured
// phase res: each the cell's row with the request's figures (load.Result.Kinds), its scenario
// <scenario>.request-<name>. The target's resources are the cell's, shared by its requests, so
// the costs per request (per core, per GiB, CPU per request) are left out. A request's row is
// valid when it is and its cell is, or the cell is invalid only for another request. None when c
// is no mix or was not loaded.
func kindRows(row results.Row, c plan.Cell, res load.Result) []results.Row {
	if len(c.Load.Kinds) == 0 || !row.Loaded() || len(res.Kinds) != len(c.Load.Kinds) {
		return nil
	}
	rows := make([]results.Row, len(res.Kinds))
	for i, part := range res.Kinds {
		kr := row
		kr.Scenario, kr.Request = kindScenario(row.Scenario, part.Kind), part.Kind
		kr.RequestedRPS = part.RequestedRate
		fill(&kr, part)
		blame(&kr)
		kr.Connections = row.Connections
		kr.RPSPerCore, kr.RPSPerGiB, kr.CPUPerRequest = 0, 0, 0
		if !row.Valid && (row.InvalidReason != blamed(row, res.InvalidReason) || !res.InvalidByRequest()) {
			invalidate(&kr, row.Fault, "the cell: "+row.InvalidReason)
		}
		rows[i] = kr
	}
	return rows
}

// kindScenario is the scenario of the rows of a mix's request kind, the mix's scenario's.
func kindScenario(scenario, kind string) string { return scenario + ".request-" + kind }

// aimKinds aims each request of a mix at base, the target's URL (a kind's URL is its path
// until then); the cell's kinds stay as planned.
func aimKinds(cfg *load.Config, base, remote string) {
	if len(cfg.Kinds) == 0 {
		return
	}
	cfg.Kinds = slices.Clone(cfg.Kinds)
	for i := range cfg.Kinds {
		k := &cfg.Kinds[i].Request
		k.URL, k.Remote = base+k.URL, remote
		k.Protocol, k.TLS = cfg.Request.Protocol, cfg.Request.TLS // a mix speaks its cell's protocol
	}
}

// storing are the successes and errors of the requests whose work stores rows: all of res for
// a cell of one request, the sum of the storing kinds' for a mix.
func storing(cfg load.Config, res load.Result) (successes, errors int64) {
	if len(cfg.Kinds) == 0 || len(res.Kinds) != len(cfg.Kinds) {
		return res.Successes, res.Errors
	}
	for i, k := range cfg.Kinds {
		if k.Check.StoresRows {
			successes += res.Kinds[i].Successes
			errors += res.Kinds[i].Errors
		}
	}
	return successes, errors
}

// calling are the successes of the requests whose work calls downstream (storing's rule).
func calling(cfg load.Config, res load.Result) int64 {
	if len(cfg.Kinds) == 0 || len(res.Kinds) != len(cfg.Kinds) {
		return res.Successes
	}
	var n int64
	for i, k := range cfg.Kinds {
		if k.Check.CallsDownstream {
			n += res.Kinds[i].Successes
		}
	}
	return n
}

// verifyKinds checks each request of a mix as verifyCell checks a cell's one: its answers, then
// /stats grown by one for each answer to a request that stores rows.
func verifyKinds(ctx context.Context, baseURL string, cfg load.Config, db container.Database) error {
	rows := countRows(cfg.Check.StoresRows, baseURL, cfg.Request, db)
	if err := rows.start(ctx); err != nil {
		return err
	}
	stored := int64(0)
	for _, k := range cfg.Kinds {
		if err := verify.Request(ctx, k.Request, k.Check, cfg.Timeout); err != nil {
			return fmt.Errorf("request %s: %w", k.Name, err)
		}
		if k.Check.StoresRows {
			stored += verify.Tries
		}
	}
	return rows.check(ctx, stored, 0)
}
