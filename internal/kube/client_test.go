package kube

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/websocket"
)

// fakeAPI is an API server of a few objects kept by path, with a pod whose attach echoes its
// input to its output and ends as exit says.
type fakeAPI struct {
	mu      sync.Mutex
	objects map[string]Object
	calls   []string
	// exit is the Status the attached process ends with; empty: none sent.
	exit string
}

func (f *fakeAPI) server(t *testing.T) *Client {
	f.objects = map[string]Object{}
	mux := http.NewServeMux()
	mux.Handle("/api/v1/namespaces/ns/pods/p/attach", websocket.Server{
		Handshake: func(c *websocket.Config, r *http.Request) error {
			if r.Header.Get("Authorization") != "Bearer secret" {
				return io.ErrUnexpectedEOF
			}
			c.Protocol = []string{attachProtocol}
			return nil
		},
		Handler: func(ws *websocket.Conn) {
			for {
				var msg []byte
				if err := websocket.Message.Receive(ws, &msg); err != nil {
					return
				}
				if msg[0] == streamClose {
					break
				}
				websocket.Message.Send(ws, append([]byte{streamOut}, msg[1:]...))
			}
			websocket.Message.Send(ws, []byte{streamErr, 'o', 'o', 'p', 's'})
			if f.exit != "" {
				websocket.Message.Send(ws, append([]byte{streamStatus}, f.exit...))
			}
			ws.Close()
		},
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.calls = append(f.calls, r.Method+" "+r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		switch r.Method {
		case http.MethodPost:
			var o Object
			json.NewDecoder(r.Body).Decode(&o)
			name := o["metadata"].(map[string]any)["name"].(string)
			key := r.URL.Path + "/" + name
			if _, ok := f.objects[key]; ok {
				w.WriteHeader(http.StatusConflict)
				json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "reason": "AlreadyExists", "message": name + " already exists"})
				return
			}
			f.objects[key] = o
			json.NewEncoder(w).Encode(o)
		case http.MethodGet, http.MethodDelete:
			o, ok := f.objects[r.URL.Path]
			if !ok {
				w.WriteHeader(http.StatusNotFound)
				json.NewEncoder(w).Encode(map[string]any{"kind": "Status", "reason": "NotFound", "message": "not found"})
				return
			}
			if r.Method == http.MethodDelete {
				delete(f.objects, r.URL.Path)
			}
			json.NewEncoder(w).Encode(o)
		}
	})
	s := httptest.NewTLSServer(mux)
	t.Cleanup(s.Close)
	pool := s.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	return NewClient(Config{Context: "test", Server: s.URL, Token: "secret", TLS: &tls.Config{RootCAs: pool}})
}

func TestClientCreatesReadsAndDeletes(t *testing.T) {
	f := &fakeAPI{}
	c := f.server(t)
	ctx := context.Background()
	job := Object{"apiVersion": "batch/v1", "kind": "Job", "metadata": Object{"name": "j", "namespace": "ns"}}
	if err := c.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, job); !Conflict(err) || !strings.Contains(err.Error(), "j already exists") {
		t.Errorf("creating it again: %v, want a conflict naming it", err)
	}
	var got struct{ Kind string }
	if err := c.Get(ctx, "Job", "ns", "j", &got); err != nil || got.Kind != "Job" {
		t.Errorf("reading it: %v %+v", err, got)
	}
	if err := c.Delete(ctx, "Job", "ns", "j"); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, "Job", "ns", "j"); err != nil {
		t.Errorf("deleting what is gone: %v, want no error", err)
	}
	if err := c.Get(ctx, "Job", "ns", "j", &got); !NotFound(err) {
		t.Errorf("reading what is gone: %v, want not found", err)
	}
	want := "POST /apis/batch/v1/namespaces/ns/jobs,POST /apis/batch/v1/namespaces/ns/jobs,GET /apis/batch/v1/namespaces/ns/jobs/j," +
		"DELETE /apis/batch/v1/namespaces/ns/jobs/j,DELETE /apis/batch/v1/namespaces/ns/jobs/j,GET /apis/batch/v1/namespaces/ns/jobs/j"
	if g := strings.Join(f.calls, ","); g != want {
		t.Errorf("calls\n%s\nwant\n%s", g, want)
	}
	if _, err := Path("Deployment", "ns", ""); err == nil {
		t.Error("a kind without a known path accepted")
	}
}

func TestAttachCarriesTheStreamsAndTheEnd(t *testing.T) {
	for _, tc := range []struct {
		name, exit, wantErr string
	}{
		{"no status", "", ""},
		{"success", `{"status":"Success"}`, ""},
		{"failure", `{"status":"Failure","message":"command terminated with non-zero exit code: exit status 2"}`, "exit status 2: oops"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeAPI{exit: tc.exit}
			c := f.server(t)
			a, err := c.Attach(context.Background(), "ns", "p", "shard")
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range []string{"first\n", "second\n"} {
				if _, err := io.WriteString(a.In, line); err != nil {
					t.Fatal(err)
				}
			}
			if err := a.In.Close(); err != nil {
				t.Fatal(err)
			}
			out, err := io.ReadAll(a.Out)
			if tc.wantErr == "" && err != nil {
				t.Fatal(err)
			}
			if string(out) != "first\nsecond\n" {
				t.Errorf("output %q", out)
			}
			err = a.Wait()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("end: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("end: %v, want %q", err, tc.wantErr)
			}
			if _, err := a.In.Write([]byte("late")); err == nil {
				t.Error("writing after the input was closed: no error")
			}
		})
	}
}

func TestAttachRefusesAnotherProtocol(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("/", websocket.Server{
		Handshake: func(c *websocket.Config, r *http.Request) error {
			c.Protocol = []string{"v4.channel.k8s.io"}
			return nil
		},
		Handler: func(ws *websocket.Conn) { ws.Close() },
	})
	s := httptest.NewServer(mux)
	defer s.Close()
	c := NewClient(Config{Context: "test", Server: s.URL, TLS: &tls.Config{}})
	if _, err := c.Attach(context.Background(), "ns", "p", "shard"); err == nil || !strings.Contains(err.Error(), "speaks [v4.channel.k8s.io], not v5.channel.k8s.io (Kubernetes 1.30 or later needed)") {
		t.Errorf("an API server without %s: %v", attachProtocol, err)
	}
}

// TestAttachEndsWithItsContext: a shard still measuring when its run is interrupted is left to
// its pod's end; the attach returns at once.
func TestAttachEndsWithItsContext(t *testing.T) {
	f := &fakeAPI{}
	c := f.server(t)
	ctx, cancel := context.WithCancel(context.Background())
	a, err := c.Attach(ctx, "ns", "p", "shard")
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(a.In, "still measuring\n")
	buf := make([]byte, 16)
	if _, err := io.ReadFull(a.Out, buf); err != nil {
		t.Fatal(err)
	}
	cancel() // the input is never closed: the fake process would never end
	if err := a.Wait(); err != context.Canceled {
		t.Errorf("Wait after the context ended: %v, want %v", err, context.Canceled)
	}
}
