package container

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	ctypes "github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// deadPID is the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// livePID is the pid of a process that runs until the test ends.
func livePID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd.Process.Pid
}

func TestOwner(t *testing.T) {
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	alive := func(pid int, since time.Time) bool { return pid == 7 && since.Equal(created) }
	cases := []struct {
		name string
		f    Found
		want Owner
	}{
		{"live process", Found{PID: 7, Host: "here", Created: created}, OwnerAlive},
		{"dead process", Found{PID: 8, Host: "here", Created: created}, OwnerGone},
		{"another host's process", Found{PID: 8, Host: "there", Created: created}, OwnerElsewhere},
		{"no pid label", Found{Host: "here", Created: created}, OwnerUnknown},
		{"no labels at all", Found{Created: created}, OwnerUnknown},
	}
	for _, c := range cases {
		if got := owner(c.f, "here", alive); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestProcessAlive(t *testing.T) {
	self, err := processStart(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(self); d < 0 || d > time.Hour {
		t.Fatalf("this test process started %s ago, by /proc", d)
	}
	cases := []struct {
		name  string
		pid   int
		since time.Time
		want  bool
	}{
		{"this process, container created now", os.Getpid(), time.Now(), true},
		{"a process gone", deadPID(t), time.Now(), false},
		{"a process started after the container (a reused pid)", os.Getpid(), self.Add(-time.Hour), false},
	}
	for _, c := range cases {
		if got := processAlive(c.pid, c.since); got != c.want {
			t.Errorf("%s: alive = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestDescribe(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		f    Found
		want string
	}{
		{Found{Name: "iotbench-fastify-41-7", Target: "fastify", RunID: "r1", PID: 41, Created: now.Add(-(2*time.Hour + 13*time.Minute + 20*time.Second)), State: "running", Owner: OwnerGone},
			"iotbench-fastify-41-7 (target fastify, run r1, 2h13m old, running; its iotbench process is gone (pid 41))"},
		{Found{Name: "old", Target: "koa", Created: now.Add(-3*24*time.Hour - 5*time.Hour), State: "exited", Owner: OwnerUnknown},
			"old (target koa, run unknown, 3d5h old, exited; no owner recorded)"},
		{Found{Name: "new", Target: "koa", RunID: "r2", PID: 9, Created: now.Add(-42 * time.Second), State: "created", Owner: OwnerAlive},
			"new (target koa, run r2, 42s old, created; its iotbench process runs (pid 9))"},
	}
	for _, c := range cases {
		if got := c.f.Describe(now); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
}

// TestRemoveLeftovers: a container whose iotbench process is gone is removed and named; one whose
// process runs is kept, until a cleanup of every container.
func TestRemoveLeftovers(t *testing.T) {
	d := connect(t)
	img := healthImage(t, d)
	const run = "test-leftovers"
	start := func(target string, pid int) {
		owned := *d
		owned.pid, owned.RunID = pid, run
		inst, err := owned.Start(context.Background(), Spec{Target: target, Image: img, Port: freePort(t), Health: "/health",
			StartupTimeout: 30 * time.Second, Memory: 64 << 20})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { inst.Remove(context.Background()) })
	}
	start("leftover-gone", deadPID(t))
	start("leftover-live", livePID(t))
	mine := func(f Found) bool { return f.RunID == run }
	targets := func(fs []Found) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.Target)
		}
		slices.Sort(out)
		return out
	}

	dry, err := d.RemoveLeftovers(context.Background(), Cleanup{DryRun: true, Match: mine})
	if err != nil {
		t.Fatal(err)
	}
	if got := targets(dry); !slices.Equal(got, []string{"leftover-gone"}) {
		t.Errorf("dry run lists %v, want [leftover-gone]", got)
	}
	if len(ours(t, d, "leftover-gone")) != 1 {
		t.Error("a dry run removed a container")
	}

	removed, err := d.RemoveLeftovers(context.Background(), Cleanup{Match: mine})
	if err != nil {
		t.Fatal(err)
	}
	if got := targets(removed); !slices.Equal(got, []string{"leftover-gone"}) {
		t.Fatalf("removed %v, want [leftover-gone]", got)
	}
	line := removed[0].Describe(time.Now())
	for _, want := range []string{"iotbench-leftover-gone-", "target leftover-gone", "run " + run, "s old", "its iotbench process is gone"} {
		if !strings.Contains(line, want) {
			t.Errorf("%q lacks %q", line, want)
		}
	}
	if left := ours(t, d, "leftover-gone"); len(left) != 0 {
		t.Errorf("the leftover is still there: %v", left)
	}
	if left := ours(t, d, "leftover-live"); len(left) != 1 {
		t.Errorf("%d containers of the live process, want it kept", len(left))
	}

	every, err := d.RemoveLeftovers(context.Background(), Cleanup{Every: true, Match: mine})
	if err != nil {
		t.Fatal(err)
	}
	if got := targets(every); !slices.Equal(got, []string{"leftover-live"}) || every[0].Owner != OwnerAlive {
		t.Errorf("a cleanup of every container removed %v, want [leftover-live] of a live owner", got)
	}
	if left := ours(t, d, "leftover-live"); len(left) != 0 {
		t.Errorf("still there after a cleanup of every container: %v", left)
	}
}

// TestRemoveMine: what a second Ctrl-C removes is this process's containers.
func TestRemoveMine(t *testing.T) {
	d := connect(t)
	img := healthImage(t, d)
	other := *d
	other.pid = livePID(t)
	for _, dd := range []*Docker{d, &other} {
		inst, err := dd.Start(context.Background(), Spec{Target: "mine", Image: img, Port: freePort(t), Health: "/health",
			StartupTimeout: 30 * time.Second, Memory: 64 << 20})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { inst.Remove(context.Background()) })
	}
	names, err := RemoveMine(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 || !strings.HasPrefix(names[0], "iotbench-mine-") {
		t.Errorf("removed %v, want this process's one container", names)
	}
	if left := ours(t, d, "mine"); len(left) != 1 {
		t.Errorf("%d containers left, want the other process's one", len(left))
	}
}

// TestRemoveMineReachesTheGeneratorHosts: a second Ctrl-C removes this process's shard containers
// on the engines of generator hosts too, not only on the environment's engine.
func TestRemoveMineReachesTheGeneratorHosts(t *testing.T) {
	gen := connect(t) // the generator host's engine
	img := healthImage(t, gen)
	inst, err := gen.Start(context.Background(), Spec{Target: "mine-on-a-generator-host", Image: img, Port: freePort(t), Health: "/health",
		StartupTimeout: 30 * time.Second, Memory: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Remove(context.Background()) })
	shardEngines.add(gen) // as StartShard does
	t.Cleanup(func() { shardEngines.remove(gen) })
	t.Setenv("DOCKER_HOST", emptyEngine(t)) // the environment's engine: another one, with nothing of ours

	names, err := RemoveMine(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 || !strings.HasPrefix(names[0], "iotbench-mine-on-a-generator-host-") {
		t.Errorf("removed %v, want the container on the generator host", names)
	}
	if left := ours(t, gen, "mine-on-a-generator-host"); len(left) != 0 {
		t.Errorf("left on the generator host: %v", left)
	}
}

// emptyEngine serves the Docker API of an engine without containers on a unix socket.
func emptyEngine(t *testing.T) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "docker.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/_ping"):
			w.Header().Set("Api-Version", "1.41")
			io.WriteString(w, "OK")
		case strings.HasSuffix(r.URL.Path, "/containers/json"):
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, "[]")
		default:
			http.NotFound(w, r)
		}
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return "unix://" + sock
}

