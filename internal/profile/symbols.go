package profile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/iotbench/iotbench/internal/container"
)

// TmpDir makes the folder a profiled target gets as its /tmp (container.Spec.Tmp), inside dir:
// its runtime writes its symbol map there, which outlives the container. Writable by the
// target's user, whoever it is, as a /tmp is.
func TmpDir(dir string) (string, error) {
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return "", err
	}
	return tmp, os.Chmod(tmp, 0o1777)
}

// Symbols places each process's symbol map, written in its container as /tmp/perf-<PID>.map
// (the folder tmp on this machine, TmpDir), where perf looks for a process that has ended: this
// machine's /tmp/perf-<host PID>.map. It returns which processes had one, and a function that
// removes what it placed. A process without a map (a runtime that writes none, a helper
// process) leaves its JIT frames unnamed; none with one is an error, saying why.
func Symbols(tmp string, ps []container.Process) (named []container.Process, cleanup func(), err error) {
	return placeMaps(tmp, ps, os.TempDir())
}

func placeMaps(tmp string, ps []container.Process, hostTmp string) (named []container.Process, cleanup func(), err error) {
	var placed []string
	cleanup = func() {
		for _, p := range placed {
			os.Remove(p)
		}
	}
	var unread []error
	for _, p := range ps {
		src := filepath.Join(tmp, fmt.Sprintf("perf-%d.map", p.PID))
		dst := filepath.Join(hostTmp, fmt.Sprintf("perf-%d.map", p.HostPID))
		if _, err := os.Lstat(dst); err == nil {
			// A process of this machine owns the name: its map is left alone.
			unread = append(unread, fmt.Errorf("%s exists already", dst))
			continue
		}
		if err := os.Symlink(src, dst); err != nil {
			unread = append(unread, err)
			continue
		}
		placed = append(placed, dst)
		if _, err := os.Stat(src); err != nil {
			unread = append(unread, err)
			continue
		}
		named = append(named, p)
	}
	if len(named) == 0 && len(unread) > 0 {
		return nil, cleanup, fmt.Errorf("no symbol map: %w", errors.Join(unread...))
	}
	return named, cleanup, nil
}
