package container

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// hungEngine serves the Docker API on a unix socket: it answers the ping, and nothing else until
// the client gives up. It returns the DOCKER_HOST that reaches it.
func hungEngine(t *testing.T) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "docker.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/_ping") {
			w.Header().Set("Api-Version", "1.41")
			io.WriteString(w, "OK")
			return
		}
		<-r.Context().Done() // hung: never answers
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return "unix://" + sock
}

// TestHungEngineNeverHangsIotbench: every call to an engine that stops answering ends at its
// deadline with an error.
func TestHungEngineNeverHangsIotbench(t *testing.T) {
	t.Setenv("DOCKER_HOST", hungEngine(t))
	defer func(call, build time.Duration) { callTimeout, buildTimeout = call, build }(callTimeout, buildTimeout)
	callTimeout, buildTimeout = 100*time.Millisecond, 200*time.Millisecond
	d, err := Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM debian:trixie\n"), 0o644)
	calls := []struct {
		name string
		call func() error
	}{
		{"build", func() error {
			_, err := d.Build(context.Background(), BuildSpec{Context: dir, Dockerfile: "Dockerfile"}, io.Discard)
			return err
		}},
		{"start", func() error {
			_, err := d.Start(context.Background(), Spec{Target: "hung", Image: "unused", Port: freePort(t), Health: "/health", StartupTimeout: time.Second})
			return err
		}},
		{"list", func() error { _, err := d.Containers(context.Background()); return err }},
		{"remove leftovers", func() error { _, err := d.RemoveLeftovers(context.Background(), Cleanup{}); return err }},
		{"remove", func() error { return d.removeContainer(context.Background(), "some-id") }},
		{"remove mine", func() error { _, err := RemoveMine(context.Background()); return err }},
	}
	for _, c := range calls {
		done := make(chan error, 1)
		go func() { done <- c.call() }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "deadline exceeded") {
				t.Errorf("%s: %v, want the deadline named", c.name, err)
			}
		case <-time.After(time.Minute): // a bound for the test, far above the deadlines it checks
			t.Fatalf("%s: no answer from iotbench a minute after its deadline", c.name)
		}
	}
	if v := d.Version(context.Background()); v != "unknown" {
		t.Errorf("version %q from a hung engine", v)
	}
}
