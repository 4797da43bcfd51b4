package load

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Capacity is what the generator sustained on this machine, as `make bench-generator` last
// measured it against nginx. A run asking for a higher rate is warned before it starts, rather
// than found invalid (the generator fell behind) after it ran.
type Capacity struct {
	// Rate is the highest open-loop rate sustained: at least 99.5% of it sent, and the median
	// latency not pushed up by the generator queueing behind its own work (tools/benchgen).
	Rate int `json:"rate"`
	// AtLeast: every rate tried was sustained, the generator can do more than Rate.
	AtLeast bool `json:"at_least"`
	// ClosedLoopRPS is its throughput with 64 connections.
	ClosedLoopRPS float64   `json:"closed_loop_rps"`
	CPUs          int       `json:"cpus"` // how many CPUs the generator had
	HostCPU       string    `json:"host_cpu"`
	Commit        string    `json:"commit"`
	Measured      time.Time `json:"measured"`
}

// CapacityFile is where the last figure is kept: the user's cache folder, one per machine.
func CapacityFile() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "iotbench", "generator-capacity.json"), nil
}

// SaveCapacity writes c to path, creating its folder.
func SaveCapacity(path string, c Capacity) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// ReadCapacity reads what SaveCapacity wrote; an error wrapping os.ErrNotExist when nothing was.
func ReadCapacity(path string) (Capacity, error) {
	var c Capacity
	b, err := os.ReadFile(path)
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("%s: %v (delete it and run make bench-generator again)", path, err)
	}
	return c, nil
}

// Warning says why a run at rate on cpus generator CPUs of hostCPU would outrun the generator, or
// is "" when the figure does not say so: no figure for this CPU model, or a rate within it. Measured
// on another number of CPUs, the figure is scaled to cpus.
func (c Capacity) Warning(rate, cpus int, hostCPU string) string {
	if c.Rate <= 0 || c.CPUs <= 0 || cpus <= 0 || c.HostCPU != hostCPU {
		return ""
	}
	limit := c.Rate * cpus / c.CPUs
	if rate <= limit {
		return ""
	}
	if c.AtLeast {
		return fmt.Sprintf("%d rps requested, above the highest rate make bench-generator tried (%d rps, sustained on %d generator CPU(s)): "+
			"whether the load generator keeps up is unknown; measure it with make bench-generator ARGS=-rates=…,%d", rate, c.Rate, c.CPUs, rate)
	}
	measured := fmt.Sprintf("%d rps on %d generator CPU(s)", c.Rate, c.CPUs)
	if cpus != c.CPUs {
		measured += fmt.Sprintf(", about %d rps on the %d it has now", limit, cpus)
	}
	return fmt.Sprintf("%d rps requested, but the load generator sustained at most %s (make bench-generator, %s, commit %s): "+
		"expect the cell to be invalid because the generator fell behind; lower the rate or give the generator more CPUs (--cpus)",
		rate, measured, c.Measured.Format("2006-01-02 15:04 MST"), c.Commit)
}

// CapacityWarning reads the last figure from CapacityFile and returns its Warning for a run at
// rate; "" when there is no figure or it cannot be read (the run itself still judges its rate).
func CapacityWarning(rate, cpus int, hostCPU string) string {
	if rate <= 0 {
		return "" // closed loop: no rate to outrun
	}
	path, err := CapacityFile()
	if err != nil {
		return ""
	}
	c, err := ReadCapacity(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return ""
		}
		return err.Error()
	}
	return c.Warning(rate, cpus, hostCPU)
}
