// Package containertest is an engine for tests: every target it starts is an in-process HTTP
// server on loopback, so that a run, a verification or a bench is tested without Docker.
package containertest

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"

	"github.com/iotbench/iotbench/internal/container"
)

// Engine starts each target as a server of Handler (the target's spec given); it counts what it
// started and removed. It is a local engine: no other host, no host facts.
type Engine struct {
	Handler func(container.Spec) http.Handler

	mu               sync.Mutex
	started, removed int
}

var _ container.Lifecycle = (*Engine)(nil)

// Build builds nothing: the image id is the tag's.
func (e *Engine) Build(_ context.Context, b container.BuildSpec, _ io.Writer) (string, error) {
	return "sha256:" + b.Tag(), nil
}

// Start serves the target in process.
func (e *Engine) Start(_ context.Context, s container.Spec) (container.Instance, error) {
	e.mu.Lock()
	e.started++
	e.mu.Unlock()
	return &instance{httptest.NewServer(e.Handler(s)), e}, nil
}

// Counts are how many targets were started and removed so far.
func (e *Engine) Counts() (started, removed int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.started, e.removed
}

func (e *Engine) Version(context.Context) string { return "fake" }
func (e *Engine) Remote() string                 { return "" }
func (e *Engine) Close() error                   { return nil }
func (e *Engine) Facts(context.Context) (container.HostFacts, error) {
	return container.HostFacts{}, errors.New("not another host")
}

type instance struct {
	srv *httptest.Server
	e   *Engine
}

func (i *instance) URL() string                      { return i.srv.URL }
func (i *instance) Health() []byte                   { return []byte(`{"status":"UP"}`) }
func (i *instance) Logs(context.Context, int) string { return "" }
func (i *instance) Remove(context.Context) error {
	i.srv.Close()
	i.e.mu.Lock()
	i.e.removed++
	i.e.mu.Unlock()
	return nil
}
