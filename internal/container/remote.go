package container

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/resources"
	"github.com/moby/moby/client"
)

// A remote engine: the targets run on another host, reached through its Docker engine's API
// (tcp://host:2376 with TLS, ssh://user@host, or a docker context naming either; engine.go
// resolves them as the docker CLI does). The engine is the distributed layer: images are built
// there, containers pinned there; a target (and its database server) binds that host's address
// (BIND_ADDRESS) instead of loopback, load goes to it, and CPU and memory come from the
// engine's stats API, since the cgroup files are on the other host.

// RootImage is the image every target's Dockerfile starts FROM (scripts/root-image.sh builds it
// where it cannot be pulled).
const RootImage = "debian:trixie"

// LocalEngine is the engine on this machine, whatever DOCKER_HOST says.
const LocalEngine = "unix:///var/run/docker.sock"

// ConnectTo reaches the engine name says: an address (unix:///path, tcp://host:port,
// ssh://[user@]host[:port]), a docker context's name, or empty for the environment's engine
// (ResolveEngine).
func ConnectTo(ctx context.Context, name string) (*Docker, error) {
	e, err := ResolveEngine(name)
	if err != nil {
		return nil, err
	}
	return connectEngine(ctx, e)
}

// connectEngine reaches e and asks it to answer.
func connectEngine(ctx context.Context, e Engine) (*Docker, error) {
	opts, err := clientOptions(e)
	if err != nil {
		return nil, err
	}
	c, err := client.New(opts...)
	if err != nil {
		return nil, fmt.Errorf("engine %s: %w", e, err)
	}
	remote, err := EngineHost(e.Host)
	if err != nil {
		c.Close()
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, 40*time.Second) // ssh's own connection timeout is 30 s
	defer cancel()
	if _, err := c.Ping(pctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		c.Close()
		if remote != "" || e.Context != "" {
			return nil, fmt.Errorf("the Docker engine at %s does not answer (%v): start it listening there, or fix the address", e, err)
		}
		return nil, fmt.Errorf("no Docker engine answers at %s (%v): run `make docker` to install and start one", e, err)
	}
	return &Docker{c: c, CABundle: DefaultCABundle, pid: os.Getpid(), remote: remote, engine: e}, nil
}

// clientOptions configure the API client for e: over ssh, a dialer that runs ssh for every
// connection; a context's TLS from its store; an address's from the environment, as the
// docker CLI does.
func clientOptions(e Engine) ([]client.Opt, error) {
	opts := []client.Opt{client.WithAPIVersionFromEnv(), client.WithAPIVersionNegotiation()}
	if strings.HasPrefix(e.Host, "ssh://") {
		s, err := parseSSHEngine(e.Host)
		if err != nil {
			return nil, err
		}
		// A transport of its own: no HTTP proxy from the environment between iotbench and ssh.
		// Its dialer is given up front: a transport without one gets HTTP/2 set up when the client
		// clones it, and with it a TLS configuration that the client would take for https, and for
		// a reason to dial hijacked connections (exec) itself.
		dial := dialCommand("ssh", s.args()...)
		hc := &http.Client{Transport: &http.Transport{DialContext: dial, MaxIdleConns: 6, IdleConnTimeout: 30 * time.Second}}
		return append(opts, client.WithHost(sshDaemonHost), client.WithHTTPClient(hc), client.WithScheme("http"),
			client.WithDialContext(dial)), nil
	}
	if e.TLS == nil {
		return append(opts, client.WithTLSClientConfigFromEnv(), client.WithHost(e.Host)), nil
	}
	cfg, err := e.TLS.tlsConfig()
	if err != nil {
		return nil, fmt.Errorf("docker context %s: %w", e.Context, err)
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg, MaxIdleConns: 6, IdleConnTimeout: 30 * time.Second}}
	return append(opts, client.WithHTTPClient(hc), client.WithHost(e.Host)), nil
}

// EngineHost is the address of the host an engine reached at daemonHost runs on, when that is
// another host; empty for a local engine (a unix socket, or tcp or ssh to loopback). For ssh it
// is the host ssh connects to (an alias of ~/.ssh/config resolved), by its address.
func EngineHost(daemonHost string) (string, error) {
	u, err := url.Parse(daemonHost)
	if err != nil {
		return "", fmt.Errorf("engine address %q: %v", daemonHost, err)
	}
	host := u.Hostname()
	switch u.Scheme {
	case "unix", "npipe":
		return "", nil
	case "tcp", "http", "https":
	case "ssh":
		s, err := parseSSHEngine(daemonHost)
		if err != nil {
			return "", err
		}
		host = s.hostname()
	default:
		return "", fmt.Errorf("engine address %q: use unix://, tcp:// or ssh://", daemonHost)
	}
	if host == "localhost" {
		return "", nil
	}
	ip := net.ParseIP(host)
	if ip == nil {
		addrs, err := net.LookupIP(host)
		if err != nil || len(addrs) == 0 {
			return "", fmt.Errorf("engine address %q: cannot resolve %s: %v", daemonHost, host, err)
		}
		ip = addrs[0]
	}
	if ip.IsLoopback() {
		return "", nil
	}
	return ip.String(), nil
}

