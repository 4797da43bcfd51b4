package plan

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iotbench/iotbench/internal/scenario"
)

// dbFile writes a scenario file with two targets and the given scenario settings lines.
func dbFile(t *testing.T, settings string) *scenario.File {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "t"), 0o755)
	os.WriteFile(filepath.Join(dir, "t", "Dockerfile"), []byte("FROM scratch\n"), 0o644)
	file := filepath.Join(dir, "scenarios.yaml")
	os.WriteFile(file, []byte(`
targets:
  a: {build: t, port: 9001, env: {MODE: x}}
  b: {build: t, port: 9002}
  high: {build: t, port: 60000}
scenarios:
  s:
    request: {path: /ingest}
    load: {rate: 10}
    trials: 2
    targets: [a, b]
`+settings), 0o644)
	f, err := scenario.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// describe is what a plan's cells say of their store, one line per cell.
func describe(p *Plan) string {
	var lines []string
	for _, c := range p.Cells {
		line := fmt.Sprintf("%s %s %d: %s pool %d env %v", c.Scenario, c.Target, c.Trial, c.DB.Kind, c.DB.PoolSize, c.Spec.Env)
		if c.DB.Server() {
			line += fmt.Sprintf(" server %s port %d cpus %s", c.DB.Build.Tag(), c.DB.Spec.Port, c.DB.Spec.CPUSet)
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

func TestDatabaseSettingsPlanEveryCell(t *testing.T) {
	cases := []struct {
		name, settings string
		o              Overrides
		want           string
		builds         int
	}{
		{"embedded by default", "", Overrides{Load: given(t, "trials", "1")}, `
s a 1: embedded pool 10 env map[DB_POOL_SIZE:10 MODE:x]
s b 1: embedded pool 10 env map[DB_POOL_SIZE:10]`, 1},
		{"postgres from the command line, on the target's CPUs", "", Overrides{Load: given(t, "trials", "1"), DB: "postgres"}, `
s a 1: postgres pool 10 env map[DB_POOL_SIZE:10 MODE:x] server iotbench/postgres:latest port 19001 cpus 1
s b 1: postgres pool 10 env map[DB_POOL_SIZE:10] server iotbench/postgres:latest port 19002 cpus 1`, 2},
		{"postgres and a pool sweep from the scenario, the server on its own CPUs", "    db: postgres\n    db_pool: [5, 40]\n    db_cpus: \"0\"\n", Overrides{Load: given(t, "trials", "1")}, `
s.pool-5 a 1: postgres pool 5 env map[DB_POOL_SIZE:5 MODE:x] server iotbench/postgres:latest port 19001 cpus 0
s.pool-5 b 1: postgres pool 5 env map[DB_POOL_SIZE:5] server iotbench/postgres:latest port 19002 cpus 0
s.pool-40 a 1: postgres pool 40 env map[DB_POOL_SIZE:40 MODE:x] server iotbench/postgres:latest port 19001 cpus 0
s.pool-40 b 1: postgres pool 40 env map[DB_POOL_SIZE:40] server iotbench/postgres:latest port 19002 cpus 0`, 2},
		{"the command line's sweep and store win", "    db: postgres\n    db_pool: [5, 40]\n", Overrides{Load: given(t, "trials", "1"), DB: "embedded", DBPool: []int{20}}, `
s.pool-20 a 1: embedded pool 20 env map[DB_POOL_SIZE:20 MODE:x]
s.pool-20 b 1: embedded pool 20 env map[DB_POOL_SIZE:20]`, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := dbFile(t, c.settings)
			p, err := Make(f, "s", c.o, []int{0, 1})
			if err != nil {
				t.Fatal(err)
			}
			if got := describe(p); got != strings.TrimPrefix(c.want, "\n") {
				t.Errorf("cells:\n%s\nwant:\n%s", got, strings.TrimPrefix(c.want, "\n"))
			}
			if len(p.Builds) != c.builds {
				t.Errorf("builds %v, want %d", p.Builds, c.builds)
			}
			// The file's targets keep their own environment: cells get copies.
			if env := f.Targets["a"].Env; len(env) != 1 {
				t.Errorf("target a's env in the file became %v", env)
			}
		})
	}
}

func TestDatabasePlanErrors(t *testing.T) {
	cases := []struct {
		name    string
		targets []string
		o       Overrides
		want    string
	}{
		{"unknown store", nil, Overrides{DB: "mysql"}, "db mysql: give embedded (the targets' in-process database) or postgres"},
		{"server CPU not here", nil, Overrides{DB: "postgres", DBCPUs: "7"}, "db-cpus 7: CPU 7 is not available here (available: 0-1)"},
		{"pool too large", nil, Overrides{DBPool: []int{10, 151}}, "db-pool 10,151: pool size 151: give 1 to 150 connections"},
		{"pool twice", nil, Overrides{DBPool: []int{10, 10}}, "db-pool 10,10: pool size 10 is listed twice"},
		{"server port beyond 65535", []string{"high"}, Overrides{DB: "postgres", NoSignals: true}, "target high: its database would listen on port 70000 (its port + 10000), beyond 65535: give the target a port below 55536"},
		{"signals port beyond 65535", []string{"high"}, Overrides{}, "target high: its signals would be served on port 80000 (its port + 20000), beyond 65535: give the target a port below 45536, or run with --signals=false"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.o.Targets = c.targets
			_, err := Make(dbFile(t, ""), "s", c.o, []int{0, 1})
			if err == nil || err.Error() != c.want {
				t.Errorf("err = %v, want %q", err, c.want)
			}
		})
	}
}

func TestDatabaseFileErrorsNameTheLine(t *testing.T) {
	f := dbFile(t, "    db: postgres\n    db_cpus: \"7\"\n")
	_, err := Make(f, "s", Overrides{}, []int{0, 1})
	want := f.Path + `:13: scenario "s": db_cpus 7: CPU 7 is not available here (available: 0-1)`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}

func TestVerifyPlanCarriesTheStore(t *testing.T) {
	p, err := Targets(dbFile(t, ""), []string{"b"}, Overrides{DB: "postgres"}, []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	want := "verify b 1: postgres pool 10 env map[DB_POOL_SIZE:10] server iotbench/postgres:latest port 19002 cpus 1"
	if got := describe(p); got != want || len(p.Builds) != 2 {
		t.Errorf("verify plan:\n%s\nwant:\n%s (and 2 builds: %v)", got, want, p.Builds)
	}
}
