package main

import (
	"context"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// body is nginx's whole answer: small, static, and it carries the marker the engine checks for
// (nginxBody), so the check runs on every response as it does in a real run.
const body = `{"id":1,"processingMs":0}`

// nginxBody is what the engine's check finds in every one of nginx's answers.
const nginxBody = `"id"`

// nginxConf serves body from memory on one loopback port with one worker: no file read, no log
// written per request, connections kept for the whole run. Every path nginx writes is in dir.
const nginxConf = `worker_processes 1;
daemon off;
error_log %[1]s/error.log warn;
pid %[1]s/nginx.pid;
events { worker_connections 8192; }
http {
  access_log off;
  keepalive_requests 100000000;
  keepalive_timeout 300s;
  client_body_temp_path %[1]s/body;
  proxy_temp_path %[1]s/proxy;
  fastcgi_temp_path %[1]s/fastcgi;
  uwsgi_temp_path %[1]s/uwsgi;
  scgi_temp_path %[1]s/scgi;
  server {
    listen 127.0.0.1:%[2]d;
    location / { default_type application/json; return 200 '%[3]s'; }
  }
  server {
    listen 127.0.0.1:%[4]d ssl http2;
    ssl_certificate %[1]s/cert.pem;
    ssl_certificate_key %[1]s/key.pem;
    ssl_protocols TLSv1.3;
    location / { default_type application/json; return 200 '%[3]s'; }
  }
}
`

// nginx is a server started by this program; stop ends it by its pid.
type nginx struct {
	cmd *exec.Cmd
	dir string
	URL string
	// TLSURL serves the same over TLS 1.3 with a certificate of a throwaway CA, which roots trusts.
	TLSURL string
	roots  *x509.CertPool
	done   chan struct{}
}

// startNginx starts nginx pinned to cpu on a free loopback port and waits until it answers.
func startNginx(bin string, cpu int) (*nginx, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	tlsPort, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "benchgen-nginx-")
	if err != nil {
		return nil, err
	}
	roots, err := makeCert(dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, nginxConf, dir, port, body, tlsPort), 0o644); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	cmd := exec.Command("taskset", "-c", strconv.Itoa(cpu), bin, "-p", dir, "-c", conf)
	// Its own process group: a Ctrl-C at the terminal reaches this program, which stops nginx
	// itself, and nginx is not left half-stopped by a signal it got first. Should this program
	// die without stopping it (killed, or SIGPIPE from `| head`), the kernel tells nginx to stop.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	n := &nginx{cmd: cmd, dir: dir, URL: fmt.Sprintf("http://127.0.0.1:%d/", port), TLSURL: fmt.Sprintf("https://127.0.0.1:%d/", tlsPort), roots: roots, done: make(chan struct{})}
	started := make(chan error)
	go func() {
		// The parent-death signal follows the thread that started nginx, not the process, and
		// the Go runtime ends threads (the engine's handshake helpers end theirs): nginx is
		// started from a thread kept until it exits.
		runtime.LockOSThread()
		err := cmd.Start()
		started <- err
		if err == nil {
			_ = cmd.Wait()
		}
		close(n.done)
	}()
	if err := <-started; err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting nginx (%s): %v", bin, err)
	}
	if err := n.waitReady(5 * time.Second); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
		n.stop()
		return nil, fmt.Errorf("nginx on %s: %v\n%s", n.URL, err, log)
	}
	return n, nil
}

func (n *nginx) waitReady(within time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, n.URL, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("answered %s", resp.Status)
		}
		select {
		case <-n.done:
			return fmt.Errorf("exited before answering")
		case <-ctx.Done():
			return fmt.Errorf("no answer within %s: %v", within, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// stop ends nginx: QUIT (finish and exit), KILL after 5 s; then removes its folder.
func (n *nginx) stop() {
	_ = n.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-n.done:
	case <-time.After(5 * time.Second):
		// The master, then anything left in its group (its worker).
		_ = n.cmd.Process.Kill()
		_ = syscall.Kill(-n.cmd.Process.Pid, syscall.SIGKILL)
		<-n.done
	}
	os.RemoveAll(n.dir)
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// cpu is the user and system time nginx's master and workers used so far.
func (n *nginx) cpu() time.Duration {
	pid := n.cmd.Process.Pid
	pids := []string{strconv.Itoa(pid)}
	if children, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid)); err == nil {
		pids = append(pids, strings.Fields(string(children))...)
	}
	var total time.Duration
	for _, p := range pids {
		stat, err := os.ReadFile("/proc/" + p + "/stat")
		if err != nil {
			continue
		}
		total += statCPU(string(stat))
	}
	return total
}

// statCPU reads utime + stime from a /proc/<pid>/stat line. The command name (field 2) may hold
// spaces, so fields are counted from its closing parenthesis.
func statCPU(stat string) time.Duration {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 13 {
		return 0
	}
	// Fields 14 and 15 of the line; f[0] is field 3. In clock ticks, USER_HZ, 100 on Linux.
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