// TestRemoveOldShardImages: of a repository's tags, all but the current build's go, except one a
// container still uses.
func TestRemoveOldShardImages(t *testing.T) {
	d := connect(t)
	img := healthImage(t, d)
	const repo = "iotbench-test/shard-pile"
	ctx := context.Background()
	base, err := d.c.ContainerCreate(ctx, client.ContainerCreateOptions{Config: &ctypes.Config{Image: img}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.removeContainer(ctx, base.ID) })
	// An image a build, as each iotbench build's shard image is: committed apart, not one image
	// tagged four times.
	for _, tag := range []string{"old1", "old2", "current", "used"} {
		if _, err := d.c.ContainerCommit(ctx, base.ID, client.ContainerCommitOptions{Reference: repo + ":" + tag, Changes: []string{"LABEL build=" + tag}}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.c.ImageRemove(ctx, repo+":"+tag, client.ImageRemoveOptions{PruneChildren: true}) })
	}
	user, err := d.c.ContainerCreate(ctx, client.ContainerCreateOptions{Config: &ctypes.Config{Image: repo + ":used"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.removeContainer(ctx, user.ID) })
	tags := func(fs []Found) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.Name)
		}
		slices.Sort(out)
		return out
	}
	dry, err := d.removeImages(ctx, repo, repo+":current", true)
	if err != nil {
		t.Fatal(err)
	}
	if got := tags(dry); !slices.Contains(got, repo+":old1") || !slices.Contains(got, repo+":old2") || slices.Contains(got, repo+":current") {
		t.Errorf("a dry run lists %v, want the old tags", got)
	}
	removed, err := d.removeImages(ctx, repo, repo+":current", false)
	if err != nil {
		t.Fatal(err)
	}
	if got := tags(removed); !slices.Equal(got, []string{repo + ":old1", repo + ":old2"}) {
		t.Errorf("removed %v, want the two old tags", got)
	}
	// The engine lists images in no set order.
	for _, f := range removed {
		if want := "image " + f.Name + " (the generator shard image of another iotbench build"; !strings.Contains(f.Describe(time.Now()), want) {
			t.Errorf("described as %q, want %q", f.Describe(time.Now()), want)
		}
	}
	res, err := d.c.ImageList(ctx, client.ImageListOptions{Filters: make(client.Filters).Add("reference", repo)})
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, i := range res.Items {
		left = append(left, i.RepoTags...)
	}
	slices.Sort(left)
	if !slices.Equal(left, []string{repo + ":current", repo + ":used"}) {
		t.Errorf("left %v, want the current build's and the one in use", left)
	}
}
