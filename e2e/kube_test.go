//go:build e2e

package e2e

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/exitcode"
)

// The cluster of scripts/kube-cluster.sh (tools/kube/README.md): its context, its admin's
// kubeconfig, its nodes.
const (
	kubeContext    = "iotbench-kube"
	kubeConfig     = "/var/lib/iotbench-kube/admin.kubeconfig"
	kubeTargetNode = "iotk-target"
	kubeGenNode    = "iotk-generator"
)

// kubeCluster runs scripts/kube-cluster.sh with args, failing the test when it fails.
func kubeCluster(t *testing.T, ctx context.Context, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, "scripts/kube-cluster.sh", args...)
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kube-cluster.sh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// seenPod is what the watch saw of a pod of the run, at its furthest.
type seenPod struct {
	role, node string
	phases     map[string]bool
	// cpus is the CPU list a process of its container may run on, read on this machine while
	// it ran; empty when never read.
	cpus string
}

// watchRunPods watches the cluster's pods of iotbench's runs until stop is closed: every change
// of each, so that a phase a pod holds briefly (Succeeded, before the run removes the Job) is
// seen, as polling may not.
func watchRunPods(ctx context.Context, stop <-chan struct{}) func() map[string]*seenPod {
	seen := map[string]*seenPod{}
	done := make(chan struct{})
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-stop:
		case <-ctx.Done():
		}
		cancel()
	}()
	cmd := exec.CommandContext(ctx, "scripts/kube-cluster.sh", "kubectl", "get", "pods", "-A", "-o", "json", "--watch",
		"-l", "app.kubernetes.io/name in (iotbench-target,iotbench-shard)")
	cmd.Dir = ".."
	// The script runs kubectl as its child: end both.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	go func() {
		defer close(done)
		if err != nil {
			return
		}
		// The watch writes the pods there are first, then each pod as it changes, one JSON
		// object each (a List when the first are several).
		dec := json.NewDecoder(out)
		for {
			var o struct {
				watchedPod
				Items []watchedPod
			}
			if dec.Decode(&o) != nil {
				break
			}
			for _, p := range append(o.Items, o.watchedPod) {
				if p.Metadata.Name == "" {
					continue
				}
				s := seen[p.Metadata.Name]
				if s == nil {
					s = &seenPod{role: p.Metadata.Labels["app.kubernetes.io/name"], phases: map[string]bool{}}
					seen[p.Metadata.Name] = s
				}
				s.node = cmp.Or(p.Spec.NodeName, s.node)
				s.phases[p.Status.Phase] = true
				if p.Status.Phase == "Running" && s.cpus == "" && len(p.Status.ContainerStatuses) > 0 {
					s.cpus = containerCPUs(p.Status.ContainerStatuses[0].ContainerID)
				}
			}
		}
		cmd.Wait()
	}()
	return func() map[string]*seenPod {
		<-done
		return seen
	}
}

// watchedPod is what the watch reads of a pod.
type watchedPod struct {
	Metadata struct {
		Name   string
		Labels map[string]string
	}
	Spec   struct{ NodeName string }
	Status struct {
		Phase             string
		ContainerStatuses []struct{ ContainerID string }
	}
}

// containerCPUs is Cpus_allowed_list of a process of the container ("containerd://<id>") on
// this machine; empty when none is found.
func containerCPUs(containerID string) string {
	_, id, _ := strings.Cut(containerID, "://")
	if id == "" {
		return ""
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/cgroup")
	for _, f := range procs {
		b, err := os.ReadFile(f)
		if err != nil || !strings.Contains(string(b), id) {
			continue
		}
		status, err := os.ReadFile(filepath.Join(filepath.Dir(f), "status"))
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(status)) {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				return strings.TrimSpace(v)
			}
		}
	}
	return ""
}

