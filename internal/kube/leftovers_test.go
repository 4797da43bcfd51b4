package kube

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/container"
)

// TestLeftoversAreTheNamespacesOfRunsWhoseProcessIsGone: a namespace whose run's process is gone
// is deleted; one of a process that runs, or of another host, only with Every; a dry run
// deletes nothing.
func TestLeftoversAreTheNamespacesOfRunsWhoseProcessIsGone(t *testing.T) {
	host, _ := os.Hostname()
	// made an hour ago, but the alive one after this process started (a pid's process that
	// started after the namespace was made is another process)
	ns := func(name, pid, host string) Object {
		created := time.Now().Add(-time.Hour)
		if name == "alive" {
			created = time.Now().Add(2 * time.Second)
		}
		return Object{"metadata": Object{"name": name, "creationTimestamp": created.Format(time.RFC3339),
			"labels": Object{managedBy: "iotbench", runLabel: "r-" + name, pidLabel: pid, hostLabel: host}}, "status": Object{"phase": "Active"}}
	}
	gone := strconv.Itoa(1<<22 + 7) // above pid_max's limit: no process has it
	items := []any{ns("gone", gone, labelValue(host)), ns("alive", strconv.Itoa(os.Getpid()), labelValue(host)), ns("elsewhere", gone, "another-host")}
	for _, tc := range []struct {
		name    string
		cleanup container.Cleanup
		want    string // found, in order
		deleted string
	}{
		{"gone only", container.Cleanup{}, "gone", "gone"},
		{"dry run", container.Cleanup{DryRun: true}, "gone", ""},
		{"every", container.Cleanup{Every: true}, "gone,alive,elsewhere", "gone,alive,elsewhere"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeAPI{}
			c := f.server(t)
			f.objects["/api/v1/namespaces"] = Object{"items": items}
			for _, n := range []string{"gone", "alive", "elsewhere"} {
				f.objects["/api/v1/namespaces/"+n] = Object{}
			}
			found, err := (&Leftovers{c}).RemoveLeftovers(context.Background(), tc.cleanup)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, x := range found {
				names = append(names, x.Name)
				if !x.Namespace || x.RunID != "r-"+x.Name {
					t.Errorf("%+v", x)
				}
			}
			if g := strings.Join(names, ","); g != tc.want {
				t.Errorf("found %s, want %s", g, tc.want)
			}
			var deleted []string
			for _, call := range f.calls {
				if n, ok := strings.CutPrefix(call, "DELETE /api/v1/namespaces/"); ok {
					deleted = append(deleted, n)
				}
			}
			if g := strings.Join(deleted, ","); g != tc.deleted {
				t.Errorf("deleted %s, want %s", g, tc.deleted)
			}
			if len(found) > 0 && !strings.HasPrefix(found[0].Describe(time.Now()), "Kubernetes namespace gone (run r-gone, 1h0m old, Active; its iotbench process is gone (pid") {
				t.Errorf("described as %q", found[0].Describe(time.Now()))
			}
		})
	}
}
