package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/websocket"
)

// An attach is a container's standard streams over one WebSocket, as the API server serves them
// (protocol v5.channel.k8s.io, Kubernetes 1.30 and later): each message's first byte is its
// stream (0 in, 1 out, 2 errors, 3 the process's end as a Status), and 255 then a stream closes
// that stream, which is how the container's standard input reaches its end.
const attachProtocol = "v5.channel.k8s.io"

const (
	streamIn     = 0
	streamOut    = 1
	streamErr    = 2
	streamStatus = 3
	streamClose  = 255
)

// Attached is a container's standard streams: In writes to its input (Close ends it), Out reads
// its output, and Wait returns once the stream ends, with the container's failure when it failed.
type Attached struct {
	In   io.WriteCloser
	Out  io.Reader
	Wait func() error
}

// Attach attaches to container of pod name in ns, which must have been started with stdin
// (stdinOnce: the input ends when this attach closes it).
func (c *Client) Attach(ctx context.Context, ns, name, container string) (Attached, error) {
	p, _ := Path("Pod", ns, name)
	q := url.Values{"container": {container}, "stdin": {"true"}, "stdout": {"true"}, "stderr": {"true"}}
	u, err := url.Parse(c.cfg.Server + p + "/attach?" + q.Encode())
	if err != nil {
		return Attached{}, err
	}
	origin := *u
	switch u.Scheme {
	case "https":
		u.Scheme = "wss"
	default:
		u.Scheme = "ws"
	}
	wc, err := websocket.NewConfig(u.String(), origin.Scheme+"://"+origin.Host)
	if err != nil {
		return Attached{}, err
	}
	// v4 offered too: a server that answers with it, or with none, is refused below by name
	// (the client keeps the offered list when the server names none).
	wc.Protocol = []string{attachProtocol, "v4.channel.k8s.io"}
	wc.TlsConfig = c.cfg.TLS
	wc.Header = http.Header{}
	c.authorize(wc.Header)
	ws, err := wc.DialContext(ctx)
	if err != nil {
		return Attached{}, fmt.Errorf("attaching to pod %s/%s: %w", ns, name, err)
	}
	if got := ws.Config().Protocol; len(got) != 1 || got[0] != attachProtocol {
		ws.Close()
		return Attached{}, fmt.Errorf("attaching to pod %s/%s: the API server speaks %v, not %s (Kubernetes 1.30 or later needed)", ns, name, got, attachProtocol)
	}
	return attach(ctx, ws), nil
}

// attachGrace is how long an attach whose context ended waits for its process's own end.
const attachGrace = 2 * time.Second

// attach demultiplexes ws's streams; ctx's end closes them (the process is then the pod's
// to end: the attach no longer waits for it).
func attach(ctx context.Context, ws *websocket.Conn) Attached {
	outR, outW := io.Pipe()
	a := &attachment{ws: ws}
	done := make(chan struct{})
	var failed error
	// A phase that ended well closes its shards' input just before its context: the stream then
	// ends by itself as the shard exits, and is closed only if it has not within a grace.
	var cut atomic.Bool // closed here, before the process ended
	stop := context.AfterFunc(ctx, func() {
		select {
		case <-done:
		case <-time.After(attachGrace):
			cut.Store(true)
			ws.Close()
		}
	})
	go func() {
		defer close(done)
		defer stop()
		failed = a.read(outW)
		if cut.Load() {
			failed = ctx.Err()
		}
		outW.CloseWithError(failed)
	}()
	return Attached{
		In:  a,
		Out: outR,
		Wait: func() error {
			<-done
			ws.Close()
			return failed
		},
	}
}

type attachment struct {
	ws     *websocket.Conn
	mu     sync.Mutex
	closed bool
	// errs keeps the container's error output, for its failure.
	errs bytes.Buffer
}

// Write sends p to the container's standard input.
func (a *attachment) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return 0, io.ErrClosedPipe
	}
	msg := make([]byte, 1+len(p))
	msg[0] = streamIn
	copy(msg[1:], p)
	if err := websocket.Message.Send(a.ws, msg); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close ends the container's standard input.
func (a *attachment) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil
	}
	a.closed = true
	return websocket.Message.Send(a.ws, []byte{streamClose, streamIn})
}

// read copies the output stream to out until the stream ends: nil when the process ended well.
func (a *attachment) read(out io.Writer) error {
	var status []byte
	for {
		var msg []byte
		if err := websocket.Message.Receive(a.ws, &msg); err != nil {
			if err == io.EOF {
				return a.ended(status)
			}
			return fmt.Errorf("reading the attached streams: %w", err)
		}
		if len(msg) < 2 {
			continue // a stream's opening, with no data
		}
		switch msg[0] {
		case streamOut:
			if _, err := out.Write(msg[1:]); err != nil {
				return err
			}
		case streamErr:
			a.errs.Write(msg[1:])
			if n := a.errs.Len(); n > 64<<10 {
				a.errs.Next(n - 32<<10)
			}
		case streamStatus:
			status = append(status, msg[1:]...)
		}
	}
}

// ended is the process's end from its Status: nil for Success (or none sent).
func (a *attachment) ended(status []byte) error {
	if len(status) == 0 {
		return nil
	}
	var s struct{ Status, Message string }
	if err := json.Unmarshal(status, &s); err != nil {
		return fmt.Errorf("the attached process's end: %s", status)
	}
	if s.Status == "Success" {
		return nil
	}
	msg := s.Message
	if e := strings.TrimSpace(a.errs.String()); e != "" {
		msg += ": " + e
	}
	return fmt.Errorf("%s", msg)
}
