package container

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// An ssh:// engine is reached as the docker CLI reaches it: each connection is a process
// `ssh [-l user] [-p port] -- host docker system dial-stdio` that bridges its stdin and stdout to
// the engine's socket on that host, and the API is spoken over its pipes. ssh does the
// authentication (keys, agent, ~/.ssh/config, known hosts), so iotbench holds no secret.

// sshDaemonHost is the HTTP host of requests sent over ssh: any name would do, the connection
// is already the engine's.
const sshDaemonHost = "http://docker.example.com"

// sshEngine is an ssh:// engine address.
type sshEngine struct {
	User, Host, Port string
	// Socket is the engine's socket on that host (the address's path); empty: the remote docker
	// CLI's default.
	Socket string
}

// socketPath is what a socket path in an ssh:// address may hold: the remote shell reads the
// command, so nothing it would interpret.
var socketPath = regexp.MustCompile(`^/[A-Za-z0-9/._+-]*$`)

// parseSSHEngine reads ssh://[user@]host[:port][/socket] as the docker CLI does: no password,
// query or fragment; a user or host starting with '-' is refused, so that neither can be read
// as an option of ssh.
func parseSSHEngine(addr string) (sshEngine, error) {
	u, err := url.Parse(addr)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return sshEngine{}, fmt.Errorf("engine address %q: %v", addr, err)
	}
	bad := func(why string) (sshEngine, error) {
		return sshEngine{}, fmt.Errorf("engine address %q: %s; give ssh://[user@]host[:port][/socket]", addr, why)
	}
	if u.Scheme != "ssh" {
		return bad("not an ssh:// address")
	}
	var e sshEngine
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			return bad("a password in the address is not supported (ssh asks for it, or use a key)")
		}
		e.User = u.User.Username()
	}
	e.Host, e.Port = u.Hostname(), u.Port()
	switch {
	case e.Host == "":
		return bad("no host")
	case strings.HasPrefix(e.Host, "-") || strings.HasPrefix(e.User, "-"):
		return bad("a user or host starting with '-'")
	case u.RawQuery != "" || u.ForceQuery:
		return bad("a query is not allowed")
	case u.Fragment != "":
		return bad("a fragment is not allowed")
	case u.Opaque != "":
		return bad("no host")
	}
	if strings.Trim(u.Path, "/") != "" {
		if !socketPath.MatchString(u.Path) {
			return bad("the socket path may hold letters, digits and / . _ + - only")
		}
		e.Socket = u.Path
	}
	return e, nil
}

// args are ssh's arguments: the docker CLI's (-T: no terminal, a connection timeout) and the
// remote command that bridges to the engine.
func (e sshEngine) args() []string {
	args := []string{"-o", "ConnectTimeout=30", "-T"}
	if e.User != "" {
		args = append(args, "-l", e.User)
	}
	if e.Port != "" {
		args = append(args, "-p", e.Port)
	}
	args = append(args, "--", e.Host, "docker")
	if e.Socket != "" {
		args = append(args, "--host=unix://"+e.Socket)
	}
	return append(args, "system", "dial-stdio")
}

// hostname is the host ssh connects to for e: ~/.ssh/config may name an alias (`ssh -G` prints
// the configuration it would use); the address's own host when ssh cannot say.
func (e sshEngine) hostname() string {
	out, err := exec.Command("ssh", "-G", "--", e.Host).Output()
	if err != nil {
		return e.Host
	}
	for _, line := range strings.Split(string(out), "\n") {
		if h, ok := strings.CutPrefix(line, "hostname "); ok && strings.TrimSpace(h) != "" {
			return strings.TrimSpace(h)
		}
	}
	return e.Host
}

// dialCommand returns a dialer whose every connection is a new process name args, spoken to
// over its stdin and stdout.
func dialCommand(name string, args ...string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, _, _ string) (net.Conn, error) {
		return startCommandConn(ctx, name, args...)
	}
}

