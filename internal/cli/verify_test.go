package cli

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/iotbench/iotbench/internal/container"
	"github.com/iotbench/iotbench/internal/container/containertest"
	"github.com/iotbench/iotbench/internal/run"
)

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
	// Every target answers 500 to everything but its health check.
	e := &containertest.Engine{Handler: func(container.Spec) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/health" {
				io.WriteString(w, `{"status":"UP"}`)
				return
			}
			w.WriteHeader(http.StatusInternalServerError)
		})
	}}
	err := runVerify(context.Background(), &VerifyOptions{Streams: s, File: file, Payload: "../../payloads/iot-reading.json",
		Effects: run.Effects{Connect: func(context.Context, string, string, io.Writer) (run.Engine, error) { return e, nil }}})
	if !errors.Is(err, errInvalidCells) || out.String() != "2 of 2 target(s) fail the contract: a, b\n" {
		t.Errorf("err %v, out %q", err, out.String())
	}
	if started, removed := e.Counts(); started != 2 || removed != 2 {
		t.Errorf("started %d, removed %d", started, removed)
	}
}
