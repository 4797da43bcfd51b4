package cli

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/iotbench/iotbench/internal/container"
	"github.com/iotbench/iotbench/internal/run"
)

// brokenEngine starts, for every target, an in-process server answering 500 to everything but
// its health check, and counts what it removes.
type brokenEngine struct{ started, removed int }

func (e *brokenEngine) Build(_ context.Context, b container.BuildSpec, _ io.Writer) (string, error) {
	return "sha256:" + b.Tag(), nil
}

func (e *brokenEngine) Start(context.Context, container.Spec) (container.Instance, error) {
	e.started++
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			io.WriteString(w, `{"status":"UP"}`)
			return
		}
		w.WriteHeader(http.StatusInternalServerError)
	}))
	return &brokenInstance{srv, e}, nil
}

type brokenInstance struct {
	srv *httptest.Server
	e   *brokenEngine
}

func (e *brokenEngine) Version(context.Context) string { return "fake" }
func (e *brokenEngine) Remote() string                 { return "" }
func (e *brokenEngine) Close() error                   { return nil }
func (e *brokenEngine) Facts(context.Context) (container.HostFacts, error) {
	return container.HostFacts{}, errors.New("not another host")
}

func (i *brokenInstance) URL() string                      { return i.srv.URL }
func (i *brokenInstance) Health() []byte                   { return []byte(`{"status":"UP"}`) }
func (i *brokenInstance) Logs(context.Context, int) string { return "" }
func (i *brokenInstance) Remove(context.Context) error     { i.srv.Close(); i.e.removed++; return nil }

func TestVerifyNamesTheTargetsThatFail(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "scenarios.yaml")
	os.MkdirAll(filepath.Join(dir, "t"), 0o755)
	os.WriteFile(filepath.Join(dir, "t", "Dockerfile"), []byte("FROM scratch\n"), 0o644)
	os.WriteFile(file, []byte(`targets:
  a: {build: t, port: 9001}
  b: {build: t, port: 9002}
scenarios:
  s: {request: {method: GET, path: /x}, load: {rate: 10}, targets: [a, b]}
`), 0o644)
	s, out, _ := streams()
	e := &brokenEngine{}
	err := runVerify(context.Background(), &VerifyOptions{Streams: s, File: file, Payload: "../../payloads/iot-reading.json",
		Effects: run.Effects{Connect: func(context.Context, string, string, io.Writer) (run.Engine, error) { return e, nil }}})
	if !errors.Is(err, errInvalidCells) || out.String() != "2 of 2 target(s) fail the contract: a, b\n" {
		t.Errorf("err %v, out %q", err, out.String())
	}
	if e.started != 2 || e.removed != 2 {
		t.Errorf("started %d, removed %d", e.started, e.removed)
	}
}
