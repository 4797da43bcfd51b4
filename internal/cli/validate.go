package cli

import (
	"errors"
	"fmt"

	"github.com/iotbench/iotbench/internal/exitcode"
	"github.com/iotbench/iotbench/internal/loadspec"
	"github.com/iotbench/iotbench/internal/run"
	"github.com/iotbench/iotbench/internal/scenario"
)

// flagErr is a usage error of a flag's value: what the domain says of it, named by the flag.
func flagErr(flag, value string, err error) error { return exitcode.Flag(flag, value, err) }

// urlOnly are the flags of `run --url`: a scenario run takes them from its file.
var urlOnly = []string{"method", "body-file", "header", "contains", "expected-latency"}

// generatorCount is how many shards measure each cell: --generators, or one a generator host.
func (o *RunOptions) generatorCount() int {
	if o.Kube != "" && !o.set("generators") {
		return 0 // one a generator node
	}
	if len(o.GeneratorHosts) > 0 && !o.set("generators") {
		return len(o.GeneratorHosts)
	}
	return o.Generators
}

// validate refuses the flags no run can use, naming the flag, before a file is read or anything
// built; the load settings' are loadspec's (setup), so that a value refused in the file is
// refused on the command line too.
func (o *RunOptions) validate() error {
	if o.URL == "" {
		for _, name := range urlOnly {
			if o.set(name) {
				return usagef("--%s belongs to --url runs; a scenario run takes it from the scenario file (docs/scenarios.md)", name)
			}
		}
	}
	if o.URL == "" && o.set("ca") {
		return usagef("--ca belongs to --url runs over TLS; a scenario run makes its own certificates for its targets (docs/scenarios.md, Protocols)")
	}
	if o.Generators < 1 || o.Generators > 64 {
		return flagErr("generators", fmt.Sprint(o.Generators), errors.New("must be between 1 and 64"))
	}
	if o.Generators > 1 && o.FindMax {
		return usagef("--generators shares one rate among shards; --find-max searches rates one generator at a time: drop one of them")
	}
	if o.Kube == "" {
		for _, name := range []string{"kubeconfig", "namespace", "image-loader", "registry"} {
			if o.set(name) {
				return usagef("--%s belongs to runs on Kubernetes: give --kube CONTEXT", name)
			}
		}
	} else {
		if o.set("image-loader") && o.set("registry") {
			return usagef("--image-loader loads the images into the nodes, --registry has them pull: give one")
		}
		for _, name := range []string{"docker-host", "generator-host", "url"} {
			if o.set(name) {
				return usagef("--kube runs the targets and the generator shards on the cluster; --%s cannot be combined with it", name)
			}
		}
	}
	if o.set("docker-host") {
		if err := run.CheckEngine(o.DockerHost); err != nil {
			return flagErr("docker-host", "", err)
		}
	}
	if len(o.GeneratorHosts) > 0 {
		switch n := o.generatorCount(); {
		case o.FindMax:
			return usagef("--generator-host runs a cell's shards on other engines; --find-max searches rates with one generator here: drop one of them")
		case n < len(o.GeneratorHosts):
			return flagErr("generators", fmt.Sprint(n), fmt.Errorf("fewer than the %d --generator-host engines: give each at least one shard", len(o.GeneratorHosts)))
		}
	}
	d := loadspec.FormatDuration
	checks := []struct {
		flag, value string
		err         func() error
	}{
		{"max-trials", fmt.Sprint(o.MaxTrials), func() error { return loadspec.CheckTrials(o.MaxTrials) }},
		{"aa", fmt.Sprint(o.AA), func() error {
			if o.AA == 0 {
				return nil // no A/A control
			}
			return loadspec.CheckTrials(o.AA)
		}},
		{"step", d(o.Step), func() error { return loadspec.CheckPhase(o.Step) }},
		{"memory", o.Memory, func() error { _, err := scenario.ParseMemory(o.Memory); return err }},
	}
	for _, c := range checks {
		if !o.set(c.flag) {
			continue
		}
		if err := c.err(); err != nil {
			return flagErr(c.flag, c.value, err)
		}
	}
	return nil
}