// TestARunOnKubernetes is issue 59's pipeline on a real two-node cluster built on this machine:
// io-heavy on one JVM and one JavaScript target with two shards. The targets run as pods on the
// target node, pinned to a CPU of their own by the static CPU manager; the shards as an indexed
// Job on the generator node, whose pods complete; the merged counts equal the targets' own
// (the stored-rows check); a row is written per cell with the target's CPU and memory measured;
// the run's namespace is gone afterwards, and the cluster's teardown leaves nothing. Validity of
// the cells is not asserted: the two nodes share this machine's two cores.
func TestARunOnKubernetes(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the cluster needs root")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	kubeCluster(t, ctx, "build") // cached by make e2e's kube-build
	begin := time.Now()
	kubeCluster(t, ctx, "up")
	t.Logf("cluster up in %.1f s", time.Since(begin).Seconds())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		// down ends with leftovers, which fails when anything is left
		kubeCluster(t, ctx, "down")
	})

	stop := make(chan struct{})
	pods := watchRunPods(ctx, stop)
	out := t.TempDir()
	begin = time.Now()
	code, table, log := iotbench(t, ctx, "run", "--kube", kubeContext, "--kubeconfig", kubeConfig,
		"--image-loader", "scripts/kube-cluster.sh load-image", "--scenario", "io-heavy", "--targets", "spring-mvc-virtual,fastify",
		"--generators", "2", "--warmup", "3s", "--duration", "4s", "--trials", "1", "--keep-disturbed", "--out", out)
	close(stop)
	seen := pods()
	t.Logf("iotbench run --kube: exit %d in %.1f s\n%s\n%s", code, time.Since(begin).Seconds(), log, table)
	if code != 0 && code != exitcode.Invalid {
		t.Fatalf("exit %d", code)
	}

	rows := readRows(t, out)
	if len(rows) != 2 {
		t.Fatalf("%d rows, want one a target", len(rows))
	}
	for _, r := range rows {
		switch {
		case r.Generators != 2:
			t.Errorf("%s: %d generators, want 2", r.Target, r.Generators)
		case r.Requests == 0 || r.Errors != 0 || r.Requests != r.Successes:
			t.Errorf("%s: %d requests, %d successes, %d errors", r.Target, r.Requests, r.Successes, r.Errors)
		case strings.Contains(r.InvalidReason, "stored rows"):
			t.Errorf("%s: the target's own count is not the merged one: %s", r.Target, r.InvalidReason)
		case r.CPUCores <= 0 || r.MemoryPeak <= 0 || r.ImageSize <= 0:
			t.Errorf("%s: target CPU %.2f cores, peak memory %d bytes, image %d bytes: not measured", r.Target, r.CPUCores, r.MemoryPeak, r.ImageSize)
		case !strings.HasPrefix(r.DockerVersion, "kubernetes v1.34.4") || r.HostCPU != "node "+kubeTargetNode:
			t.Errorf("%s: recorded as run on %q, %q", r.Target, r.DockerVersion, r.HostCPU)
		}
	}

	var targets, shards, completed int
	for name, p := range seen {
		switch p.role {
		case "iotbench-target":
			targets++
			if p.node != kubeTargetNode || p.cpus != "1" {
				t.Errorf("target pod %s on node %q, CPUs %q: want %s, CPU 1 (CPU 0 is reserved)", name, p.node, p.cpus, kubeTargetNode)
			}
		case "iotbench-shard":
			shards++
			if p.node != kubeGenNode {
				t.Errorf("shard pod %s on node %q, want %s", name, p.node, kubeGenNode)
			}
			if p.phases["Succeeded"] {
				completed++
			}
		}
	}
	// Every shard of both cells was seen complete (a calibration runs in this process).
	if targets != 2 || shards != 4 || completed != 4 {
		t.Errorf("saw %d target pods, %d shard pods, %d of them complete; want 2, 4, 4", targets, shards, completed)
	}
	ns := kubeCluster(t, ctx, "kubectl", "get", "namespaces", "-l", "app.kubernetes.io/managed-by=iotbench", "-o", "name")
	if strings.TrimSpace(ns) != "" {
		t.Errorf("the run's namespace is still there: %s", ns)
	}
}