// Remote is the address of the engine's host when it is another host; empty for a local engine.
func (d *Docker) Remote() string { return d.remote }

// Engine is where the engine is reached.
func (d *Docker) Engine() Engine { return d.engine }

// HostFacts are what the engine says of its host.
type HostFacts struct {
	CPU, Kernel, EngineVersion string
	CPUs                       int
}

// Facts asks the engine about its host: what a run on it records instead of this machine's.
func (d *Docker) Facts(ctx context.Context) (HostFacts, error) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	info, err := d.c.Info(ctx, client.InfoOptions{})
	if err != nil {
		return HostFacts{}, err
	}
	i := info.Info
	// The engine names no CPU model: its count and the OS say what it can.
	return HostFacts{
		CPU:    fmt.Sprintf("%d CPUs (%s, %s)", i.NCPU, i.OperatingSystem, i.Architecture),
		Kernel: i.KernelVersion, EngineVersion: i.ServerVersion, CPUs: i.NCPU,
	}, nil
}

// Transfer copies image (a tag or id) from the engine from to d, unless d has it already: the
// root image of the targets' Dockerfiles, which a remote engine cannot pull either.
func (d *Docker) Transfer(ctx context.Context, from *Docker, image string) error {
	if _, err := d.imageInspect(ctx, image); err == nil {
		return nil
	}
	saved, err := from.c.ImageSave(ctx, []string{image})
	if err != nil {
		return fmt.Errorf("saving %s from the local engine: %w", image, err)
	}
	defer saved.Close()
	loaded, err := d.c.ImageLoad(ctx, saved)
	if err != nil {
		return fmt.Errorf("loading %s into the engine at %s: %w", image, d.engine, err)
	}
	defer loaded.Close()
	// The engine reports a failed load in its stream, not in the status.
	var msg struct {
		Error string `json:"error"`
	}
	dec := json.NewDecoder(loaded)
	for dec.Decode(&msg) == nil {
		if msg.Error != "" {
			return fmt.Errorf("loading %s into the engine at %s: %s", image, d.engine, msg.Error)
		}
	}
	if _, err := d.imageInspect(ctx, image); err != nil {
		return fmt.Errorf("loading %s into the engine at %s: it is not there after the load: %w", image, d.engine, err)
	}
	return nil
}

// statsSource reads a container's CPU and memory through the engine's stats API: the same
// counters as its cgroup files (cpuacct usage; memory usage minus inactive file pages), from
// wherever the engine runs.
type statsSource struct {
	d  *Docker
	id string
}

var _ resources.Source = statsSource{}

func (s statsSource) Sample() (resources.Sample, error) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	res, err := s.d.c.ContainerStats(ctx, s.id, client.ContainerStatsOptions{})
	if err != nil {
		return resources.Sample{}, err
	}
	defer res.Body.Close()
	var st struct {
		Read     time.Time `json:"read"`
		CPUStats struct {
			CPUUsage struct {
				TotalUsage uint64 `json:"total_usage"`
			} `json:"cpu_usage"`
		} `json:"cpu_stats"`
		MemoryStats struct {
			Usage uint64            `json:"usage"`
			Stats map[string]uint64 `json:"stats"`
		} `json:"memory_stats"`
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(&st); err != nil {
		return resources.Sample{}, fmt.Errorf("reading container %.12s's stats: %w", s.id, err)
	}
	if st.Read.IsZero() || strings.HasPrefix(st.Read.String(), "0001") {
		return resources.Sample{}, fmt.Errorf("container %.12s has no stats: it does not run", s.id)
	}
	mem := st.MemoryStats.Usage
	inactive := st.MemoryStats.Stats["inactive_file"] // cgroup v2
	if v, ok := st.MemoryStats.Stats["total_inactive_file"]; ok {
		inactive = v // cgroup v1
	}
	if inactive < mem {
		mem -= inactive
	}
	// The engine's clock stamps the sample: rates between two samples are the remote host's.
	return resources.Sample{At: st.Read, CPU: time.Duration(st.CPUStats.CPUUsage.TotalUsage), Memory: mem}, nil
}
