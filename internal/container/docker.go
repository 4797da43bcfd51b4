// Package container builds target images and runs target containers: pinned to a cpuset, limited in
// memory, on the host network at their own loopback port, hardened (no capabilities, no new
// privileges, a pids limit, a read-only root with a tmpfs /tmp), labelled with their run and
// iotbench's process, and always removed afterwards (by the run, or by the next one when the run's
// process died).
package container

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/protocol"
	"github.com/iotbench/iotbench/internal/resources"
	"github.com/iotbench/iotbench/internal/safetext"
	"github.com/iotbench/iotbench/internal/signals"
	"github.com/iotbench/iotbench/internal/tlscert"
	"github.com/moby/moby/api/pkg/stdcopy"
	ctypes "github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// Label marks every container iotbench creates.
const Label = "iotbench"

// Labels that say whose a container is: a later run removes it only when its process is gone.
const (
	LabelTarget = Label + ".target"
	LabelRun    = Label + ".run"  // the run's id
	LabelPID    = Label + ".pid"  // iotbench's process id…
	LabelHost   = Label + ".host" // …on this host (its hostname)
)

// PidsLimit bounds the processes and threads of a target (pids.max counts threads). The most any
// target ran here is 274 (javalin-platform under 400 concurrent slow requests: Jetty's 250 platform
// threads and the JVM's own; spring-mvc-platform 226, the others under 45). Pools that grow with
// the cpuset reach about 900 at 64 CPUs (Reactor's boundedElastic is 10 threads a CPU, Netty's
// event loops and the virtual-thread scheduler one a CPU, node-cluster about ten threads a worker
// process). 2048 holds both with a margin and stops a fork or thread bomb long before the host's
// pid space (32768 by default) is gone; a cpuset beyond about 128 CPUs would need more.
const PidsLimit = 2048

// Deadlines of Docker calls: an engine that hangs must not hang iotbench. A build downloads
// dependencies and compiles, so it gets long, but not forever. Variables for the tests only.
var (
	callTimeout  = 30 * time.Second
	buildTimeout = 30 * time.Minute
)

// BuildSpec is one image to build.
type BuildSpec struct {
	Context    string // folder
	Dockerfile string // inside Context
	Args       map[string]string
	// Suffix ends the tag, so that images of the same folders from another checkout (a paired
	// run's baseline) are kept apart from these.
	Suffix string
}

// Tag is the image name for a build: iotbench/<folder>, or iotbench/<folder>-<subfolder> when the
// Dockerfile sits in a subfolder of a shared context (targets/js with express/Dockerfile), with a
// suffix when build args are set so that e.g. a JDK 21 build does not replace the JDK 25 one.
func (b BuildSpec) Tag() string {
	tag := "iotbench/" + filepath.Base(b.Context)
	if dir := filepath.Dir(b.Dockerfile); dir != "." {
		tag += "-" + strings.ReplaceAll(filepath.ToSlash(dir), "/", "-")
	}
	if len(b.Args) == 0 {
		if b.Suffix != "" {
			return tag + ":" + sanitizeTag(b.Suffix)
		}
		return tag + ":latest"
	}
	keys := make([]string, 0, len(b.Args))
	for k := range b.Args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, strings.ToLower(k)+"-"+b.Args[k])
	}
	if b.Suffix != "" {
		parts = append(parts, b.Suffix)
	}
	return tag + ":" + sanitizeTag(strings.Join(parts, "_"))
}

func sanitizeTag(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' {
			return r
		}
		return '-'
	}, s)
}

