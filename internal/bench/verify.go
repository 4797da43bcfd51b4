package bench

import (
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/iotbench/iotbench/internal/container"
	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/protocol"
	"github.com/iotbench/iotbench/internal/signals"
	"github.com/iotbench/iotbench/internal/tlscert"
	"github.com/iotbench/iotbench/internal/verify"
)

// Verify starts each target of p in turn and checks it against the contract, once over each
// protocol its image declares (container.LabelProtocols) among only (empty: all), in a fresh
// container each time. It returns the names of the targets that failed over any of them.
func (r *Runner) Verify(ctx context.Context, p *plan.Plan, cases []verify.Case, only []protocol.Protocol) ([]string, error) {
	images, err := r.build(ctx, p)
	if err != nil {
		return nil, err
	}
	defer r.stopDownstream()
	defer r.dropCerts()
	var failed []string
	for i, c := range p.Cells {
		fmt.Fprintf(r.Log, "[%d/%d] verifying %s\n", i+1, len(p.Cells), c.Target)
		if nl := images.failure(c); nl != nil {
			fmt.Fprintf(r.Log, "  FAIL %s\n", nl.reason())
			failed = append(failed, c.Target)
			continue
		}
		protocols := []protocol.Protocol{protocol.HTTP1}
		if o, ok := r.Lifecycle.(container.Offerer); ok {
			if protocols, err = o.Protocols(ctx, images.ids[c.Build.Tag()]); err != nil {
				fmt.Fprintf(r.Log, "  FAIL %v\n", err)
				failed = append(failed, c.Target)
				continue
			}
		}
		ok := true
		for _, pr := range protocols {
			if len(only) > 0 && !slices.Contains(only, pr) {
				continue
			}
			pass, err := r.verifyOver(ctx, p, c, images, pr, cases, len(protocols) > 1 || len(only) > 0)
			if err != nil {
				return failed, err
			}
			ok = ok && pass
		}
		for _, pr := range only {
			if !slices.Contains(protocols, pr) {
				fmt.Fprintf(r.Log, "  skipped %s: %s does not serve it (its image declares %s in label %s)\n", pr, c.Target, joined(protocols), container.LabelProtocols)
			}
		}
		if !ok {
			failed = append(failed, c.Target)
		}
	}
	return failed, nil
}

// verifyOver starts c's target serving pr and checks the contract over it; err is only
// cancellation.
func (r *Runner) verifyOver(ctx context.Context, p *plan.Plan, c plan.Cell, images built, pr protocol.Protocol, cases []verify.Case, say bool) (bool, error) {
	if say {
		fmt.Fprintf(r.Log, "  over %s\n", pr)
	}
	var set *tlscert.Set
	if pr.TLS() {
		if r.RemoteHost != "" {
			fmt.Fprintf(r.Log, "  skipped %s: the run's certificates are on this machine, which the engine on %s cannot mount\n", pr, r.RemoteHost)
			return true, nil
		}
		var err error
		if set, err = r.runCerts(); err != nil {
			fmt.Fprintf(r.Log, "  FAIL %v\n", err)
			return false, nil
		}
		c.Spec.TLSDir = set.Dir
	}
	c.Spec.Protocol = pr
	in, nl, err := r.start(ctx, p, c, images, false)
	if err != nil {
		return false, err
	}
	if nl != nil {
		fmt.Fprintf(r.Log, "  FAIL %s\n", nl.reason())
		return false, nil
	}
	ok := true
	res, err := verify.RunOver(ctx, in.ctr.URL(), pr, set, cases)
	if err != nil {
		ok = false
		fmt.Fprintf(r.Log, "  FAIL %v\n", err)
	}
	for _, res := range res {
		if res.Err != nil {
			ok = false
			fmt.Fprintf(r.Log, "  FAIL %s: %v\n", res.Case, res.Err)
		} else {
			fmt.Fprintf(r.Log, "  ok   %s\n", res.Case)
		}
	}
	if read, err := verifySignals(ctx, in.ctr); err != nil {
		ok = false
		fmt.Fprintf(r.Log, "  FAIL /signals: %v\n", err)
	} else if read {
		fmt.Fprintf(r.Log, "  ok   /signals on its own port\n")
	}
	if in.db != nil {
		req := load.Request{Protocol: pr}
		if set != nil {
			req.TLS = &tls.Config{RootCAs: set.Pool}
		}
		if err := in.sameRows(ctx, req); err != nil {
			ok = false
			fmt.Fprintf(r.Log, "  FAIL the rows are in the database server: %v\n", err)
		} else {
			fmt.Fprintf(r.Log, "  ok   the rows are in the database server: /stats counts what PostgreSQL counts\n")
		}
	}
	if !ok {
		fmt.Fprintf(r.Log, "  last lines of the target's log:\n%s\n", in.ctr.Logs(context.WithoutCancel(ctx), 20))
	}
	in.remove(ctx)
	return ok, ctx.Err()
}

// runCerts makes the run's certificates when a protocol first needs them, into a folder only
// this user can enter, and removes them when the run ends.
type runCerts struct {
	parent string
	set    *tlscert.Set
}

func (rc *runCerts) get() (*tlscert.Set, error) {
	if rc.set != nil {
		return rc.set, nil
	}
	dir, err := os.MkdirTemp("", "iotbench-tls-")
	if err != nil {
		return nil, fmt.Errorf("making the run's certificates: %w", err)
	}
	set, err := tlscert.New(filepath.Join(dir, "tls"), time.Now())
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	rc.parent, rc.set = dir, set
	return set, nil
}

func (rc *runCerts) remove() {
	if rc.parent != "" {
		os.RemoveAll(rc.parent)
	}
}

// verifySignals reads the target's runtime signals once, when it was given a port for them (read
// says so): the answer must be the contract's whole (docs/contract.md, "Signals").
func verifySignals(ctx context.Context, inst container.Instance) (read bool, err error) {
	obs, ok := inst.(container.Observed)
	if !ok || obs.Signals() == "" {
		return false, nil
	}
	_, err = signals.Read(ctx, obs.Signals())
	return true, err
}
