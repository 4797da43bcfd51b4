package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/iotbench/iotbench/internal/container"
	"github.com/iotbench/iotbench/internal/cpuset"
	"github.com/iotbench/iotbench/internal/resources"
	"github.com/iotbench/iotbench/internal/shard"
	"github.com/iotbench/iotbench/internal/signals"
)

// Labels of what a run creates; RoleLabel is the nodes' (docs/scale.md).
const (
	RoleLabel   = "iotbench.io/role"
	runLabel    = "iotbench.io/run"
	pidLabel    = "iotbench.io/pid"
	hostLabel   = "iotbench.io/host"
	managedBy   = "app.kubernetes.io/managed-by"
	jobNameKey  = "batch.kubernetes.io/job-name"
	jobIndexKey = "batch.kubernetes.io/job-completion-index"
)

// Cluster runs a run's targets, and its generator shards, on a Kubernetes cluster (iotbench run
// --kube): the targets as Guaranteed pods on a target node, the shards as indexed Jobs on
// generator nodes, all in one namespace of the run's, removed at Close. Images are built by a
// local Docker engine and loaded into the nodes by the command the user gives (a registry
// otherwise: the nodes pull them).
type Cluster struct {
	c  *Client
	ns string
	// ownNamespace: the run created ns and removes it; otherwise only the objects it made.
	ownNamespace bool
	builder      Builder
	// loader is the command that loads an image into the nodes (its name appended); registry
	// prefixes the name an image is pushed under, where the nodes pull it; neither: the nodes
	// have the images or pull them by their own names.
	loader   []string
	registry string
	// Target is the node the targets run on; Generators counts the generator nodes.
	Target     Node
	Generators int
	version    string
	log        io.Writer

	mu    sync.Mutex
	tags  map[string]string // image ID → the tag it was loaded as
	seq   int               // names pods, services and jobs uniquely within the run
	job   string            // the shards' Job of the load phase under way
	shard string            // the shard image
}

// Builder builds the images on an engine of this machine, which also says their sizes.
type Builder interface {
	Build(ctx context.Context, b container.BuildSpec, log io.Writer) (imageID string, err error)
	ImageSize(ctx context.Context, image string) (int64, error)
	// Push tags image as ref and pushes it to ref's registry.
	Push(ctx context.Context, image, ref string) error
}

// Node is what a run needs of a node.
type Node struct {
	Name, IP        string
	CPUs            int
	Kernel, Runtime string
}

// Options say how to reach the cluster and what to make there.
type Options struct {
	// Kubeconfig is the file (empty: $KUBECONFIG or ~/.kube/config), Context its context
	// (empty: the current one).
	Kubeconfig, Context string
	// Namespace is an existing namespace to work in; empty: a new one, removed at the end.
	Namespace string
	// Loader is a command that loads a local image into the cluster's nodes, given its name
	// (e.g. "kind load docker-image"); Registry, a prefix the images are pushed under for the
	// nodes to pull (e.g. "registry.example/team/"). At most one of them.
	Loader, Registry string
	RunID            string
}

// Dial is a client of the cluster of o's kubeconfig and context.
func Dial(o Options) (*Client, error) {
	cfg, err := LoadConfig(ConfigFiles(o.Kubeconfig), o.Context)
	if err != nil {
		return nil, err
	}
	return NewClient(cfg), nil
}

