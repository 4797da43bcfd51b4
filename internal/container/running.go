package container

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"time"

	"github.com/iotbench/iotbench/internal/protocol"
)

// Running is the Lifecycle of a service that already listens on loopback (iotbench run --url):
// nothing to build, start or remove. A Spec's Service, when set, is the service's base URL
// (a paired run's baseline and candidate are two services); BaseURL otherwise.
type Running struct {
	BaseURL string
}

var _ Lifecycle = Running{}

func (Running) Build(context.Context, BuildSpec, io.Writer) (string, error) { return "", nil }

// Start only checks that something accepts a connection at the service's address: a run
// against nothing stops there, saying so, instead of loading refusals.
func (r Running) Start(ctx context.Context, s Spec) (Instance, error) {
	if s.Service != "" {
		r.BaseURL = s.Service
	}
	u, err := url.Parse(r.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("service %s: %w", r.BaseURL, err)
	}
	addr := protocol.Addr(u)
	conn, err := (&net.Dialer{Timeout: serviceDialTimeout}).DialContext(ctx, "tcp", addr)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) {
			err = op.Err
		}
		return nil, fmt.Errorf("nothing accepts connections at %s (%v): start the service first, or give --url its address", addr, err)
	}
	conn.Close()
	return runningInstance(r), nil
}

// serviceDialTimeout bounds the check of a service's address: on loopback, an answer is
// immediate, and a silence this long is no service.
const serviceDialTimeout = 5 * time.Second

type runningInstance Running

func (i runningInstance) URL() string  { return i.BaseURL }
func (runningInstance) Health() []byte { return nil }

// Logs is empty: iotbench reads no log of a service it did not start.
func (runningInstance) Logs(context.Context, int) string { return "" }
func (runningInstance) Remove(context.Context) error     { return nil }
