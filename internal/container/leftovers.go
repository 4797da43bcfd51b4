package container

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"
)

// Owner is what iotbench knows of the process that started a container.
type Owner int

const (
	// OwnerGone: the process named by the container's labels no longer runs on this host. Its
	// container is a leftover (of a kill -9, a crash, a closed terminal) that nobody will remove.
	OwnerGone Owner = iota
	// OwnerAlive: a run in progress, this one or another.
	OwnerAlive
	// OwnerElsewhere: started from another host (an engine shared through DOCKER_HOST), whose
	// processes this host cannot see.
	OwnerElsewhere
	// OwnerUnknown: no process label (an iotbench from before the labels).
	OwnerUnknown
)

func (o Owner) String() string {
	switch o {
	case OwnerGone:
		return "its iotbench process is gone"
	case OwnerAlive:
		return "its iotbench process runs"
	case OwnerElsewhere:
		return "started from another host"
	default:
		return "no owner recorded"
	}
}

// Found is a container iotbench created, as the engine lists it.
type Found struct {
	ID      string
	Name    string
	Target  string
	RunID   string
	PID     int // 0 when not recorded
	Host    string
	Created time.Time
	State   string // running, exited, created…
	Owner   Owner
	// Image: not a container but a generator shard image of another iotbench build (Name is its
	// tag); nothing else is set but ID and Created.
	Image bool
	// Namespace: not a container but a run's Kubernetes namespace (Name), with all it holds.
	Namespace bool
}

// Containers lists every container labelled as iotbench's, and whose each is.
func (d *Docker) Containers(ctx context.Context) ([]Found, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	res, err := d.c.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", Label)})
	if err != nil {
		return nil, fmt.Errorf("listing iotbench's containers: %w", err)
	}
	host, _ := os.Hostname()
	var out []Found
	for _, c := range res.Items {
		f := Found{
			ID:      c.ID,
			Target:  c.Labels[LabelTarget],
			RunID:   c.Labels[LabelRun],
			Host:    c.Labels[LabelHost],
			Created: time.Unix(c.Created, 0),
			State:   string(c.State),
		}
		if len(c.Names) > 0 {
			f.Name = strings.TrimPrefix(c.Names[0], "/")
		}
		f.PID, _ = strconv.Atoi(c.Labels[LabelPID])
		f.Owner = owner(f, host, processAlive)
		out = append(out, f)
	}
	return out, nil
}

// Judge sets f's Owner by this machine's processes, host being how f names this machine: for
// leftovers of another kind than a container (a run's Kubernetes namespace).
func Judge(f Found, host string) Found {
	f.Owner = owner(f, host, processAlive)
	return f
}

// owner judges f's process: alive reports whether pid runs and was started no later than since.
func owner(f Found, host string, alive func(pid int, since time.Time) bool) Owner {
	switch {
	case f.PID <= 0:
		return OwnerUnknown
	case f.Host != host:
		return OwnerElsewhere
	case alive(f.PID, f.Created):
		return OwnerAlive
	default:
		return OwnerGone
	}
}

// Cleanup says which of iotbench's containers RemoveLeftovers removes.
type Cleanup struct {
	// Every removes every iotbench container, those of runs in progress too; otherwise only
	// those whose process is gone (OwnerGone).
	Every bool
	// DryRun lists what would be removed and removes nothing.
	DryRun bool
	// Match, when set, narrows the containers considered (tests touch only their own).
	Match func(Found) bool
}

// RemoveLeftovers removes the containers c selects and returns them, each removed (or, on a dry
// run, to be removed); a container that could not be removed is in the error instead. Unless c
// narrows the containers (Match), the generator shard images of other iotbench builds go too
// (OldShardImages), returned after the containers.
func (d *Docker) RemoveLeftovers(ctx context.Context, c Cleanup) ([]Found, error) {
	out, err := d.removeContainers(ctx, c)
	if c.Match != nil || err != nil {
		return out, err // an engine that failed once is not asked again (a hung one costs callTimeout a call)
	}
	images, err := d.removeOldShardImages(ctx, c.DryRun)
	return append(out, images...), err
}

// removeOldShardImages removes the shard images of every build but this binary's; none when this
// binary's cannot be read (its tag is its hash).
func (d *Docker) removeOldShardImages(ctx context.Context, dryRun bool) ([]Found, error) {
	bin, err := os.Executable()
	if err != nil {
		return nil, nil
	}
	keep, err := ShardImageTag(bin)
	if err != nil {
		return nil, nil
	}
	return d.removeImages(ctx, ShardImageRepo, keep, dryRun)
}

func (d *Docker) removeContainers(ctx context.Context, c Cleanup) ([]Found, error) {
	found, err := d.Containers(ctx)
	if err != nil {
		return nil, err
	}
	var out []Found
	var errs []error
	for _, f := range found {
		if !c.Every && f.Owner != OwnerGone || c.Match != nil && !c.Match(f) {
			continue
		}
		if !c.DryRun {
			if err := d.removeContainer(ctx, f.ID); err != nil {
				errs = append(errs, fmt.Errorf("removing container %s: %w", f.Name, err))
				continue
			}
		}
		out = append(out, f)
	}
	return out, errors.Join(errs...)
}

// Describe is f in one line: name, target, run, age at now, and whose it is.
func (f Found) Describe(now time.Time) string {
	if f.Image {
		return fmt.Sprintf("image %s (the generator shard image of another iotbench build, %s old)", f.Name, age(now.Sub(f.Created)))
	}
	run := f.RunID
	if run == "" {
		run = "unknown"
	}
	owner := f.Owner.String()
	if f.PID > 0 {
		owner += fmt.Sprintf(" (pid %d)", f.PID)
	}
	if f.Namespace {
		return fmt.Sprintf("Kubernetes namespace %s (run %s, %s old, %s; %s)", f.Name, run, age(now.Sub(f.Created)), f.State, owner)
	}
	return fmt.Sprintf("%s (target %s, run %s, %s old, %s; %s)", f.Name, f.Target, run, age(now.Sub(f.Created)), f.State, owner)
}

