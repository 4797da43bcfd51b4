//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/container"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/results"
)

// testHost is a network namespace of this test's own, linked to this machine by a veth pair:
// addr is its address, reachable from here and from nothing else.
type testHost struct {
	ns, addr string
}

// newTestHost creates a namespace with a veth pair on 10.77.<n>.0/24 (the host side .1, the
// namespace .2), removed when the test ends whatever happens.
func newTestHost(t *testing.T, n int) testHost {
	t.Helper()
	id := fmt.Sprintf("%d-%d", os.Getpid()%100000, n)
	ns, here, there := "iotb-"+id, "ibh"+id, "ibn"+id
	net3 := fmt.Sprintf("10.77.%d", n)
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("netns", "add", ns)
	t.Cleanup(func() {
		// Deleting the namespace deletes its end of the pair, and with it this end.
		exec.Command("ip", "netns", "del", ns).Run()
		exec.Command("ip", "link", "del", here).Run()
	})
	run("link", "add", here, "type", "veth", "peer", "name", there)
	run("link", "set", there, "netns", ns)
	run("addr", "add", net3+".1/24", "dev", here)
	run("link", "set", here, "up")
	run("-n", ns, "addr", "add", net3+".2/24", "dev", there)
	run("-n", ns, "link", "set", there, "up")
	run("-n", ns, "link", "set", "lo", "up")
	return testHost{ns: ns, addr: net3 + ".2"}
}

// testEngine is a Docker engine started by the test: its address on the test host's network,
// and its unix socket (in this machine's filesystem, which the test host shares).
type testEngine struct {
	tcp, socket string
}

