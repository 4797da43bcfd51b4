package profile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/container"
	"github.com/iotbench/iotbench/internal/flame"
)

func TestEnvAddsEachRuntimesOptionsToItsOwn(t *testing.T) {
	got := Env(map[string]string{"NODE_OPTIONS": "--max-old-space-size=512", "X": "y"})
	if got["NODE_OPTIONS"] != "--max-old-space-size=512 "+nodeOptions || got["JAVA_TOOL_OPTIONS"] != javaOptions || got["X"] != "y" {
		t.Errorf("Env = %v", got)
	}
	if got := Env(nil); got["NODE_OPTIONS"] != nodeOptions {
		t.Errorf("Env(nil) = %v", got)
	}
}

func TestProfilesAreWrittenAndReadBack(t *testing.T) {
	dir := t.TempDir()
	stacks, err := flame.ParseFolded(strings.NewReader("main;work_[j] 30\nmain;io_[k] 10\n"))
	if err != nil {
		t.Fatal(err)
	}
	recs := []Record{
		{Scenario: "io-heavy.find-max", Target: "fastify", Search: 1, Rate: 4000, Achieved: 3999.5, P50: 2 * time.Millisecond, P99: 41500 * time.Microsecond,
			Duration: 4 * time.Second, Cost: Cost{Wall: 4 * time.Second, CPU: 200 * time.Millisecond}, Processes: 1, Named: 1, Stacks: stacks},
		{Scenario: "io-heavy.find-max", Target: "spring mvc/virtual", Search: 2, Rate: 2000, Processes: 2, Named: 1, Duration: time.Second, Cost: Cost{Wall: time.Second}, Stacks: stacks},
	}
	for i := range recs {
		if err := Write(dir, &recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if recs[1].File != "profiles/io-heavy.find-max_spring-mvc-virtual_s2_2000rps.folded" {
		t.Errorf("file %q: the target's name is not made safe for a file", recs[1].File)
	}
	got, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d profiles read, want 2", len(got))
	}
	for i, g := range got {
		w := recs[i]
		if g.Scenario != w.Scenario || g.Target != w.Target || g.Search != w.Search || g.Rate != w.Rate || g.Achieved != w.Achieved ||
			g.P50 != w.P50 || g.P99 != w.P99 || g.Duration != w.Duration || g.Cost.CPU != w.Cost.CPU || g.Processes != w.Processes ||
			g.Named != w.Named || g.File != w.File || g.Stacks.Total != 40 || g.Stacks.Stacks["main;work_[j]"] != 30 {
			t.Errorf("profile %d read back as %+v, want %+v", i, g, w)
		}
	}
	if got, err := Read(t.TempDir()); got != nil || err != nil {
		t.Errorf("a folder without profiles: %v, %v; want none and no error", got, err)
	}
}

func TestABrokenIndexIsRefusedAtItsLine(t *testing.T) {
	dir := t.TempDir()
	stacks, _ := flame.ParseFolded(strings.NewReader("a;b 5\n"))
	r := Record{Scenario: "s", Target: "t", Search: 1, Rate: 10, Stacks: stacks}
	if err := Write(dir, &r); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(dir, indexName)
	good, _ := os.ReadFile(index)
	cases := []struct{ name, index, folded, want string }{
		{"stacks cut short", string(good), "a;b 4\n", "holds 4 samples, its line 5: not written whole"},
		{"a negative rate", strings.Replace(string(good), ",1,10,", ",1,-10,", 1), "a;b 5\n", "profiles.csv:2: rate \"-10\""},
		{"a file outside the folder", strings.Replace(string(good), "profiles/", "../", 1), "a;b 5\n", "is not inside the folder"},
		{"another header", strings.Replace(string(good), "scenario,", "kind,", 1), "a;b 5\n", "column 1 is \"kind\""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			os.WriteFile(index, []byte(c.index), 0o644)
			os.WriteFile(filepath.Join(dir, r.File), []byte(c.folded), 0o644)
			if _, err := Read(dir); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Read: %v, want an error saying %q", err, c.want)
			}
		})
	}
}

func TestSymbolMapsArePlacedUnderTheHostPIDAndRemoved(t *testing.T) {
	tmp, hostTmp := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(tmp, "perf-1.map"), []byte("7f00 10 fn\n"), 0o644)
	ps := []container.Process{{HostPID: 5012, PID: 1}, {HostPID: 5013, PID: 7}} // the second wrote none
	named, cleanup, err := placeMaps(tmp, ps, hostTmp)
	if err != nil {
		t.Fatal(err)
	}
	if len(named) != 1 || named[0].HostPID != 5012 {
		t.Errorf("named %v, want the process that wrote a map", named)
	}
	if got, err := os.ReadFile(filepath.Join(hostTmp, "perf-5012.map")); err != nil || string(got) != "7f00 10 fn\n" {
		t.Errorf("perf-5012.map reads %q, %v", got, err)
	}
	cleanup()
	if left, _ := os.ReadDir(hostTmp); len(left) != 0 {
		t.Errorf("left after cleanup: %v", left)
	}
	// A name a process of this machine holds already is left alone; with no map placed, it says why.
	os.WriteFile(filepath.Join(hostTmp, "perf-5012.map"), []byte("theirs"), 0o644)
	if _, _, err := placeMaps(tmp, ps[:1], hostTmp); err == nil || !strings.Contains(err.Error(), "exists already") {
		t.Errorf("placing over an existing map: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(hostTmp, "perf-5012.map")); string(got) != "theirs" {
		t.Errorf("an existing map was overwritten: %q", got)
	}
}
