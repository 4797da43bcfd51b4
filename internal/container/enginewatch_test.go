package container

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// restartingEngine serves enough of the Docker API on a unix socket to watch and examine one
// container: the event stream, held open until goDown closes it as an engine going down does,
// and the container's state.
type restartingEngine struct {
	host    string
	goDown  func()
	running bool
}

func newRestartingEngine(t *testing.T, running bool) *restartingEngine {
	t.Helper()
	e := &restartingEngine{running: running}
	sock := filepath.Join(t.TempDir(), "docker.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	down := make(chan struct{})
	var once sync.Once
	e.goDown = func() { once.Do(func() { close(down) }) }
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/_ping"):
			w.Header().Set("Api-Version", "1.41")
			io.WriteString(w, "OK")
		case strings.HasSuffix(r.URL.Path, "/events"):
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			select {
			case <-down: // the engine's API server closes every connection
				if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
					c.Close()
				}
			case <-r.Context().Done():
			}
		case strings.HasSuffix(r.URL.Path, "/containers/c1/json"):
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"Id":"c1","State":{"Running":%v,"ExitCode":0,"FinishedAt":"2026-01-02T03:04:05.6Z"}}`, e.running)
		default:
			http.NotFound(w, r)
		}
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	e.host = "unix://" + sock
	return e
}

// TestAContainerStoppedWithItsEngineIsNamed: a container found stopped after the engine's event
// stream broke was stopped by the engine; one that stopped while the stream held, or that still
// runs after it broke (an engine with live-restore), was not.
func TestAContainerStoppedWithItsEngineIsNamed(t *testing.T) {
	cases := []struct {
		name           string
		running        bool
		engineGoesDown bool
		removedFirst   bool
		want           bool
	}{
		{"the engine restarted and stopped it", false, true, false, true},
		{"the target exited by itself", false, false, false, false},
		{"the engine restarted, the container runs on", true, true, false, false},
		{"the stream closed by iotbench", false, false, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newRestartingEngine(t, c.running)
			t.Setenv("DOCKER_HOST", e.host)
			d, err := Connect(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			inst := &dockerInstance{d: d, id: "c1", watch: d.watchEngine("c1")}
			if c.removedFirst {
				inst.watch.close()
			}
			if c.engineGoesDown {
				e.goDown()
				for deadline := time.Now().Add(time.Minute); !inst.watch.engineLost(); time.Sleep(10 * time.Millisecond) {
					if time.Now().After(deadline) {
						t.Fatal("the broken stream was not noticed within a minute")
					}
				}
			}
			f, err := inst.Fate(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if f.EngineRestarted != c.want || f.Running != c.running {
				t.Errorf("fate %+v, want EngineRestarted %v", f, c.want)
			}
			inst.watch.close()
		})
	}
}