// startEngine starts a Docker engine of its own in h (data root, exec root, pidfile, sockets in
// a folder of its own; no bridge, no iptables), listening on h's address and on a unix socket.
// It is stopped, and its folder removed, when the test ends.
func startEngine(t *testing.T, h testHost) testEngine {
	t.Helper()
	// Short: containerd's socket lies under the exec root, and a socket's path is at most 107 bytes.
	dir, err := os.MkdirTemp("/var/tmp", "ibeng")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "daemon.json"), []byte("{}"), 0o644)
	host := "tcp://" + net.JoinHostPort(h.addr, "2375")
	log, _ := os.Create(filepath.Join(dir, "dockerd.log"))
	// nsenter, not ip netns exec: that one mounts a sysfs of the namespace's own, which hides the
	// cgroup mounts the engine needs.
	cmd := exec.Command("nsenter", "--net=/run/netns/"+h.ns, "dockerd",
		"--config-file", filepath.Join(dir, "daemon.json"),
		"--data-root", filepath.Join(dir, "data"), "--exec-root", filepath.Join(dir, "x"),
		"--pidfile", filepath.Join(dir, "dockerd.pid"),
		"-H", host, "-H", "unix://"+filepath.Join(dir, "d.sock"),
		"--bridge", "none", "--iptables=false", "--ip6tables=false", "--ip-masq=false",
		"--cgroup-parent", "iotbench-e2e-engine")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	exited := false
	t.Cleanup(func() {
		if !exited {
			cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				<-done
			}
		}
		// What the engine left mounted under its folder (the host network's namespace file).
		for _, sub := range []string{"x/netns/default", "x", "data"} {
			exec.Command("umount", "-R", filepath.Join(dir, sub)).Run()
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Logf("removing the engine's folder: %v", err)
		}
	})
	for deadline := time.Now().Add(60 * time.Second); ; {
		ping := exec.Command("docker", "-H", host, "version", "--format", "{{.Server.Version}}")
		if out, err := ping.CombinedOutput(); err == nil {
			t.Logf("engine %s in namespace %s at %s", strings.TrimSpace(string(out)), h.ns, host)
			return testEngine{tcp: host, socket: filepath.Join(dir, "d.sock")}
		}
		select {
		case <-done:
			exited = true
		default:
		}
		if time.Now().After(deadline) || exited {
			b, _ := os.ReadFile(filepath.Join(dir, "dockerd.log"))
			t.Fatalf("the engine in %s never answered at %s:\n%s", h.ns, host, lastLines(string(b), 30))
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// startSSHD starts an sshd of its own in h, on h's address, that lets root in with a key made
// here (and nothing else), and puts an `ssh` on PATH that uses that key and trusts only that
// server's host key: the real ssh and sshd, configured by the test rather than by ~/.ssh. It
// returns the ssh:// address of the engine's socket through that host. The server is stopped
// when the test ends.
func startSSHD(t *testing.T, h testHost, e testEngine) string {
	t.Helper()
	if _, err := os.Stat("/usr/sbin/sshd"); err != nil {
		t.Skip("no /usr/sbin/sshd: scripts/ensure-sshd.sh installs Debian's openssh-server (make e2e runs it)")
	}
	dir := t.TempDir()
	keygen := func(name string) string {
		t.Helper()
		path := filepath.Join(dir, name)
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "iotbench-e2e", "-f", path).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v\n%s", err, out)
		}
		pub, err := os.ReadFile(path + ".pub")
		if err != nil {
			t.Fatal(err)
		}
		return string(pub)
	}
	hostKey, clientKey := keygen("host_key"), keygen("client_key")
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	write("authorized_keys", clientKey)
	write("known_hosts", h.addr+" "+hostKey)
	// StrictModes no: the test's folder is under /tmp, which every user may write to.
	config := write("sshd_config", fmt.Sprintf(`ListenAddress %s:22
HostKey %s/host_key
AuthorizedKeysFile %s/authorized_keys
PidFile %s/sshd.pid
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
`, h.addr, dir, dir, dir))
	write("ssh_config", fmt.Sprintf(`Host *
  IdentityFile %s/client_key
  IdentitiesOnly yes
  UserKnownHostsFile %s/known_hosts
  StrictHostKeyChecking yes
  BatchMode yes
`, dir, dir))
	os.MkdirAll("/run/sshd", 0o755) // sshd's privilege separation folder
	log, _ := os.Create(filepath.Join(dir, "sshd.log"))
	cmd := exec.Command("nsenter", "--net=/run/netns/"+h.ns, "/usr/sbin/sshd", "-D", "-e", "-f", config)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	bin := filepath.Join(dir, "bin")
	os.MkdirAll(bin, 0o755)
	ssh, err := exec.LookPath("ssh")
	if err != nil {
		t.Skipf("no ssh client: %v", err)
	}
	if err := os.WriteFile(filepath.Join(bin, "ssh"), []byte(fmt.Sprintf("#!/bin/sh\nexec %s -F %s/ssh_config \"$@\"\n", ssh, dir)), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		probe := exec.Command("ssh", "-o", "ConnectTimeout=2", "root@"+h.addr, "true")
		out, err := probe.CombinedOutput()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(dir, "sshd.log"))
			t.Fatalf("ssh to the test host: %v\n%s\nsshd's log:\n%s", err, out, lastLines(string(b), 20))
		}
	}
	return "ssh://root@" + h.addr + e.socket
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// TestTargetOnARemoteEngineLoadedFromTwoShards is issue 20's test with the project's own test
// hosts: a second Docker engine in a network namespace, reached over a veth pair, by ssh (a
// real sshd in that namespace). iotbench copies the root image to it, builds the stub server's
// image there, starts it pinned there, bound to that host's address, and loads it from two
// generator shards; the target's own count of requests (its /stats, which iotbench holds
// against the successes) equals the merged count. Then a PostgreSQL server is started on that
// engine, reached over tcp this time, as --db postgres starts one beside a remote target.
func TestTargetOnARemoteEngineLoadedFromTwoShards(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("network namespaces and a second Docker engine need root")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 240*time.Second)
	defer cancel()
	host := newTestHost(t, 1+os.Getpid()%200)
	engine := startEngine(t, host)
	overSSH := startSSHD(t, host, engine)

	file := stubScenario(t)

	code, r, table := runOneCell(t, ctx, "--file", file, "--docker-host", overSSH, "--generators", "2")
	t.Logf("on the remote engine (%s, %s, engine %s): %d requests from two shards, %d successes, p50 %s, generator delay p99 %s, target CPU %.2f cores, memory peak %d MiB",
		r.HostCPU, r.Kernel, r.DockerVersion, r.Requests, r.Successes, r.LatencyP50, r.GeneratorDelayP99, r.CPUCores, r.MemoryPeak>>20)
	// Valid means the target's own /stats grew by exactly the merged successes (no errors: no
	// request it may have counted without answering).
	countsMatch(t, code, r, table)
	if r.Kernel == "" || r.DockerVersion == "" || r.CPUCores <= 0 || r.MemoryPeak <= 0 {
		t.Errorf("host facts or resources not read from the engine: kernel %q, engine %q, CPU %.3f cores, memory peak %d", r.Kernel, r.DockerVersion, r.CPUCores, r.MemoryPeak)
	}
	if r.RequestedRPS != 400 || r.AchievedRPS < 0.99*400 {
		t.Errorf("requested %d rps, achieved %.1f", r.RequestedRPS, r.AchievedRPS)
	}

	t.Run("postgres", func(t *testing.T) { databaseOnRemoteEngine(t, ctx, host, engine) })
	t.Run("cell-on-postgres", func(t *testing.T) { cellOnPostgresOnRemoteEngine(t, ctx, overSSH) })
}

