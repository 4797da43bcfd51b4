//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// linkTestHosts links two test hosts by a veth pair of their own on 10.78.<n>.0/30 (a's side .1,
// b's .2) and routes b's traffic to a's address over it: b's containers reach a's targets
// without this machine forwarding anything. Deleting either namespace deletes the pair.
func linkTestHosts(t *testing.T, a, b testHost, n int) {
	t.Helper()
	id := fmt.Sprintf("%d-%d", os.Getpid()%100000, n)
	ea, eb := "ibla"+id, "iblb"+id
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	net3 := fmt.Sprintf("10.78.%d", n)
	run("-n", a.ns, "link", "add", ea, "type", "veth", "peer", "name", eb, "netns", b.ns)
	run("-n", a.ns, "addr", "add", net3+".1/30", "dev", ea)
	run("-n", a.ns, "link", "set", ea, "up")
	run("-n", b.ns, "addr", "add", net3+".2/30", "dev", eb)
	run("-n", b.ns, "link", "set", eb, "up")
	run("-n", b.ns, "route", "add", a.addr+"/32", "via", net3+".1")
}

// TestShardsOnGeneratorHostsLoadARemoteTarget is issue 20's layout of three hosts with the
// project's own test hosts: the target on an engine in one network namespace, a generator
// engine in another, linked to the first, and this machine's engine as a second generator host.
// iotbench builds its shard image on both generator engines and runs one shard on each as a
// container; the target's own count of requests (/stats, held against the successes) equals
// the merged count, and the other host's clock offset is recorded (the same kernel's clock: small).
func TestShardsOnGeneratorHostsLoadARemoteTarget(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("network namespaces and more Docker engines need root")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	n := 1 + os.Getpid()%100
	targetHost, generatorHost := newTestHost(t, n), newTestHost(t, n+100)
	linkTestHosts(t, targetHost, generatorHost, n)
	targetEngine, genEngine := startEngine(t, targetHost).tcp, startEngine(t, generatorHost).tcp

	file := stubScenario(t)

	code, r, table := runOneCell(t, ctx, "--file", file, "--docker-host", targetEngine,
		"--generator-host", genEngine, "--generator-host", "unix:///var/run/docker.sock")
	t.Logf("target on %s, shards on %s and this machine's engine: %d generators, %d requests, %d successes, p50 %s, generator delay p99 %s, clock offset %s (measured %v)",
		targetEngine, genEngine, r.Generators, r.Requests, r.Successes, r.LatencyP50, r.GeneratorDelayP99, r.GeneratorClockOffset, r.GeneratorClockMeasured)
	countsMatch(t, code, r, table)
	if r.Generators != 2 || r.RequestedRPS != 400 || r.AchievedRPS < 0.99*400 {
		t.Errorf("%d generators, requested %d rps, achieved %.1f; want 2 at 400", r.Generators, r.RequestedRPS, r.AchievedRPS)
	}
	// One machine, one clock: what the exchange measures is its own error, far below a second.
	if !r.GeneratorClockMeasured || r.GeneratorClockOffset < 0 || r.GeneratorClockOffset >= time.Second {
		t.Errorf("generator clock offset %s (measured %v): want one measured, under 1s", r.GeneratorClockOffset, r.GeneratorClockMeasured)
	}
	// Every shard container is gone, here and there.
	for _, engine := range []string{genEngine, "unix:///var/run/docker.sock"} {
		ps := exec.Command("docker", "-H", engine, "ps", "-aq", "--filter", "name=iotbench-generator-shard-")
		if b, err := ps.CombinedOutput(); err != nil || strings.TrimSpace(string(b)) != "" {
			t.Errorf("shard containers left on %s: %q %v", engine, b, err)
		}
	}
}
