package scenario

import (
	"errors"

	"github.com/docker/go-units"
)

const (
	// MinMemory is the least memory Docker gives a container.
	MinMemory = 6 << 20
	// MaxBodySize bounds a payload sweep's sizes: bodies are built in memory when the file is read.
	MaxBodySize = 64 << 20
)

// ParseMemory reads a container's memory limit (1g, 512m) in bytes.
func ParseMemory(s string) (int64, error) {
	n, err := units.RAMInBytes(s)
	if err != nil || n < MinMemory {
		return 0, errors.New("not a size Docker accepts (at least 6m, e.g. 1g)")
	}
	return n, nil
}
