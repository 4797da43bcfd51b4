package container

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/moby/moby/client"
)

// Process is one process of a container: its PID on the host, and inside the container's PID
// namespace (where a runtime names its symbol map, /tmp/perf-<PID>.map).
type Process struct {
	HostPID, PID int
}

// Profiled is a target in a container on this machine whose processes the host can sample
// (internal/profile), and stop gracefully: a runtime may write its symbols only as it exits
// (the JVM's DumpPerfMapAtExit).
type Profiled interface {
	Instance
	// Processes lists the container's processes.
	Processes(ctx context.Context) ([]Process, error)
	// Stop ends the container's processes gracefully (SIGTERM, SIGKILL after timeoutSeconds):
	// a runtime may write its symbol map as it exits (to Spec.Tmp).
	Stop(ctx context.Context, timeoutSeconds int) error
}

var _ Profiled = (*dockerInstance)(nil)

func (i *dockerInstance) Processes(ctx context.Context) ([]Process, error) {
	if i.d.remote != "" {
		return nil, fmt.Errorf("container %.12s runs on %s: its processes are sampled there, not here", i.id, i.d.remote)
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	top, err := i.d.c.ContainerTop(ctx, i.id, client.ContainerTopOptions{Arguments: []string{"-o", "pid"}})
	if err != nil {
		return nil, fmt.Errorf("listing the processes of container %.12s: %w", i.id, err)
	}
	var ps []Process
	for _, p := range top.Processes {
		if len(p) == 0 {
			continue
		}
		host, err := strconv.Atoi(strings.TrimSpace(p[0]))
		if err != nil {
			return nil, fmt.Errorf("container %.12s: process id %q: %w", i.id, p[0], err)
		}
		ns, err := namespacePID("/proc", host)
		if err != nil {
			return nil, err
		}
		ps = append(ps, Process{HostPID: host, PID: ns})
	}
	if len(ps) == 0 {
		return nil, fmt.Errorf("container %.12s has no process", i.id)
	}
	return ps, nil
}

// namespacePID is host's PID in its innermost PID namespace: the last field of NSpid in its
// status.
func namespacePID(proc string, host int) (int, error) {
	f, err := os.Open(filepath.Join(proc, strconv.Itoa(host), "status"))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "NSpid:"); ok {
			fields := strings.Fields(rest)
			if len(fields) == 0 {
				break
			}
			return strconv.Atoi(fields[len(fields)-1])
		}
	}
	return 0, fmt.Errorf("process %d: no NSpid in its status (a kernel older than 4.1?)", host)
}

func (i *dockerInstance) Stop(ctx context.Context, timeoutSeconds int) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout+time.Duration(timeoutSeconds)*time.Second)
	defer cancel()
	if _, err := i.d.c.ContainerStop(ctx, i.id, client.ContainerStopOptions{Timeout: &timeoutSeconds}); err != nil {
		return fmt.Errorf("stopping container %.12s: %w", i.id, err)
	}
	return nil
}