// Spec is one container to start.
type Spec struct {
	Target         string
	Image          string
	Port           int
	Env            map[string]string
	Command        []string // empty: the image's CMD
	Health         string
	StartupTimeout time.Duration
	CPUSet         string
	Memory         int64
	// Service is the base URL of a service iotbench did not start (Running); empty for a
	// container.
	Service string
	// Protocol is what the target serves on Port (protocol.HTTP1 when empty), told by env
	// protocol.Env; TLSDir holds the run's certificates (tlscert.New), mounted read-only
	// at tlscert.MountDir when set. A TLS protocol needs TLSDir.
	Protocol protocol.Protocol
	TLSDir   string
	// SignalsPort is where the target serves its runtime's signals (docs/contract.md, "Signals"),
	// told by env SIGNALS_PORT; 0: none asked for.
	SignalsPort int
	// Tmp, when set, is a folder of this machine mounted at TmpfsPath instead of a tmpfs: what
	// the target writes there outlives its processes (its runtime's symbol maps, for a profile).
	Tmp string
}

// Environment is every variable the target is started with: its own (Env), and what
// docs/contract.md tells it: its port and bind address, its signals port and protocol when set.
func (s Spec) Environment(bindAddress string) map[string]string {
	env := maps.Clone(s.Env)
	if env == nil {
		env = map[string]string{}
	}
	env["PORT"], env["BIND_ADDRESS"] = strconv.Itoa(s.Port), bindAddress
	if s.SignalsPort != 0 {
		env[signals.Env] = strconv.Itoa(s.SignalsPort)
	}
	if s.Protocol.Or() != protocol.HTTP1 {
		env[protocol.Env] = string(s.Protocol)
	}
	return env
}

// Instance is a started target.
type Instance interface {
	// URL is the target's base URL on loopback.
	URL() string
	// Health is the body the health endpoint answered.
	Health() []byte
	// Logs returns the container's last lines of output.
	Logs(ctx context.Context, lines int) string
	// Remove stops and deletes the container.
	Remove(ctx context.Context) error
}

// Observed is an Instance in a container whose resources iotbench can read.
type Observed interface {
	Instance
	// Resources reads the container's own cgroup counters.
	Resources() (resources.Source, error)
	// Startup is the time from the container's start to the first 200 of its health endpoint.
	Startup() time.Duration
	// ImageSize is the size of the container's image, in bytes.
	ImageSize() int64
	// Signals is the URL of the target's runtime signals (docs/contract.md, "Signals"); empty
	// when it was given no signals port.
	Signals() string
}

// Fate is what became of a started container.
type Fate struct {
	Running  bool
	ExitCode int
	// OOMKilled is the engine's word that the container ended because the kernel killed it at
	// its memory limit.
	OOMKilled bool
	// OOMKills counts processes of the container the kernel killed at its memory limit (the
	// cgroup's oom_kill), including those of a container that still runs; -1 when unknown.
	OOMKills   int64
	FinishedAt time.Time
	// EngineRestarted: the container was stopped by its Docker engine going down (a restart of
	// the engine, not of the target); its exit code is then the target's answer to being stopped.
	EngineRestarted bool
}

// Examined is an Instance whose container can be asked what became of it.
type Examined interface {
	Instance
	Fate(ctx context.Context) (Fate, error)
}

// Lifecycle builds images and starts targets.
type Lifecycle interface {
	Build(ctx context.Context, b BuildSpec, log io.Writer) (imageID string, err error)
	Start(ctx context.Context, s Spec) (Instance, error)
}

var _ Lifecycle = (*Docker)(nil)

// Docker is the Lifecycle on a Docker engine.
type Docker struct {
	c *client.Client
	// CABundle is the PEM bundle put into every build context (see CACertsDir); empty for none.
	CABundle string
	// RunID labels every container started (LabelRun), so that a leftover names its run.
	RunID string
	// pid is the process the containers' LabelPID names: this one, except in tests.
	pid int
	// remote is the address of the engine's host when it is another host (remote.go).
	remote string
	// engine is where the engine is reached, for messages.
	engine Engine
}

// Connect reaches the Docker engine the environment points at (DOCKER_HOST, or the local socket).
func Connect(ctx context.Context) (*Docker, error) { return ConnectTo(ctx, "") }

// Close releases the client.
func (d *Docker) Close() error {
	shardEngines.remove(d)
	return d.c.Close()
}