// cellOnPostgresOnRemoteEngine runs one short --db postgres cell of a real target (bun-native,
// its image copied from the local engine: the test host cannot download one) on the engine
// reached by ssh: the server beside it on that engine, the target storing into it through its
// DATABASE_URL, and the rows counted in the server equal to the successes.
func cellOnPostgresOnRemoteEngine(t *testing.T, ctx context.Context, engine string) {
	local, err := container.ConnectTo(ctx, container.LocalEngine)
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	d, err := container.ConnectTo(ctx, engine)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	bun := container.BuildSpec{Context: "../targets/js", Dockerfile: "bun-native/Dockerfile"}
	pg := container.BuildSpec{Context: "../" + plan.PostgresContext}
	dir := t.TempDir()
	for _, b := range []container.BuildSpec{bun, pg} {
		if _, err := local.Build(ctx, b, io.Discard); err != nil {
			t.Fatal(err)
		}
		if err := d.Transfer(ctx, local, b.Tag()); err != nil {
			t.Fatal(err)
		}
	}
	// Build contexts on top of the copied images; the server's with this checkout's start script.
	os.MkdirAll(filepath.Join(dir, "bun"), 0o755)
	os.WriteFile(filepath.Join(dir, "bun", "Dockerfile"), []byte("FROM "+bun.Tag()+"\n"), 0o644)
	pgDir := filepath.Join(dir, plan.PostgresContext)
	os.MkdirAll(pgDir, 0o755)
	script, err := os.ReadFile(filepath.Join("..", plan.PostgresContext, "start.sh"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(pgDir, "start.sh"), script, 0o755)
	os.WriteFile(filepath.Join(pgDir, "Dockerfile"), []byte("FROM "+pg.Tag()+"\nCOPY start.sh /usr/local/bin/iotbench-postgres\n"), 0o644)
	payload, err := os.ReadFile("../payloads/iot-reading.json")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "reading.json"), payload, 0o644)
	file := filepath.Join(dir, "scenarios.yaml")
	os.WriteFile(file, []byte(fmt.Sprintf(`default_scenario: remote-db
defaults: {warmup: 1s, duration: 2s, trials: 1, memory: 512m}
targets:
  bun: {build: bun, port: %d}
scenarios:
  remote-db:
    request: {method: POST, path: /ingest, body_file: %s, headers: {Content-Type: application/json}}
    check: {contains: ['"processingMs"'], json_fields: [id, processingMs], min_latency: 50ms, stores_rows: true}
    load: {rate: 40, expected_latency: 60ms}
    targets: [bun]
`, freePort(t), filepath.Join(dir, "reading.json"))), 0o644)
	code, r, table := runOneCell(t, ctx, "--file", file, "--docker-host", engine, "--db", "postgres")
	t.Logf("bun-native on PostgreSQL on the remote engine: %d successes, %d rows counted in the server, valid %v (%s), p50 %s, server CPU %.2f cores",
		r.Successes, r.DBRowsStored, r.Valid, r.InvalidReason, r.LatencyP50, r.DBCPUCores)
	// The server's count over the measured phase: its successes, and the warm-up's requests still
	// in flight at the boundary (one load across it) may add theirs. A cell invalid only because
	// the generator was delayed on this shared machine (exit 1) is still counted (countsMatch's
	// rule): a 12 ms stall of the 40 rps generator while the hypervisor took 0.11 cores failed it.
	if !delayedOnly(t, r) && (code != 0 || !r.Valid) || r.Successes == 0 || r.DBRowsStored < r.Successes || r.DBRowsStored > r.Requests+int64(r.Connections) || r.DBMemoryPeak <= 0 {
		t.Errorf("exit %d, valid %v (%s): %d successes, %d rows in the server, its memory peak %d\n%s",
			code, r.Valid, r.InvalidReason, r.Successes, r.DBRowsStored, r.DBMemoryPeak, table)
	}
}

