package container

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"
)

// connect returns the engine, or skips when none answers, unless IOTBENCH_REQUIRE_DOCKER is set
// (make test sets it: there, a missing engine is a failure).
func connect(t *testing.T) *Docker {
	t.Helper()
	d, err := Connect(context.Background())
	if err != nil {
		if os.Getenv("IOTBENCH_REQUIRE_DOCKER") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// healthImage builds a tiny image around testdata/healthsrv.
func healthImage(t *testing.T, d *Docker) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "healthsrv")
	os.MkdirAll(dir, 0o755)
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "healthsrv"), "./testdata/healthsrv")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM debian:trixie\nCOPY healthsrv /healthsrv\nUSER 10001\nCMD [\"/healthsrv\"]\n"), 0o644)
	id, err := d.Build(context.Background(), BuildSpec{Context: dir, Dockerfile: "Dockerfile"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// ours lists the containers iotbench created for target name.
func ours(t *testing.T, d *Docker, name string) []string {
	t.Helper()
	res, err := d.c.ContainerList(context.Background(), client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", Label+".target="+name)})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range res.Items {
		ids = append(ids, c.ID)
	}
	return ids
}

func TestStartPinsLimitsAndRemoves(t *testing.T) {
	d := connect(t)
	img := healthImage(t, d)
	spec := Spec{Target: "lifecycle-ok", Image: img, Port: freePort(t), Health: "/health",
		StartupTimeout: 30 * time.Second, CPUSet: "0", Memory: 64 << 20}
	inst, err := d.Start(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(inst.Health()), `"availableProcessors":1`) {
		t.Errorf("health %s: the container does not see exactly one CPU", inst.Health())
	}
	ids := ours(t, d, spec.Target)
	if len(ids) != 1 {
		t.Fatalf("%d containers for the target, want 1", len(ids))
	}
	ins, err := d.c.ContainerInspect(context.Background(), ids[0], client.ContainerInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hc := ins.Container.HostConfig
	if hc.CpusetCpus != "0" || hc.Memory != 64<<20 || string(hc.NetworkMode) != "host" || hc.Privileged {
		t.Errorf("host config cpuset=%q memory=%d network=%q privileged=%v", hc.CpusetCpus, hc.Memory, hc.NetworkMode, hc.Privileged)
	}
	// Stopped while its engine runs on: the engine's event stream holds, so no restart is named.
	if _, err := d.c.ContainerStop(context.Background(), ids[0], client.ContainerStopOptions{}); err != nil {
		t.Fatal(err)
	}
	if f, err := inst.(Examined).Fate(context.Background()); err != nil || f.Running || f.EngineRestarted {
		t.Errorf("fate of a stopped container %+v, %v; want stopped, not by its engine", f, err)
	}
	if err := inst.Remove(context.Background()); err != nil {
		t.Fatal(err)
	}
	if left := ours(t, d, spec.Target); len(left) != 0 {
		t.Errorf("containers left after Remove: %v", left)
	}
}

func TestFailedStartShowsLogsAndLeavesNothing(t *testing.T) {
	d := connect(t)
	img := healthImage(t, d)
	spec := Spec{Target: "lifecycle-fail", Image: img, Port: freePort(t), Health: "/health",
		StartupTimeout: 30 * time.Second, Env: map[string]string{"FAIL": "no database"}, Memory: 64 << 20}
	_, err := d.Start(context.Background(), spec)
	if err == nil {
		t.Fatal("a container that exits at once was started")
	}
	for _, want := range []string{"exited (code 3)", "boom: no database"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if left := ours(t, d, spec.Target); len(left) != 0 {
		t.Errorf("containers left after a failed start: %v", left)
	}
}

func TestStartRefusesABusyPort(t *testing.T) {
	d := connect(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, err = d.Start(context.Background(), Spec{Target: "busy", Image: "unused", Port: l.Addr().(*net.TCPAddr).Port})
	if err == nil || !strings.Contains(err.Error(), "already in use") {
		t.Errorf("err = %v, want the busy port named", err)
	}
}

// TestStartHardens checks the hardening twice: as the engine records it, and as the process inside
// the container finds it.
func TestStartHardens(t *testing.T) {
	d := connect(t)
	img := healthImage(t, d)
	d.RunID = "test-hardens"
	spec := Spec{Target: "hardened", Image: img, Port: freePort(t), Health: "/health",
		StartupTimeout: 30 * time.Second, Memory: 64 << 20}
	inst, err := d.Start(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Remove(context.Background())
	ids := ours(t, d, spec.Target)
	if len(ids) != 1 {
		t.Fatalf("%d containers for the target, want 1", len(ids))
	}
	ins, err := d.c.ContainerInspect(context.Background(), ids[0], client.ContainerInspectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hc := ins.Container.HostConfig
	host, _ := os.Hostname()
	engine := []struct {
		what      string
		got, want any
	}{
		{"CapDrop", strings.Join(hc.CapDrop, ","), "ALL"},
		{"CapAdd", len(hc.CapAdd), 0},
		{"SecurityOpt", strings.Join(hc.SecurityOpt, ","), "no-new-privileges"},
		{"PidsLimit", deref(hc.PidsLimit), int64(PidsLimit)},
		{"ReadonlyRootfs", hc.ReadonlyRootfs, true},
		{"Tmpfs /tmp", hc.Tmpfs["/tmp"], "rw,nosuid,nodev,noexec,mode=1777,size=67108864"},
		{"Tmpfs count", len(hc.Tmpfs), 1},
		{"Privileged", hc.Privileged, false},
		{"label " + LabelRun, ins.Container.Config.Labels[LabelRun], "test-hardens"},
		{"label " + LabelPID, ins.Container.Config.Labels[LabelPID], strconv.Itoa(os.Getpid())},
		{"label " + LabelHost, ins.Container.Config.Labels[LabelHost], host},
		{"label " + LabelTarget, ins.Container.Config.Labels[LabelTarget], "hardened"},
	}
	for _, c := range engine {
		if c.got != c.want {
			t.Errorf("engine: %s = %v, want %v", c.what, c.got, c.want)
		}
	}

	res, err := http.Get(inst.URL() + "/confined")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var inside struct {
		UID                       int
		CapBnd, CapEff            string
		NoNewPrivs, PidsMax       string
		RootWritable, TmpWritable bool
	}
	if err := json.NewDecoder(res.Body).Decode(&inside); err != nil {
		t.Fatal(err)
	}
	seen := []struct {
		what      string
		got, want any
	}{
		{"uid", inside.UID, 10001},
		{"CapBnd", inside.CapBnd, "0000000000000000"},
		{"CapEff", inside.CapEff, "0000000000000000"},
		{"NoNewPrivs", inside.NoNewPrivs, "1"},
		{"pids.max", inside.PidsMax, strconv.Itoa(PidsLimit)},
		{"/ writable", inside.RootWritable, false},
		{"/tmp writable", inside.TmpWritable, true},
	}
	for _, c := range seen {
		if c.got != c.want {
			t.Errorf("inside: %s = %v, want %v", c.what, c.got, c.want)
		}
	}
}

func deref(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}

// TestHealthIgnoresRedirects: a health endpoint that redirects to a page answering 200 has not
// answered 200 itself.
func TestHealthIgnoresRedirects(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "UP") })
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/ok", http.StatusFound) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for _, c := range []struct {
		path string
		want bool
	}{{"/ok", true}, {"/moved", false}} {
		if _, got := get(context.Background(), healthClient(), srv.URL+c.path); got != c.want {
			t.Errorf("%s: healthy = %v, want %v", c.path, got, c.want)
		}
	}
}

// An engine may record no OOMKilled for a container the kernel killed for memory, and the
// container's cgroup is gone with it: the host's count of OOM kills must tell it instead, and
// must not call a target that exits by itself with SIGKILL's code OOM-killed.
func TestAnOOMKillIsToldWithoutTheEnginesWord(t *testing.T) {
	d := connect(t)
	img := healthImage(t, d)
	for _, c := range []struct {
		name, path string
		oom        bool
	}{
		{"grows past its limit", "/grow?mb=128", true},
		{"exits with code 137 by itself", "/exit?code=137", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			inst, err := d.Start(context.Background(), Spec{Target: "oom", Image: img, Port: freePort(t), Health: "/health",
				StartupTimeout: 30 * time.Second, Memory: 64 << 20})
			if err != nil {
				t.Fatal(err)
			}
			defer inst.Remove(context.Background())
			di := inst.(*dockerInstance)
			if di.hostOOMKills < 0 {
				t.Fatal("the host's count of OOM kills was not read at the start")
			}
			if resp, err := http.Get(inst.URL() + c.path); err == nil {
				resp.Body.Close()
			}
			var f Fate
			for deadline := time.Now().Add(20 * time.Second); ; {
				if f, err = di.Fate(context.Background()); err != nil {
					t.Fatal(err)
				}
				if !f.Running || time.Now().After(deadline) {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			t.Logf("%s: %+v", c.path, f)
			if f.Running || f.ExitCode != 137 {
				t.Fatalf("running %v, exit code %d: want ended with 137", f.Running, f.ExitCode)
			}
			if f.OOMKilled != c.oom {
				t.Errorf("OOMKilled %v, want %v", f.OOMKilled, c.oom)
			}
			// As when the engine took the exit before the OOM event and the cgroup was gone.
			if got := di.hostKilled(Fate{ExitCode: f.ExitCode, OOMKills: -1}); got != c.oom {
				t.Errorf("from the host's count alone: OOM-killed %v, want %v", got, c.oom)
			}
		})
	}
}

// TestAProfiledContainerNamesItsProcessesAndKeepsItsTmp: the host PID and the PID inside the
// container of its one process (what perf samples, and what a runtime names its map by), its /tmp
// a folder of this machine (where a runtime's map outlives it), and a graceful stop.
func TestAProfiledContainerNamesItsProcessesAndKeepsItsTmp(t *testing.T) {
	d := connect(t)
	img := healthImage(t, d)
	tmp := t.TempDir()
	os.Chmod(tmp, 0o1777)
	os.WriteFile(filepath.Join(tmp, "perf-1.map"), []byte("7f00 10 fn\n"), 0o644)
	spec := Spec{Target: "profiled", Image: img, Port: freePort(t), Health: "/health", StartupTimeout: 30 * time.Second, CPUSet: "0", Memory: 64 << 20, Tmp: tmp}
	inst, err := d.Start(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Remove(context.Background())
	p := inst.(Profiled)
	ps, err := p.Processes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 1 || ps[0].PID != 1 || ps[0].HostPID <= 1 {
		t.Fatalf("processes %+v, want one: PID 1 inside, another on the host", ps)
	}
	if cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", ps[0].HostPID)); err != nil || !strings.Contains(string(cmd), "healthsrv") {
		t.Errorf("host PID %d runs %q (%v), want the container's healthsrv", ps[0].HostPID, cmd, err)
	}
	if got, err := os.ReadFile(fmt.Sprintf("/proc/%d/root/tmp/perf-1.map", ps[0].HostPID)); err != nil || string(got) != "7f00 10 fn\n" {
		t.Errorf("the container's /tmp/perf-1.map reads %q, %v: its /tmp is not the folder given", got, err)
	}
	if err := p.Stop(context.Background(), 5); err != nil {
		t.Fatal(err)
	}
	if f, err := inst.(Examined).Fate(context.Background()); err != nil || f.Running {
		t.Fatalf("fate after Stop %+v, %v; want stopped", f, err)
	}
}