// Version is the engine's version, e.g. "20.10.24".
func (d *Docker) Version(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	v, err := d.c.ServerVersion(ctx, client.ServerVersionOptions{})
	if err != nil {
		return "unknown"
	}
	return v.Version
}

// Build builds b with the classic builder (Debian's docker.io has no BuildKit), on the host
// network so that package managers reach their registries. The build log goes to log; on failure
// its last lines are in the error.
func (d *Docker) Build(ctx context.Context, b BuildSpec, log io.Writer) (string, error) {
	tarball, err := buildContext(b.Context, d.CABundle)
	if err != nil {
		return "", err
	}
	args := map[string]*string{}
	for k, v := range b.Args {
		args[k] = &v
	}
	tag := b.Tag()
	ctx, cancel := context.WithTimeout(ctx, buildTimeout)
	defer cancel()
	res, err := d.c.ImageBuild(ctx, tarball, client.ImageBuildOptions{
		Tags:        []string{tag},
		Dockerfile:  b.Dockerfile,
		BuildArgs:   args,
		NetworkMode: "host",
		Remove:      true,
		ForceRemove: true,
	})
	if err != nil {
		return "", fmt.Errorf("building %s: %w", tag, err)
	}
	defer res.Body.Close()
	tail := &lastLines{n: 30}
	out := io.MultiWriter(log, tail)
	dec := json.NewDecoder(res.Body)
	for {
		var msg struct {
			Stream string `json:"stream"`
			Error  string `json:"error"`
		}
		if err := dec.Decode(&msg); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			if ctx.Err() == context.DeadlineExceeded {
				return "", fmt.Errorf("building %s: not done after %s (is the engine hung? `docker ps` tells): %w\nlast lines of the build:\n%s", tag, buildTimeout, err, tail)
			}
			return "", fmt.Errorf("building %s: reading the build output: %w", tag, err)
		}
		io.WriteString(out, msg.Stream)
		if msg.Error != "" {
			return "", fmt.Errorf("building %s from %s failed: %s\nlast lines of the build:\n%s", tag, b.Context, safetext.Terminal(msg.Error), tail)
		}
	}
	img, err := d.c.ImageInspect(ctx, tag)
	if err != nil {
		return "", fmt.Errorf("building %s: %w", tag, err)
	}
	return img.ID, nil
}

