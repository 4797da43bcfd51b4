package kube

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// containerPID is a process of the container whose ID the pod's status gives
// ("containerd://<id>"), found on this machine by its cgroup path: a target node that is this
// machine (a local cluster) is measured as a Docker container is. 0 when there is none here.
func containerPID(containerID string) (int, error) {
	_, id, ok := strings.Cut(containerID, "://")
	if !ok || id == "" {
		return 0, fmt.Errorf("the pod names no container (%q)", containerID)
	}
	return pidOf(id, "/proc")
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
