package container

import (
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
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
	os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM debian:trixie\nCOPY healthsrv /healthsrv\nCMD [\"/healthsrv\"]\n"), 0o644)
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