// Start runs s's image and waits until its health endpoint answers 200. On failure the container
// is removed and the error carries its last log lines.
func (d *Docker) Start(ctx context.Context, s Spec) (Instance, error) {
	if err := portFree(d.bindAddress(), s.Port); err != nil {
		return nil, fmt.Errorf("target %s: %w", s.Target, err)
	}
	hc, err := d.protocolClient(s)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", s.Target, err)
	}
	if s.SignalsPort != 0 {
		if err := portFree(d.bindAddress(), s.SignalsPort); err != nil {
			return nil, fmt.Errorf("target %s: its signals: %w", s.Target, err)
		}
	}
	var env []string
	for k, v := range s.Environment(d.bindAddress()) {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	created, err := d.c.ContainerCreate(cctx, client.ContainerCreateOptions{
		Name: fmt.Sprintf("iotbench-%s-%d-%d", s.Target, d.pid, time.Now().UnixNano()%1e6),
		Config: &ctypes.Config{
			Image:  s.Image,
			Env:    env,
			Cmd:    s.Command,
			Labels: d.labels(s.Target),
		},
		HostConfig: d.hostConfig(s),
	})
	if err != nil {
		return nil, fmt.Errorf("creating the %s container: %w", s.Target, err)
	}
	inst := &dockerInstance{d: d, id: created.ID, url: s.Protocol.Scheme() + "://" + net.JoinHostPort(d.bindAddress(), strconv.Itoa(s.Port)), hc: hc}
	if s.SignalsPort != 0 {
		inst.signals = signals.URL(d.bindAddress(), s.SignalsPort)
	}
	begin := time.Now()
	if _, err := d.c.ContainerStart(cctx, created.ID, client.ContainerStartOptions{}); err != nil {
		inst.Remove(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("starting the %s container: %w", s.Target, err)
	}
	if err := inst.waitHealthy(ctx, s); err != nil {
		logs := inst.Logs(context.WithoutCancel(ctx), 30)
		inst.Remove(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("target %s: %w\nlast lines of its log:\n%s", s.Target, err, logs)
	}
	inst.startup = time.Since(begin)
	// Found while the container runs: once it has died, its cgroup is gone.
	inst.hostOOMKills = -1
	if cg, err := inst.cgroup(ctx); err == nil {
		inst.cg = cg
		if n, err := resources.HostOOMKills(resources.ProcVMStat); err == nil {
			inst.hostOOMKills = n
		}
	}
	if img, err := d.imageInspect(ctx, s.Image); err == nil {
		inst.imageSize = img.Size
	}
	inst.watch = d.watchEngine(created.ID)
	return inst, nil
}

// ImageSize is the size of image (an ID or a tag) on this engine, in bytes.
func (d *Docker) ImageSize(ctx context.Context, image string) (int64, error) {
	img, err := d.imageInspect(ctx, image)
	return img.Size, err
}

// imageInspect is ImageInspect within callTimeout.
func (d *Docker) imageInspect(ctx context.Context, image string) (client.ImageInspectResult, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	return d.c.ImageInspect(ctx, image)
}

// labels say whose the container is (see Leftovers).
func (d *Docker) labels(target string) map[string]string {
	host, _ := os.Hostname()
	return map[string]string{Label: "1", LabelTarget: target, LabelRun: d.RunID, LabelPID: strconv.Itoa(d.pid), LabelHost: host}
}

// hostConfig pins and limits the target, and hardens it: a target is code iotbench runs on the
// host's network (docs/security.md), so it gets nothing it does not need to serve HTTP on a
// loopback port above 1024 as its non-root user.
func (d *Docker) hostConfig(s Spec) *ctypes.HostConfig {
	pids := int64(PidsLimit)
	tmp := "rw,nosuid,nodev,noexec,mode=1777"
	if s.Memory > 0 {
		// Its pages count against the memory limit anyway; the size says so.
		tmp += ",size=" + strconv.FormatInt(s.Memory, 10)
	}
	tmpfs := map[string]string{TmpfsPath: tmp}
	binds := tlsBinds(s)
	if s.Tmp != "" {
		tmpfs, binds = nil, append(binds, s.Tmp+":"+TmpfsPath)
	}
	return &ctypes.HostConfig{
		NetworkMode: "host",
		Resources: ctypes.Resources{
			CpusetCpus: s.CPUSet,
			Memory:     s.Memory,
			MemorySwap: s.Memory, // no swap: a target out of memory fails instead of slowing down
			PidsLimit:  &pids,
		},
		CapDrop:        []string{"ALL"},
		SecurityOpt:    []string{"no-new-privileges"},
		ReadonlyRootfs: true,
		// Where the runtimes write: the JVM's hsperfdata and temp files (Tomcat's work folder,
		// /enterprise's file), Node's and Bun's os.tmpdir(), node-cluster's shared SQLite file.
		// noexec: Netty's native transport is loaded from the image, not extracted here
		// (targets/jvm/README.md).
		Tmpfs: tmpfs,
		Binds: binds,
	}
}

// tlsBinds mounts the run's certificates where every target looks for them, read-only.
func tlsBinds(s Spec) []string {
	if s.TLSDir == "" {
		return nil
	}
	return []string{s.TLSDir + ":" + tlscert.MountDir + ":ro"}
}

// protocolClient is the health client of a target serving s.Protocol. The certificates are a
// folder on this machine: an engine on another host cannot mount them.
func (d *Docker) protocolClient(s Spec) (*http.Client, error) {
	hc := healthClient()
	p := s.Protocol.Or()
	if p == protocol.HTTP1 {
		return hc, nil
	}
	var set *tlscert.Set
	if p.TLS() {
		if s.TLSDir == "" {
			return nil, fmt.Errorf("protocol %s needs the run's certificates, and none were made", p)
		}
		if d.remote != "" {
			return nil, fmt.Errorf("protocol %s: the run's certificates are on this machine, and the engine on %s cannot mount them; run it on the local engine", p, d.remote)
		}
		var err error
		if set, err = tlscert.Load(s.TLSDir); err != nil {
			return nil, err
		}
	}
	t, err := tlscert.Transport(p, set)
	if err != nil {
		return nil, err
	}
	hc.Transport = t
	return hc, nil
}

// TmpfsPath is the one writable folder of a target: the rest of its filesystem is read-only.
const TmpfsPath = "/tmp"

// bindAddress is where targets listen: loopback, or the remote engine's host.
func (d *Docker) bindAddress() string {
	if d.remote != "" {
		return d.remote
	}
	return "127.0.0.1"
}

// portFree fails when something already listens on the target's port: load would reach it
// instead of the target. On another host, something answering there is what shows it.
func portFree(host string, port int) error {
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	taken := fmt.Errorf("port %d on %s is already in use: stop what listens there or give the target another port in scenarios.yaml", port, host)
	if host != "127.0.0.1" {
		if c, err := net.DialTimeout("tcp", addr, 2*time.Second); err == nil {
			c.Close()
			return taken
		}
		return nil
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return taken
	}
	return l.Close()
}

type dockerInstance struct {
	d         *Docker
	id        string
	url       string
	health    []byte
	startup   time.Duration
	imageSize int64
	cg        *resources.Cgroup // nil when it could not be found
	// hostOOMKills is the host's count of OOM kills when the target was healthy; -1 when unknown
	// (an engine on another machine, or no cgroup found).
	hostOOMKills int64
	hc           *http.Client // asks for the health endpoint in the target's protocol
	watch        *engineWatch // nil until the target is healthy
	signals      string       // its signals endpoint; empty: none asked for
}

var (
	_ Observed = (*dockerInstance)(nil)
	_ Examined = (*dockerInstance)(nil)
)

func (i *dockerInstance) URL() string            { return i.url }
func (i *dockerInstance) Health() []byte         { return i.health }
func (i *dockerInstance) Startup() time.Duration { return i.startup }
func (i *dockerInstance) ImageSize() int64       { return i.imageSize }
func (i *dockerInstance) Signals() string        { return i.signals }

// Resources finds the container's cgroup through its init process; it needs the engine on this
// machine (DOCKER_HOST on loopback or the local socket), as every target does.
func (i *dockerInstance) Resources() (resources.Source, error) {
	if i.d.remote != "" {
		return statsSource{i.d, i.id}, nil
	}
	return i.cgroup(context.Background())
}

func (i *dockerInstance) cgroup(ctx context.Context) (*resources.Cgroup, error) {
	if i.d.remote != "" {
		return nil, fmt.Errorf("container %.12s runs on %s: its cgroup is there", i.id, i.d.remote)
	}
	ins, err := i.inspect(ctx)
	if err != nil {
		return nil, err
	}
	if ins.Container.State == nil || ins.Container.State.Pid == 0 {
		return nil, fmt.Errorf("container %.12s has no running process", i.id)
	}
	return resources.CgroupOf(resources.CgroupRoot, "/proc", ins.Container.State.Pid)
}

// Fate asks the engine whether the container still runs and how it ended, and its cgroup how
// many of its processes were killed for memory.
func (i *dockerInstance) Fate(ctx context.Context) (Fate, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	ins, err := i.d.c.ContainerInspect(ctx, i.id, client.ContainerInspectOptions{})
	if err != nil {
		return Fate{}, err
	}
	f := Fate{OOMKills: -1}
	if st := ins.Container.State; st != nil {
		f.Running, f.ExitCode, f.OOMKilled = st.Running, st.ExitCode, st.OOMKilled
		if t, err := time.Parse(time.RFC3339Nano, st.FinishedAt); err == nil && !st.Running {
			f.FinishedAt = t
		}
		// Asked after the stream broke: a container stopped then was stopped with its engine.
		f.EngineRestarted = !st.Running && i.watch.engineLost()
	}
	if i.cg != nil {
		if n, err := i.cg.OOMKills(); err == nil {
			f.OOMKills = n
		}
	}
	f.OOMKilled = f.OOMKilled || i.hostKilled(f)
	return f, nil
}

// hostKilled says whether a container that died of SIGKILL (exit code 137) was killed by the
// kernel for memory, when neither the engine nor the cgroup can say. containerd publishes the
// kernel's OOM event apart from the exit, and an engine that takes the exit first records no
// OOMKilled (CI saw exit 137 and false at a 64 MiB limit); the cgroup and its count are gone
// with the container. The host's count outlives both: it rose since the target was healthy.
func (i *dockerInstance) hostKilled(f Fate) bool {
	if f.Running || f.ExitCode != 137 || f.OOMKills >= 0 || i.hostOOMKills < 0 {
		return false
	}
	n, err := resources.HostOOMKills(resources.ProcVMStat)
	return err == nil && n > i.hostOOMKills
}

func (i *dockerInstance) waitHealthy(ctx context.Context, s Spec) error {
	deadline := time.Now().Add(s.StartupTimeout)
	hc := i.hc
	for {
		if body, ok := get(ctx, hc, i.url+s.Health); ok {
			i.health = body
			return nil
		}
		ins, err := i.inspect(ctx)
		if err != nil {
			return err
		}
		if st := ins.Container.State; st != nil && !st.Running {
			return fmt.Errorf("the container exited (code %d) before %s answered", st.ExitCode, s.Health)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not answer 200 within %s (raise startup_timeout in scenarios.yaml if the target is just slow)", s.Health, s.StartupTimeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// healthClient asks for the health endpoint. It takes a redirect as the answer: a health check that
// redirects to a page answering 200 has not answered 200 itself.
func healthClient() *http.Client {
	return &http.Client{
		Timeout:       2 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// inspect is ContainerInspect within callTimeout.
func (i *dockerInstance) inspect(ctx context.Context) (client.ContainerInspectResult, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	return i.d.c.ContainerInspect(ctx, i.id, client.ContainerInspectOptions{})
}

func get(ctx context.Context, hc *http.Client, url string) ([]byte, bool) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	res, err := hc.Do(req)
	if err != nil {
		return nil, false
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	return body, err == nil && res.StatusCode == http.StatusOK
}

func (i *dockerInstance) Logs(ctx context.Context, lines int) string {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	rc, err := i.d.c.ContainerLogs(ctx, i.id, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true, Tail: strconv.Itoa(lines)})
	if err != nil {
		return fmt.Sprintf("(logs unavailable: %v)", err)
	}
	defer rc.Close()
	var out bytes.Buffer
	if _, err := stdcopy.StdCopy(&out, &out, rc); err != nil {
		return fmt.Sprintf("(logs unavailable: %v)", err)
	}
	// Quoted in errors, log lines and kept log files: what the target printed is shown, its
	// control codes are not obeyed.
	return safetext.TerminalLines(strings.TrimRight(out.String(), "\n"))
}

func (i *dockerInstance) Remove(ctx context.Context) error {
	i.watch.close()
	return i.d.removeContainer(ctx, i.id)
}

// lastLines keeps the last n lines written to it.
type lastLines struct {
	n     int
	lines []string
	part  string
}

func (l *lastLines) Write(p []byte) (int, error) {
	text := l.part + string(p)
	parts := strings.Split(text, "\n")
	l.part = parts[len(parts)-1]
	l.lines = append(l.lines, parts[:len(parts)-1]...)
	if len(l.lines) > l.n {
		l.lines = l.lines[len(l.lines)-l.n:]
	}
	return len(p), nil
}

// String is the lines kept, without their control codes: they are quoted in errors.
func (l *lastLines) String() string {
	return safetext.TerminalLines(strings.Join(append(l.lines, l.part), "\n"))
}
