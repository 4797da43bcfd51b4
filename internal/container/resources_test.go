package container

import (
	"context"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/resources"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// watch starts a healthsrv container with env, pinned to cpuset, and reads its resources for d.
func watch(t *testing.T, d *Docker, img, cpuset string, env map[string]string, du time.Duration) (resources.Usage, Observed) {
	t.Helper()
	inst, err := d.Start(context.Background(), Spec{Target: "resources", Image: img, Port: freePort(t), Health: "/health",
		StartupTimeout: 30 * time.Second, CPUSet: cpuset, Memory: 512 << 20, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Remove(context.Background()) })
	obs, ok := inst.(Observed)
	if !ok {
		t.Fatal("a Docker instance is not Observed")
	}
	src, err := obs.Resources()
	if err != nil {
		t.Fatal(err)
	}
	w, err := resources.Start(src, 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(du)
	u, err := w.Stop()
	if err != nil {
		t.Fatal(err)
	}
	return u, obs
}

func TestResourcesOfABusyLoopOnOneCore(t *testing.T) {
	d := connect(t)
	img := healthImage(t, d)
	// Four spinning goroutines and GOMAXPROCS 4 would use every core they were given.
	u, obs := watch(t, d, img, "1", map[string]string{"BUSY": "4", "GOMAXPROCS": "4"}, 2*time.Second)
	t.Logf("busy loop on cpuset 1: %.3f cores over %v, %d samples; startup %v; image %d bytes", u.CPUCores, u.Wall, u.Samples, obs.Startup(), obs.ImageSize())
	// The lower bound only proves the counter was read in the right unit: the core is shared with
	// whatever else runs on this machine.
	if u.CPUCores > 1.02 || u.CPUCores < 0.05 {
		t.Errorf("a busy loop pinned to one core used %.3f cores, want ≤ 1 (and some of it)", u.CPUCores)
	}
	if obs.Startup() <= 0 || obs.Startup() > 30*time.Second {
		t.Errorf("startup %v", obs.Startup())
	}
	if obs.ImageSize() < 1<<20 {
		t.Errorf("image size %d bytes: not read", obs.ImageSize())
	}
}

func TestResourcesOfAMemoryHog(t *testing.T) {
	d := connect(t)
	img := healthImage(t, d)
	const hogMiB = 200
	u, obs := watch(t, d, img, "1", map[string]string{"HOG_MB": "200"}, time.Second)
	peakMiB := float64(u.MemoryPeak) / (1 << 20)
	dockerMiB := float64(dockerStatsMemory(t, d, obs.(*dockerInstance).id)) / (1 << 20)
	t.Logf("memory hog of %d MiB: peak %.1f MiB, mean %.1f MiB, %d samples; docker stats %.1f MiB", hogMiB, peakMiB, float64(u.MemoryMean)/(1<<20), u.Samples, dockerMiB)
	if math.Abs(peakMiB-hogMiB) > 0.1*hogMiB {
		t.Errorf("peak memory %.1f MiB, want within 10%% of the %d MiB allocated", peakMiB, hogMiB)
	}
	if math.Abs(peakMiB-dockerMiB) > 0.1*dockerMiB {
		t.Errorf("peak memory %.1f MiB, want within 10%% of docker stats' %.1f MiB", peakMiB, dockerMiB)
	}
}

// dockerStatsMemory is the memory `docker stats` shows: the engine's usage minus inactive file
// pages (docker/cli's calculation, cgroup v1 and v2).
func dockerStatsMemory(t *testing.T, d *Docker, id string) uint64 {
	t.Helper()
	res, err := d.c.ContainerStats(context.Background(), id, client.ContainerStatsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var st container.StatsResponse
	if err := json.NewDecoder(res.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	m := st.MemoryStats
	inactive, v1 := m.Stats["total_inactive_file"]
	if !v1 {
		inactive = m.Stats["inactive_file"]
	}
	if inactive < m.Usage {
		return m.Usage - inactive
	}
	return m.Usage
}
