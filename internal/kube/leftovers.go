package kube

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/iotbench/iotbench/internal/container"
)

// Leftovers are the namespaces of iotbench's runs on a cluster: Connect removes those whose
// process is gone as a run starts, and iotbench clean --kube on demand.
type Leftovers struct{ c *Client }

// ConnectLeftovers reaches the cluster o names, to clean it.
func ConnectLeftovers(o Options) (*Leftovers, error) {
	c, err := Dial(o)
	if err != nil {
		return nil, err
	}
	return &Leftovers{c}, nil
}

// Close releases nothing: the client keeps no connection that needs closing.
func (l *Leftovers) Close() error { return nil }

// RemoveLeftovers deletes the namespaces of runs whose process is gone (every run's with
// c.Every; none with c.DryRun) and returns them; one that could not be deleted is in the error.
func (l *Leftovers) RemoveLeftovers(ctx context.Context, c container.Cleanup) ([]container.Found, error) {
	var list struct {
		Items []struct {
			Metadata struct {
				Name              string
				Labels            map[string]string
				CreationTimestamp time.Time
			}
			Status struct{ Phase string }
		}
	}
	if err := l.c.List(ctx, "Namespace", "", managedBy+"=iotbench", &list); err != nil {
		return nil, fmt.Errorf("listing iotbench's namespaces: %w", err)
	}
	host, _ := os.Hostname()
	var out []container.Found
	var errs []error
	for _, ns := range list.Items {
		md := ns.Metadata
		f := container.Found{Namespace: true, Name: md.Name, RunID: md.Labels[runLabel], Host: md.Labels[hostLabel],
			Created: md.CreationTimestamp, State: ns.Status.Phase}
		f.PID, _ = strconv.Atoi(md.Labels[pidLabel])
		f = container.Judge(f, labelValue(host))
		if !c.Every && f.Owner != container.OwnerGone || c.Match != nil && !c.Match(f) {
			continue
		}
		if !c.DryRun {
			if err := l.c.Delete(ctx, "Namespace", "", md.Name); err != nil {
				errs = append(errs, fmt.Errorf("namespace %s: %w", md.Name, err))
				continue
			}
		}
		out = append(out, f)
	}
	return out, errors.Join(errs...)
}