// commandConn is a connection over a process's pipes: what is written goes to its stdin, what
// it prints is read. Closing it kills the process.
type commandConn struct {
	cmd    *exec.Cmd
	stdin  *os.File // the write end of the process's stdin
	stdout *os.File // the read end of its stdout
	stderr *tailBuffer
	// done is closed when the process has exited; exitErr is then how.
	done    chan struct{}
	exitErr error
	once    sync.Once
}

var _ net.Conn = (*commandConn)(nil)

// startCommandConn starts name args with its stdin and stdout as the connection. The pipes are
// the os package's, so that deadlines work on them.
func startCommandConn(ctx context.Context, name string, args ...string) (*commandConn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	c := &commandConn{cmd: exec.Command(name, args...), stdin: inW, stdout: outR, stderr: &tailBuffer{max: 4096}, done: make(chan struct{})}
	c.cmd.Stdin, c.cmd.Stdout, c.cmd.Stderr = inR, outW, c.stderr
	// A process group of its own: the terminal's Ctrl-C goes to iotbench, which still needs the
	// engine to remove its containers; the process ends when the connection is closed.
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A child that keeps stderr open (an ssh control master) must not hold Close up.
	c.cmd.WaitDelay = 2 * time.Second
	err = c.cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	go func() {
		c.exitErr = c.cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

// Read reads what the process prints. When it stops printing because it failed, the error says
// how, with the end of its stderr (ssh's "Connection refused", the remote shell's "docker: not
// found").
func (c *commandConn) Read(p []byte) (int, error) {
	n, err := c.stdout.Read(p)
	if errors.Is(err, io.EOF) {
		select {
		case <-c.done:
		case <-time.After(2 * time.Second):
			return n, err
		}
		if c.exitErr != nil {
			return n, c.failure()
		}
	}
	return n, err
}

// failure says how the process ended.
func (c *commandConn) failure() error {
	msg := strings.TrimSpace(c.stderr.String())
	if msg == "" {
		return fmt.Errorf("%s: %v", strings.Join(c.cmd.Args, " "), c.exitErr)
	}
	return fmt.Errorf("%s: %v: %s", strings.Join(c.cmd.Args, " "), c.exitErr, msg)
}

func (c *commandConn) Write(p []byte) (int, error) {
	n, err := c.stdin.Write(p)
	if err != nil && errors.Is(err, syscall.EPIPE) {
		select {
		case <-c.done:
			if c.exitErr != nil {
				return n, c.failure()
			}
		case <-time.After(2 * time.Second):
		}
	}
	return n, err
}

// CloseWrite closes the process's stdin: the half-close of a hijacked connection.
func (c *commandConn) CloseWrite() error { return c.stdin.Close() }

// Close ends the process and releases the pipes.
func (c *commandConn) Close() error {
	c.once.Do(func() {
		c.stdin.Close()
		c.cmd.Process.Kill()
		<-c.done
		c.stdout.Close()
	})
	return nil
}

func (c *commandConn) LocalAddr() net.Addr  { return commandAddr{} }
func (c *commandConn) RemoteAddr() net.Addr { return commandAddr{} }

func (c *commandConn) SetDeadline(t time.Time) error {
	if err := c.stdout.SetReadDeadline(t); err != nil {
		return err
	}
	return c.stdin.SetWriteDeadline(t)
}
func (c *commandConn) SetReadDeadline(t time.Time) error  { return c.stdout.SetReadDeadline(t) }
func (c *commandConn) SetWriteDeadline(t time.Time) error { return c.stdin.SetWriteDeadline(t) }

// commandAddr is the address of either end of a commandConn: there is none.
type commandAddr struct{}

func (commandAddr) Network() string { return "command" }
func (commandAddr) String() string  { return "command" }

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if over := len(t.b) - t.max; over > 0 {
		t.b = t.b[over:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