// databaseOnRemoteEngine starts the PostgreSQL server of --db postgres on the test host's
// engine, as a run with a remote target does: it must listen on that host's address, where
// the target's DATABASE_URL points, answer a login there, and count the rows stored through
// that URL (written by psql in another container of that host, as a target would).
func databaseOnRemoteEngine(t *testing.T, ctx context.Context, h testHost, e testEngine) {
	local, err := container.ConnectTo(ctx, container.LocalEngine)
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	// The image as a run builds it (cached), with this checkout's start script; copied by its tag,
	// which the next cell builds on.
	pg := container.BuildSpec{Context: "../" + plan.PostgresContext}
	image, err := local.Build(ctx, pg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	d, err := container.ConnectTo(ctx, e.tcp)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	d.RunID = "e2e-remote-db"
	begin := time.Now()
	if err := d.Transfer(ctx, local, pg.Tag()); err != nil {
		t.Fatal(err)
	}
	t.Logf("the PostgreSQL image copied to the test host's engine in %s", time.Since(begin).Round(time.Second))
	db, err := d.StartDatabase(ctx, container.DBSpec{Target: "remote", Image: image, Port: freePort(t), Memory: 256 << 20, StartupTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Remove(context.WithoutCancel(ctx))
	if !strings.Contains(db.URL(), "@"+h.addr+":") {
		t.Fatalf("DATABASE_URL %s does not point at the engine's host %s", db.URL(), h.addr)
	}
	// A client on that host logs in over the URL, with its password, as a target would.
	ids, err := exec.Command("docker", "-H", e.tcp, "ps", "-q", "--filter", "label=iotbench.target=remote.db").Output()
	id := strings.TrimSpace(string(ids))
	if err != nil || id == "" {
		t.Fatalf("the database container on the test host's engine: %v %q", err, ids)
	}
	sql := "CREATE TABLE readings (id serial PRIMARY KEY); INSERT INTO readings DEFAULT VALUES; INSERT INTO readings DEFAULT VALUES; INSERT INTO readings DEFAULT VALUES;"
	if out, err := exec.Command("docker", "-H", e.tcp, "exec", id, "psql", "--no-psqlrc", db.URL(), "-c", sql).CombinedOutput(); err != nil {
		t.Fatalf("psql over %s: %v\n%s", db.URL(), err, out)
	}
	n, err := db.CountRows(ctx)
	if err != nil || n != 3 {
		t.Fatalf("the server counts %d rows (%v), want the 3 stored through DATABASE_URL", n, err)
	}
	src, err := db.Resources()
	if err != nil {
		t.Fatal(err)
	}
	if s, err := src.Sample(); err != nil || s.Memory == 0 || s.CPU == 0 {
		t.Errorf("the server's resources through the engine: %+v, %v", s, err)
	}
}

// stubScenario writes a scenario file whose one target is the stub server built into an image
// from this checkout (static, so that it runs on any engine's root image), bound to the address
// the run gives it, answering /ingest after 20 ms and counting what it stored.
func stubScenario(t *testing.T) string {
	dir := t.TempDir()
	stubDir := filepath.Join(dir, "stub")
	os.MkdirAll(stubDir, 0o755)
	build := exec.Command("go", "build", "-o", filepath.Join(stubDir, "stubserver"), "./tools/stubserver")
	build.Dir = ".."
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	os.WriteFile(filepath.Join(stubDir, "Dockerfile"), []byte("FROM debian:trixie\nCOPY stubserver /stubserver\nUSER 65534\n"+
		`CMD ["sh", "-c", "exec /stubserver -addr $BIND_ADDRESS:$PORT -delay 20ms"]`+"\n"), 0o644)
	file := filepath.Join(dir, "scenarios.yaml")
	os.WriteFile(file, []byte(fmt.Sprintf(`default_scenario: remote
defaults: {warmup: 1s, duration: 3s, trials: 1, memory: 256m}
targets:
  stub: {build: stub, port: %d}
scenarios:
  remote:
    request: {method: GET, path: /ingest}
    check: {contains: ['"processingMs"'], stores_rows: true}
    load: {rate: 400, expected_latency: 20ms}
    targets: [stub]
`, freePort(t))), 0o644)
	return file
}

// countsMatch fails the test unless the cell answered every request and is valid, or invalid only
// because a generator was delayed on this shared machine: either way the target's own /stats grew
// by exactly the merged successes (the stored-rows check would say otherwise).
func countsMatch(t *testing.T, code int, r results.Row, table string) {
	t.Helper()
	if !r.Valid && !delayedOnly(t, r) || r.Errors != 0 || r.Requests != r.Successes {
		t.Fatalf("exit %d: valid %v (%s), %d requests, %d successes, %d errors\n%s", code, r.Valid, r.InvalidReason, r.Requests, r.Successes, r.Errors, table)
	}
	if strings.Contains(r.InvalidReason, "stored rows") {
		t.Fatalf("the target's own count is not the merged one: %s", r.InvalidReason)
	}
}

// delayedOnly says whether r is invalid only because a generator was delayed on this shared
// machine, and logs it when so: such a cell's counts are still checked.
func delayedOnly(t *testing.T, r results.Row) bool {
	t.Helper()
	if !generatorLate(r) {
		return false
	}
	t.Logf("delayed by a generator on this shared machine (the counts still checked): %s", r.InvalidReason)
	return true
}

// runOneCell runs iotbench with args (a run of one cell) into a new folder and answers its exit
// code, the cell's row and the table it printed; its log goes to the test's.
func runOneCell(t *testing.T, ctx context.Context, args ...string) (int, results.Row, string) {
	t.Helper()
	out := t.TempDir()
	code, table, log := iotbench(t, ctx, append(append([]string{"run"}, args...), "--keep-disturbed", "--out", out)...)
	t.Log(log)
	rows := readRows(t, out)
	if len(rows) != 1 {
		t.Fatalf("exit %d, %d rows\n%s", code, len(rows), table)
	}
	return code, rows[0], table
}