// age rounds d to what a reader needs: seconds under a minute, minutes under a day.
func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return d.Round(time.Second).String()
	case d < 24*time.Hour:
		return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
	default:
		return fmt.Sprintf("%dd%s", d/(24*time.Hour), strings.TrimSuffix((d%(24*time.Hour)).Round(time.Hour).String(), "0m0s"))
	}
}

// removeContainer stops and deletes the container id.
func (d *Docker) removeContainer(ctx context.Context, id string) error {
	return removeContainer(ctx, d.c, id)
}

// removeContainer stops and deletes the container id. One already gone is removed; one already
// being removed (a second Ctrl-C removes beside the run) is removed once the engine is done.
func removeContainer(ctx context.Context, c *client.Client, id string) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	_, err := c.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true})
	switch {
	case err == nil || cerrdefs.IsNotFound(err):
		return nil
	case cerrdefs.IsConflict(err) && strings.Contains(err.Error(), "already in progress"):
		for {
			if _, err := c.ContainerInspect(ctx, id, client.ContainerInspectOptions{}); cerrdefs.IsNotFound(err) {
				return nil
			} else if ctx.Err() != nil {
				return fmt.Errorf("container %.12s: still being removed: %w", id, ctx.Err())
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return err
}

// RemoveMine removes every container this process started and has not removed yet, and returns
// their names: the last resort of an iotbench that exits at once (a second Ctrl-C). It makes its
// own connection to the engine of the environment, beside whatever else the process was doing
// with it, and reaches the generator hosts' engines through the connections their shards were
// started on (shardEngines).
func RemoveMine(ctx context.Context) ([]string, error) {
	c, err := client.New(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return nil, err
	}
	defer c.Close()
	names, err := removeMine(ctx, c)
	errs := []error{err}
	for _, other := range shardEngines.list() {
		n, err := removeMine(ctx, other.c)
		names = append(names, n...)
		errs = append(errs, err)
	}
	return names, errors.Join(errs...)
}

// removeMine removes the containers of this process on the engine c reaches.
func removeMine(ctx context.Context, c *client.Client) ([]string, error) {
	host, _ := os.Hostname()
	lctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	filters := make(client.Filters).Add("label", LabelPID+"="+strconv.Itoa(os.Getpid()))
	res, err := c.ContainerList(lctx, client.ContainerListOptions{All: true, Filters: filters})
	if err != nil {
		return nil, fmt.Errorf("the engine at %s: %w", c.DaemonHost(), err)
	}
	var names []string
	var errs []error
	for _, item := range res.Items {
		if item.Labels[LabelHost] != host {
			continue // the same pid on another host
		}
		if err := removeContainer(ctx, c, item.ID); err != nil {
			errs = append(errs, err)
			continue
		}
		if len(item.Names) > 0 {
			names = append(names, strings.TrimPrefix(item.Names[0], "/"))
		}
	}
	return names, errors.Join(errs...)
}

// shardEngines are the engines this process has started shard containers on and not closed.
// Process state, not a run's: it serves RemoveMine, which a second Ctrl-C calls with nothing of
// the run at hand, and which would otherwise leave the shards of generator hosts running.
var shardEngines engineSet

type engineSet struct {
	mu sync.Mutex
	ds map[*Docker]struct{}
}

func (s *engineSet) add(d *Docker) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ds == nil {
		s.ds = map[*Docker]struct{}{}
	}
	s.ds[d] = struct{}{}
}

func (s *engineSet) remove(d *Docker) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.ds, d)
}

func (s *engineSet) list() []*Docker {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Docker, 0, len(s.ds))
	for d := range s.ds {
		out = append(out, d)
	}
	return out
}

// processAlive reports whether pid runs on this host and started no later than since (with a
// second's slack: /proc/stat's boot time has whole seconds). A later start is another process
// that reused the pid, not the one that created the container.
func processAlive(pid int, since time.Time) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	start, err := processStart(pid)
	if err != nil {
		return true // it exists; when it started is unknown, so it may be the owner
	}
	return !start.After(since.Add(time.Second))
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's start time: 100 on every Linux
// architecture Go supports.
const clockTicks = 100

// processStart reads when pid started, from /proc.
func processStart(pid int) (time.Time, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return time.Time{}, err
	}
	// The command name (field 2) may hold spaces and parentheses: the fields after it follow
	// the last ')'. starttime is field 22, the 20th after the name.
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return time.Time{}, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 20 {
		return time.Time{}, fmt.Errorf("/proc/%d/stat: %d fields after the name, want 20 or more", pid, len(fields))
	}
	ticks, err := strconv.ParseInt(fields[19], 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("/proc/%d/stat: start time: %w", pid, err)
	}
	boot, err := bootTime()
	if err != nil {
		return time.Time{}, err
	}
	return boot.Add(time.Duration(ticks) * time.Second / clockTicks), nil
}

func bootTime() (time.Time, error) {
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		return time.Time{}, err
	}
	for line := range strings.Lines(string(stat)) {
		if rest, ok := strings.CutPrefix(line, "btime "); ok {
			sec, err := strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
			if err != nil {
				return time.Time{}, fmt.Errorf("/proc/stat: btime: %w", err)
			}
			return time.Unix(sec, 0), nil
		}
	}
	return time.Time{}, errors.New("/proc/stat has no btime")
}