// Connect reaches the cluster through c, checks that it has a ready target node and a generator
// node, and makes the run's namespace (o's). builder builds the images.
func Connect(ctx context.Context, c *Client, o Options, builder Builder, log io.Writer) (*Cluster, error) {
	cfg := c.cfg
	var v struct{ GitVersion string }
	if err := c.Do(ctx, http.MethodGet, "/version", nil, nil, &v); err != nil {
		return nil, err
	}
	cl := &Cluster{c: c, builder: builder, loader: strings.Fields(o.Loader), registry: o.Registry, version: v.GitVersion, tags: map[string]string{}, log: log}
	targets, err := cl.readyNodes(ctx, "target")
	if err != nil {
		return nil, err
	}
	gens, err := cl.readyNodes(ctx, "generator")
	if err != nil {
		return nil, err
	}
	cl.Target, cl.Generators = targets[0], len(gens)
	found, err := (&Leftovers{c}).RemoveLeftovers(ctx, container.Cleanup{})
	for _, f := range found {
		fmt.Fprintf(log, "removed what an earlier run left: %s\n", f.Describe(time.Now()))
	}
	if err != nil {
		fmt.Fprintf(log, "warning: namespaces of earlier runs: %v (`iotbench clean --kube %s` retries)\n", err, cfg.Context)
	}
	if o.Namespace != "" {
		if err := c.Get(ctx, "Namespace", "", o.Namespace, &struct{}{}); err != nil {
			return nil, fmt.Errorf("namespace %s of context %s: %w", o.Namespace, cfg.Context, err)
		}
		cl.ns = o.Namespace
	} else {
		cl.ns, cl.ownNamespace = "iotbench-"+strings.ToLower(o.RunID), true
		host, _ := os.Hostname()
		ns := Object{"apiVersion": "v1", "kind": "Namespace", "metadata": Object{"name": cl.ns, "labels": Object{
			managedBy: "iotbench", runLabel: strings.ToLower(o.RunID), pidLabel: strconv.Itoa(os.Getpid()), hostLabel: labelValue(host)}}}
		if err := c.Create(ctx, ns); err != nil {
			return nil, fmt.Errorf("making the run's namespace: %w", err)
		}
	}
	fmt.Fprintf(log, "Kubernetes %s (context %s): targets on node %s (%s, %d CPUs), shards on %d generator node(s), namespace %s\n",
		cl.version, cfg.Context, cl.Target.Name, cl.Target.IP, cl.Target.CPUs, cl.Generators, cl.ns)
	return cl, nil
}

// labelValue is s as a label's value: at most 63 of its letters, digits, '-', '_' and '.'.
func labelValue(s string) string {
	s = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '-'
	}, s)
	return strings.Trim(s[:min(len(s), 63)], "-_.")
}

type nodeList struct {
	Items []struct {
		Metadata struct{ Name string }
		Status   struct {
			Capacity   map[string]string
			Addresses  []struct{ Type, Address string }
			Conditions []struct{ Type, Status string }
			NodeInfo   struct{ KernelVersion, ContainerRuntimeVersion string }
		}
	}
}

// readyNodes are the ready nodes labelled with role, by name.
func (cl *Cluster) readyNodes(ctx context.Context, role string) ([]Node, error) {
	var l nodeList
	if err := cl.c.List(ctx, "Node", "", RoleLabel+"="+role, &l); err != nil {
		return nil, err
	}
	var nodes []Node
	for _, it := range l.Items {
		ready := slices.ContainsFunc(it.Status.Conditions, func(c struct{ Type, Status string }) bool { return c.Type == "Ready" && c.Status == "True" })
		if !ready {
			continue
		}
		n := Node{Name: it.Metadata.Name, Kernel: it.Status.NodeInfo.KernelVersion, Runtime: it.Status.NodeInfo.ContainerRuntimeVersion}
		n.CPUs, _ = strconv.Atoi(it.Status.Capacity["cpu"])
		for _, a := range it.Status.Addresses {
			if a.Type == "InternalIP" && n.IP == "" {
				n.IP = a.Address
			}
		}
		nodes = append(nodes, n)
	}
	if len(nodes) == 0 {
		return nil, fmt.Errorf("context %s has no ready node labelled %s=%s: label one (kubectl label node NAME %s=%s; docs/scale.md)", cl.c.cfg.Context, RoleLabel, role, RoleLabel, role)
	}
	slices.SortFunc(nodes, func(a, b Node) int { return strings.Compare(a.Name, b.Name) })
	return nodes, nil
}

// Version is the cluster's version and the target node's runtime, recorded in every row.
func (cl *Cluster) Version(context.Context) string {
	return fmt.Sprintf("kubernetes %s (%s)", cl.version, cl.Target.Runtime)
}

// Remote is the target node's address: the one the load goes to (its NodePort services).
func (cl *Cluster) Remote() string { return cl.Target.IP }

