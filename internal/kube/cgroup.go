package kube

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/iotbench/iotbench/internal/resources"
)

// localCgroup is the cgroup of the container whose ID the pod's status gives
// ("containerd://<id>"), found through a process of it on this machine: a target node that is
// this machine (a local cluster) is measured as a Docker container is. Elsewhere it says so.
func localCgroup(containerID, node string) (resources.Source, error) {
	_, id, ok := strings.Cut(containerID, "://")
	if !ok || id == "" {
		return nil, fmt.Errorf("the pod names no container (%q)", containerID)
	}
	pid, err := pidOf(id, "/proc")
	if err != nil {
		return nil, err
	}
	if pid == 0 {
		return nil, fmt.Errorf("its node %s is not this machine (no process of container %.12s here): its CPU and memory are read on the node only", node, id)
	}
	return resources.CgroupOf("/sys/fs/cgroup", "/proc", pid)
}

// pidOf is a process of proc whose cgroup path names container id; 0 when none.
func pidOf(id, proc string) (int, error) {
	entries, err := os.ReadDir(proc)
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(proc, e.Name(), "cgroup"))
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(b)) {
			if strings.Contains(line, id) {
				return pid, nil
			}
		}
	}
	return 0, nil
}