// The pause image scripts/kube-cluster.sh imports into both nodes (its PAUSE_IMAGE).
const kubePauseImage = "localhost/iotbench-pause:3.10.1"

// shimSocketDir is where every containerd on the host puts its shims' sockets, Docker's too.
const shimSocketDir = "/run/containerd/s"

func shimSockets(t *testing.T) map[string]bool {
	t.Helper()
	entries, err := os.ReadDir(shimSocketDir)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, e := range entries {
		names[e.Name()] = true
	}
	return names
}

// TestTheClusterRemovesOnlyItsOwnShimSockets: a dead shim socket of another containerd's (as
// Docker's shims leave when a run is killed) neither stops the cluster coming up nor goes with
// its teardown; one of the cluster's own, whose shim was killed, goes, and leftovers agree.
func TestTheClusterRemovesOnlyItsOwnShimSockets(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the cluster needs root")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	kubeCluster(t, ctx, "build")

	if _, err := os.Stat(shimSocketDir); os.IsNotExist(err) {
		if err := os.MkdirAll(shimSocketDir, 0o700); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(shimSocketDir) }) // runs last: after the teardown
	}
	sum := sha256.Sum256([]byte(t.Name() + time.Now().String()))
	foreign := filepath.Join(shimSocketDir, hex.EncodeToString(sum[:]))
	l, err := net.Listen("unix", foreign)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	t.Cleanup(func() { os.Remove(foreign) })

	before := shimSockets(t)
	kubeCluster(t, ctx, "up")
	downed := false
	t.Cleanup(func() {
		if !downed {
			kubeCluster(t, context.Background(), "down")
		}
	})
	// a pod needs its namespace's service account, which the controller manager makes just after up
	kubeCluster(t, ctx, "kubectl", "wait", "--for=create", "serviceaccount/default", "--timeout=60s")
	kubeCluster(t, ctx, "kubectl", "run", "paused", "--image", kubePauseImage, "--image-pull-policy", "Never")
	kubeCluster(t, ctx, "kubectl", "wait", "--for=condition=Ready", "pod/paused", "--timeout=90s")
	ours := map[string]bool{}
	for name := range shimSockets(t) {
		if !before[name] {
			ours[name] = true
		}
	}
	if len(ours) == 0 {
		t.Fatalf("the pod runs, but no new socket in %s", shimSocketDir)
	}
	// Kill the pod's shim, as a killed run would: its socket stays, nobody listening.
	shims, _ := exec.CommandContext(ctx, "pgrep", "-f", "containerd-shim.*-address /run/iotbench-kube/").Output()
	pids := strings.Fields(string(shims))
	if len(pids) == 0 {
		t.Fatal("no shim of the cluster's found")
	}
	for _, p := range pids {
		if err := exec.CommandContext(ctx, "kill", "-KILL", p).Run(); err != nil {
			t.Fatalf("kill %s: %v", p, err)
		}
	}
	time.Sleep(2 * time.Second) // the kubelet may start the sandbox again: its socket is ours too
	for name := range shimSockets(t) {
		if !before[name] {
			ours[name] = true
		}
	}

	kubeCluster(t, ctx, "down") // ends with leftovers: fails when it finds any
	downed = true
	after := shimSockets(t)
	for name := range ours {
		if after[name] {
			t.Errorf("the cluster's shim socket %s is still there after down", name)
		}
	}
	if !after[filepath.Base(foreign)] {
		t.Errorf("down removed another containerd's dead shim socket %s", foreign)
	}
	t.Logf("the cluster's %d shim sockets, one of its shims killed: gone after down; another containerd's dead socket left", len(ours))
}
