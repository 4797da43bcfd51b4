package container

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestParseSSHEngine(t *testing.T) {
	var out strings.Builder
	for _, addr := range []string{
		"ssh://10.77.0.2",
		"ssh://bench@10.77.0.2:2222",
		"ssh://root@bench-host/var/tmp/ibeng1/d.sock",
		"ssh://root@[fd00::2]:22/",
		"ssh://bench:secret@10.77.0.2",
		"ssh://bench@10.77.0.2?x=1",
		"ssh://bench@10.77.0.2#frag",
		"ssh://-oProxyCommand=evil",
		"ssh://-l@host",
		"ssh://host/run/docker.sock;reboot",
		"ssh://host/run/$(id)",
		"ssh:host",
		"ssh://",
		"tcp://10.77.0.2:2375",
		"ssh://bench@10.77.0.2:port",
	} {
		e, err := parseSSHEngine(addr)
		if err != nil {
			fmt.Fprintf(&out, "%s\n  error: %v\n", addr, err)
			continue
		}
		fmt.Fprintf(&out, "%s\n  ssh %s\n", addr, strings.Join(e.args(), " "))
	}
	goldenFile(t, "parse-ssh-engine.golden", out.String())
}

// FuzzParseSSHEngine: whatever address is given, an accepted one runs ssh with the host right
// after "--" (never read as an option) and a remote command the shell takes word for word.
func FuzzParseSSHEngine(f *testing.F) {
	for _, s := range []string{"ssh://bench@10.77.0.2:2222", "ssh://h/var/run/docker.sock", "ssh://-x", "ssh://u:p@h", "ssh://h/a b", "ssh://%2dh"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, addr string) {
		e, err := parseSSHEngine(addr)
		if err != nil {
			return
		}
		args := e.args()
		i := slices.Index(args, "--")
		if i < 0 || args[i+1] != e.Host || e.Host == "" || strings.HasPrefix(e.Host, "-") || strings.HasPrefix(e.User, "-") {
			t.Fatalf("%q: ssh %q", addr, args)
		}
		for _, a := range args[i+2:] {
			if strings.ContainsAny(a, " \t\n;&|$`'\"\\<>(){}*?") {
				t.Fatalf("%q: the remote command holds %q", addr, a)
			}
		}
	})
}

// TestHelperBridge is not a test: run as a child process (by the docker stand-in of
// standInSSH), it bridges its stdin and stdout to the unix socket IOTBENCH_TEST_BRIDGE, as
// `docker system dial-stdio` bridges them to the engine's.
func TestHelperBridge(t *testing.T) {
	sock := os.Getenv("IOTBENCH_TEST_BRIDGE")
	if sock == "" {
		t.Skip("a helper process")
	}
	c, err := net.Dial("unix", sock)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	go func() {
		io.Copy(c, os.Stdin)
		c.(*net.UnixConn).CloseWrite()
	}()
	io.Copy(os.Stdout, c)
	os.Exit(0)
}