// Facts are the target node's.
func (cl *Cluster) Facts(context.Context) (container.HostFacts, error) {
	return container.HostFacts{CPU: "node " + cl.Target.Name, Kernel: cl.Target.Kernel, EngineVersion: cl.Version(context.Background()), CPUs: cl.Target.CPUs}, nil
}

// Build builds b on the local engine and loads it into the nodes.
func (cl *Cluster) Build(ctx context.Context, b container.BuildSpec, log io.Writer) (string, error) {
	id, err := cl.builder.Build(ctx, b, log)
	if err != nil {
		return "", err
	}
	name, err := cl.load(ctx, id, b.Tag(), log)
	if err != nil {
		return "", err
	}
	cl.mu.Lock()
	cl.tags[id] = name
	cl.mu.Unlock()
	return id, nil
}

// load gets image (its ID and tag) to the nodes: pushed under the registry's prefix, or loaded by
// the loader, or neither; name is what a pod calls it.
func (cl *Cluster) load(ctx context.Context, id, image string, log io.Writer) (name string, err error) {
	begin := time.Now()
	switch {
	case cl.registry != "":
		name = cl.registry + image
		if err := cl.builder.Push(ctx, id, name); err != nil {
			return "", err
		}
		fmt.Fprintf(log, "  %s pushed in %.1f s\n", name, time.Since(begin).Seconds())
		return name, nil
	case len(cl.loader) > 0:
		return image, cl.runLoader(ctx, image, log)
	}
	return image, nil
}