// standInSSH puts an `ssh` on PATH that records its arguments in the returned file, answers
// `ssh -G` with hostname, and otherwise runs the remote command on this machine (or fails as
// ssh does when fail is set). With fakeDocker, a `docker` beside it bridges to the unix socket
// fakeDocker instead of running dial-stdio.
func standInSSH(t *testing.T, hostname string, fail bool, fakeDocker string) (argsLog string) {
	t.Helper()
	dir := t.TempDir()
	argsLog = filepath.Join(dir, "args")
	failure := ""
	if fail {
		failure = "echo 'ssh: connect to host 10.77.0.2 port 22: Connection refused' >&2; exit 255"
	}
	script := fmt.Sprintf(`#!/bin/sh
printf '%%s\n' "$*" >> %q
if [ "$1" = -G ]; then printf 'user root\nhostname %s\nport 22\n'; exit 0; fi
%s
while [ "$#" -gt 0 ] && [ "$1" != -- ]; do shift; done
shift 2
exec "$@"
`, argsLog, hostname, failure)
	if err := os.WriteFile(filepath.Join(dir, "ssh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if fakeDocker != "" {
		docker := fmt.Sprintf("#!/bin/sh\nIOTBENCH_TEST_BRIDGE=%q exec %q -test.run='^TestHelperBridge$'\n", fakeDocker, os.Args[0])
		os.WriteFile(filepath.Join(dir, "docker"), []byte(docker), 0o755)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return argsLog
}

// fakeEngine serves the few API calls ConnectTo makes on a unix socket, and counts the
// connections it accepted and those still open.
type fakeEngine struct {
	sock       string
	mu         sync.Mutex
	open, seen int
}

func newFakeEngine(t *testing.T) *fakeEngine {
	t.Helper()
	f := &fakeEngine{sock: filepath.Join(t.TempDir(), "engine.sock")}
	l, err := net.Listen("unix", f.sock)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/_ping", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Api-Version", "1.41")
		io.WriteString(w, "OK")
	})
	mux.HandleFunc("/v1.41/version", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"Version":"99.1-fake","ApiVersion":"1.41"}`)
	})
	srv := &http.Server{Handler: mux, ConnState: func(_ net.Conn, s http.ConnState) {
		f.mu.Lock()
		defer f.mu.Unlock()
		switch s {
		case http.StateNew:
			f.open++
			f.seen++
		case http.StateClosed, http.StateHijacked:
			f.open--
		}
	}}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return f
}

func (f *fakeEngine) counts() (open, seen int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.open, f.seen
}

// TestConnectOverSSH reaches an engine at an ssh:// address through the ssh on PATH: the
// arguments are the docker CLI's, the API goes over the process's pipes, the host ssh connects
// to (an alias resolved by `ssh -G`) is the engine's host, and closing the client ends every
// process it started.
func TestConnectOverSSH(t *testing.T) {
	engine := newFakeEngine(t)
	args := standInSSH(t, "10.77.0.2", false, engine.sock)
	d, err := ConnectTo(context.Background(), "ssh://bench@bench-alias:2222")
	if err != nil {
		t.Fatal(err)
	}
	if v := d.Version(context.Background()); v != "99.1-fake" {
		t.Errorf("version %q, want the fake engine's", v)
	}
	if d.Remote() != "10.77.0.2" {
		t.Errorf("the engine's host is %q, want 10.77.0.2 (what ssh -G says bench-alias is)", d.Remote())
	}
	d.Close()
	// Closing kills each ssh, whose end of the bridge then closes: wait for it, boundedly.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		open, seen := engine.counts()
		if open == 0 && seen > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d connections still open after Close", open, seen)
		}
	}
	b, _ := os.ReadFile(args)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	want := "-o ConnectTimeout=30 -T -l bench -p 2222 -- bench-alias docker system dial-stdio"
	if !slices.Contains(lines, "-G -- bench-alias") || !slices.Contains(lines, want) {
		t.Errorf("ssh ran with:\n%s\nwant -G -- bench-alias and %s", b, want)
	}
}

// TestConnectOverSSHSaysWhySSHFailed: when ssh cannot connect, the error carries what it said.
func TestConnectOverSSHSaysWhySSHFailed(t *testing.T) {
	standInSSH(t, "10.77.0.2", true, "")
	_, err := ConnectTo(context.Background(), "ssh://bench@10.77.0.2")
	if err == nil || !strings.Contains(err.Error(), "exit status 255: ssh: connect to host 10.77.0.2 port 22: Connection refused") ||
		!strings.Contains(err.Error(), "the Docker engine at ssh://bench@10.77.0.2 does not answer") {
		t.Errorf("got %v, want ssh's own message", err)
	}
}

// TestConnectOverSSHToTheLocalEngine speaks to the real engine through the real
// `docker system dial-stdio`, run by an ssh stand-in on this machine: the transport with the
// remote side the docker CLI provides.
func TestConnectOverSSHToTheLocalEngine(t *testing.T) {
	local := connect(t)
	want := local.Version(context.Background())
	standInSSH(t, "127.0.0.1", false, "")
	d, err := ConnectTo(context.Background(), "ssh://root@127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if got := d.Version(context.Background()); got != want {
		t.Errorf("version over ssh %q, over the socket %q", got, want)
	}
	if d.Remote() != "" {
		t.Errorf("ssh to 127.0.0.1 is a local engine, got host %q", d.Remote())
	}
	// A build (the context streamed up), a start, and a hijacked connection (exec attach, as
	// CountRows uses), all over ssh's pipes.
	img := healthImage(t, d)
	inst, err := d.Start(context.Background(), Spec{Target: "sshconn-test", Image: img, Port: freePort(t), Health: "/health", Memory: 64 << 20, StartupTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Remove(context.Background())
	db := &dockerDatabase{dockerInstance: *inst.(*dockerInstance)}
	if out, err := db.exec(context.Background(), "sh", "-c", "echo over ssh"); err != nil || out != "over ssh\n" {
		t.Errorf("exec over ssh: %q, %v", out, err)
	}
}