// runLoader runs the loader on image.
func (cl *Cluster) runLoader(ctx context.Context, image string, log io.Writer) error {
	cmd := exec.CommandContext(ctx, cl.loader[0], append(slices.Clone(cl.loader[1:]), image)...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	begin := time.Now()
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("loading %s into the cluster's nodes (%s): %w: %s", image, strings.Join(cmd.Args, " "), err, lastLines(out.String(), 10))
	}
	fmt.Fprintf(log, "  %s loaded into the cluster's nodes in %.1f s\n", image, time.Since(begin).Seconds())
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// next is a number no earlier object of the run was named with.
func (cl *Cluster) next() int {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	cl.seq++
	return cl.seq
}

// Start runs s as a Guaranteed pod on the target node, on as many whole CPUs as its cpuset has,
// behind a NodePort Service, and waits until it is ready and its health endpoint answers there.
func (cl *Cluster) Start(ctx context.Context, s container.Spec) (container.Instance, error) {
	cpus, err := cpuset.Parse(s.CPUSet, cpuset.MaxCPUs)
	if err != nil || len(cpus) == 0 {
		return nil, fmt.Errorf("target %s: cpuset %q: a pod needs a whole number of CPUs", s.Target, s.CPUSet)
	}
	cl.mu.Lock()
	image, ok := cl.tags[s.Image]
	cl.mu.Unlock()
	if !ok {
		image = s.Image
	}
	v := targetView(s, Layout{Namespace: cl.ns, TargetCPUs: len(cpus), Registry: ""}, image)
	v.Name = fmt.Sprintf("%s-%d", v.Name, cl.next())
	v.TargetNode = cl.Target.Name
	objs, err := objects("target", v)
	if err != nil {
		return nil, err
	}
	begin := time.Now()
	in := &instance{cl: cl, name: v.Name, target: s.Target}
	for _, o := range objs {
		if err := cl.c.Create(ctx, o); err != nil {
			in.Remove(context.WithoutCancel(ctx))
			return nil, fmt.Errorf("target %s: %w", s.Target, err)
		}
	}
	timeout := s.StartupTimeout
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	if err := in.waitReady(ctx, timeout); err != nil {
		logs := in.Logs(context.WithoutCancel(ctx), 20)
		in.Remove(context.WithoutCancel(ctx))
		if logs != "" {
			err = fmt.Errorf("%w; its last lines:\n%s", err, logs)
		}
		return nil, err
	}
	var svc struct {
		Spec struct {
			Ports []struct {
				Name     string
				NodePort int
			}
		}
	}
	if err := cl.c.Get(ctx, "Service", cl.ns, v.Name, &svc); err != nil || len(svc.Spec.Ports) == 0 {
		in.Remove(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("target %s: its service's node port: %v", s.Target, err)
	}
	for _, p := range svc.Spec.Ports {
		switch p.Name {
		case "http":
			in.url = fmt.Sprintf("http://%s:%d", in.hostIP, p.NodePort)
		case "signals":
			in.signals = signals.URL(in.hostIP, p.NodePort)
		}
	}
	if in.health, err = healthOf(ctx, in.url+s.Health, timeout-time.Since(begin)); err != nil {
		in.Remove(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("target %s is ready in its pod but not through its service at %s: %w", s.Target, in.url, err)
	}
	in.startup = time.Since(begin)
	in.imageSize, _ = cl.builder.ImageSize(ctx, s.Image)
	in.pinned(len(cpus))
	return in, nil
}

// healthOf is the body of the first 200 url answers within timeout.
func healthOf(ctx context.Context, url string, timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, max(timeout, 5*time.Second))
	defer cancel()
	var last error
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return body, nil
			}
			err = fmt.Errorf("%s answered %d", url, resp.StatusCode)
		}
		last = err
		select {
		case <-ctx.Done():
			return nil, last
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// pod is what iotbench reads of a pod.
type pod struct {
	Metadata struct{ Name string }
	Status   struct {
		Phase, HostIP, Reason, Message string
		Conditions                     []struct{ Type, Status string }
		ContainerStatuses              []struct {
			ContainerID string
			State       struct {
				Waiting    *struct{ Reason, Message string }
				Terminated *struct {
					ExitCode   int
					Reason     string
					FinishedAt time.Time
				}
			}
		}
	}
}

// ready says whether p's Ready condition is true.
func (p pod) ready() bool {
	return slices.ContainsFunc(p.Status.Conditions, func(c struct{ Type, Status string }) bool { return c.Type == "Ready" && c.Status == "True" })
}

// stuck is why p will not run without help (an image it cannot have, a container that ended,
// a spec the node refuses); empty while it may still start.
func (p pod) stuck() string {
	switch p.Status.Phase {
	case "Failed", "Succeeded":
		return fmt.Sprintf("its pod ended (%s)", strings.TrimSpace(p.Status.Phase+" "+p.Status.Reason+" "+p.Status.Message))
	}
	for _, c := range p.Status.ContainerStatuses {
		if w := c.State.Waiting; w != nil {
			switch w.Reason {
			case "ErrImageNeverPull", "ErrImagePull", "ImagePullBackOff", "InvalidImageName", "CreateContainerConfigError", "CreateContainerError", "CrashLoopBackOff":
				return fmt.Sprintf("%s: %s", w.Reason, w.Message)
			}
		}
		if t := c.State.Terminated; t != nil {
			return fmt.Sprintf("its container ended (exit code %d, %s)", t.ExitCode, t.Reason)
		}
	}
	return ""
}

// waitPod polls get until it says the pod is done, or the pod is stuck, or timeout passes.
func (cl *Cluster) waitPod(ctx context.Context, get func(context.Context) (pod, bool, error), what string, timeout time.Duration) (pod, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		p, done, err := get(ctx)
		switch {
		case err == nil && done:
			return p, nil
		case err == nil && p.stuck() != "":
			return p, fmt.Errorf("%s: %s", what, p.stuck())
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return p, fmt.Errorf("%s: %w", what, err)
			}
			return p, fmt.Errorf("%s: not ready after %s (pod phase %s)", what, timeout, or(p.Status.Phase, "unscheduled"))
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func or(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}

// Close removes what the run made: its namespace, or its objects in the namespace it was
// given, and waits (a minute at most) until they are gone.
func (cl *Cluster) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if cl.ownNamespace {
		cl.endJob(ctx)
		if err := cl.c.Delete(ctx, "Namespace", "", cl.ns); err != nil {
			return err
		}
		for {
			err := cl.c.Get(ctx, "Namespace", "", cl.ns, &struct{}{})
			if NotFound(err) {
				return nil
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("namespace %s still there after a minute: remove it with kubectl delete namespace %s", cl.ns, cl.ns)
			case <-time.After(500 * time.Millisecond):
			}
		}
	}
	return cl.deleteJob(ctx)
}

// instance is a target's pod and service.
type instance struct {
	cl                   *Cluster
	name, target, hostIP string
	// pid is a process of the target's container on this machine; 0 when its node is another.
	pid       int
	url       string
	health    []byte
	startup   time.Duration
	imageSize int64
	signals   string
}

var _ container.Observed = (*instance)(nil)
var _ container.Examined = (*instance)(nil)

func (in *instance) get(ctx context.Context) (pod, error) {
	var p pod
	err := in.cl.c.Get(ctx, "Pod", in.cl.ns, in.name, &p)
	return p, err
}

// waitReady waits until the pod is ready, and notes its node and container.
func (in *instance) waitReady(ctx context.Context, timeout time.Duration) error {
	p, err := in.cl.waitPod(ctx, func(ctx context.Context) (pod, bool, error) {
		p, err := in.get(ctx)
		return p, p.ready(), err
	}, "target "+in.target, timeout)
	if err != nil {
		return err
	}
	in.hostIP = p.Status.HostIP
	if len(p.Status.ContainerStatuses) > 0 {
		in.pid, err = containerPID(p.Status.ContainerStatuses[0].ContainerID)
	}
	return err
}

func (in *instance) URL() string            { return in.url }
func (in *instance) Health() []byte         { return in.health }
func (in *instance) Startup() time.Duration { return in.startup }
func (in *instance) ImageSize() int64       { return in.imageSize }
func (in *instance) Signals() string        { return in.signals }

func (in *instance) Logs(ctx context.Context, lines int) string {
	s, err := in.cl.c.Logs(ctx, in.cl.ns, in.name, "target", lines)
	if err != nil {
		return ""
	}
	return strings.TrimRight(s, "\n")
}

// Remove deletes the pod and its service.
func (in *instance) Remove(ctx context.Context) error {
	return errors.Join(in.cl.c.Delete(ctx, "Pod", in.cl.ns, in.name), in.cl.c.Delete(ctx, "Service", in.cl.ns, in.name))
}

// Resources reads the target's own cgroup, where its node is this machine.
func (in *instance) Resources() (resources.Source, error) {
	if in.pid == 0 {
		return nil, fmt.Errorf("its node %s is not this machine (no process of its container here): its CPU and memory are read on the node only", in.cl.Target.Name)
	}
	return resources.CgroupOf("/sys/fs/cgroup", "/proc", in.pid)
}

// pinned says where the pod runs and on which CPUs, read from a process of its container where
// its node is this machine: a pod the static CPU manager did not give CPUs of its own shares
// them with every other pod, which the log says.
func (in *instance) pinned(want int) {
	if in.pid == 0 {
		fmt.Fprintf(in.cl.log, "  pod %s on node %s; its CPUs are not visible from this machine\n", in.name, in.cl.Target.Name)
		return
	}
	list, err := allowedCPUs(in.pid)
	if err != nil {
		fmt.Fprintf(in.cl.log, "  pod %s on node %s; its CPUs: %v\n", in.name, in.cl.Target.Name, err)
		return
	}
	cpus, _ := cpuset.Parse(list, cpuset.MaxCPUs)
	if len(cpus) != want {
		fmt.Fprintf(in.cl.log, "  warning: pod %s on node %s runs on CPUs %s, not %d of its own: is the node's kubelet --cpu-manager-policy=static? (docs/scale.md)\n", in.name, in.cl.Target.Name, list, want)
		return
	}
	fmt.Fprintf(in.cl.log, "  pod %s on node %s, pinned to CPU(s) %s by the static CPU manager\n", in.name, in.cl.Target.Name, list)
}

// allowedCPUs is the CPU list process pid may run on.
func allowedCPUs(pid int) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "", err
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("no Cpus_allowed_list in /proc/%d/status", pid)
}

// Fate is what the pod's status says of its container.
func (in *instance) Fate(ctx context.Context) (container.Fate, error) {
	p, err := in.get(ctx)
	if err != nil {
		return container.Fate{}, err
	}
	f := container.Fate{Running: true, OOMKills: -1}
	for _, c := range p.Status.ContainerStatuses {
		if t := c.State.Terminated; t != nil {
			f = container.Fate{ExitCode: t.ExitCode, OOMKilled: t.Reason == "OOMKilled", OOMKills: -1, FinishedAt: t.FinishedAt}
		}
	}
	return f, nil
}

// Shards starts the generator shards of one load phase as an indexed Job of n pods on the
// generator nodes, and attaches to each: shard 0's start makes the Job (removing the previous
// phase's), shard i's attaches to the pod of completion index i.
func (cl *Cluster) Shards(n int) shard.Starter {
	return func(ctx context.Context, i int) (shard.Process, error) {
		if i == 0 {
			if err := cl.deleteJob(ctx); err != nil {
				return shard.Process{}, err
			}
			name := fmt.Sprintf("shards-%d", cl.next())
			job, err := ShardJob(name, "", Layout{Namespace: cl.ns, Generators: n, IotbenchImage: cl.shard})
			if err != nil {
				return shard.Process{}, err
			}
			if err := cl.c.Create(ctx, job); err != nil {
				return shard.Process{}, fmt.Errorf("the generator shards' job: %w", err)
			}
			cl.mu.Lock()
			cl.job = name
			cl.mu.Unlock()
		}
		cl.mu.Lock()
		job := cl.job
		cl.mu.Unlock()
		what := fmt.Sprintf("generator shard %d of job %s", i+1, job)
		sel := fmt.Sprintf("%s=%s,%s=%d", jobNameKey, job, jobIndexKey, i)
		p, err := cl.waitPod(ctx, func(ctx context.Context) (pod, bool, error) {
			var l struct{ Items []pod }
			if err := cl.c.List(ctx, "Pod", cl.ns, sel, &l); err != nil {
				return pod{}, false, err
			}
			if len(l.Items) == 0 {
				return pod{}, false, nil
			}
			p := l.Items[0]
			return p, p.Status.Phase == "Running", nil
		}, what, 2*time.Minute)
		if err != nil {
			return shard.Process{}, err
		}
		a, err := cl.c.Attach(ctx, cl.ns, p.Metadata.Name, "shard")
		if err != nil {
			return shard.Process{}, fmt.Errorf("%s: %w", what, err)
		}
		return shard.Process{In: a.In, Out: a.Out, Wait: a.Wait, Contained: true, Host: p.Status.HostIP}, nil
	}
}

// deleteJob removes the shards' Job of the last load phase, with its pods, once they ended.
func (cl *Cluster) deleteJob(ctx context.Context) error {
	job := cl.endJob(ctx)
	if job == "" {
		return nil
	}
	return cl.c.Delete(ctx, "Job", cl.ns, job)
}

// jobEndWait bounds the wait for a load phase's shard pods to end: their results are in by then,
// and their processes end on their own as the attach closes.
const jobEndWait = 10 * time.Second

// endJob forgets the Job of the last load phase and returns its name after its pods ended (or
// jobEndWait passed: an interrupted phase's shards are ended by their pods' deletion), so
// that a Job is seen complete before it is removed; a pod that failed is said on the log.
func (cl *Cluster) endJob(ctx context.Context) string {
	cl.mu.Lock()
	job := cl.job
	cl.job = ""
	cl.mu.Unlock()
	if job == "" {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, jobEndWait)
	defer cancel()
	for {
		var l struct{ Items []pod }
		if err := cl.c.List(ctx, "Pod", cl.ns, jobNameKey+"="+job, &l); err != nil {
			return job
		}
		running := false
		for _, p := range l.Items {
			switch p.Status.Phase {
			case "Succeeded":
			case "Failed":
				fmt.Fprintf(cl.log, "  warning: generator shard pod %s failed after its load phase: %s\n", p.Metadata.Name, p.stuck())
			default:
				running = true
			}
		}
		if !running {
			return job
		}
		select {
		case <-ctx.Done():
			return job
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// UseShardImage builds the shard image of bin on the local engine and loads it into the nodes.
func (cl *Cluster) UseShardImage(ctx context.Context, local *container.Docker, bin string, log io.Writer) error {
	tag, _, err := local.ShardImage(ctx, local, bin)
	if err != nil {
		return err
	}
	name, err := cl.load(ctx, tag, tag, log)
	if err != nil {
		return err
	}
	cl.shard = name
	return nil
}
