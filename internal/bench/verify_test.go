package bench

import (
	"cmp"
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/iotbench/iotbench/internal/container"
	"github.com/iotbench/iotbench/internal/protocol"
	"github.com/iotbench/iotbench/internal/tlscert"
	"github.com/iotbench/iotbench/internal/verify"
)

// protocolLifecycle serves each start in the protocol its spec asks for, as a target reading
// IOTBENCH_PROTOCOL and the mounted certificates would, but only those in serves: asked for
// another, it answers in clear HTTP/1.1 as a target ignoring the env would. With callsDownstream
// its every answer first calls DOWNSTREAM_URL as /enterprise does (docs/contract.md), by default
// its own /downstream in clear HTTP/1.1, and fails when the call does.
type protocolLifecycle struct {
	fakeLifecycle
	declared, serves []protocol.Protocol
	callsDownstream  bool
	specs            []container.Spec
}

func (f *protocolLifecycle) Protocols(context.Context, string) ([]protocol.Protocol, error) {
	return f.declared, nil
}

func (f *protocolLifecycle) Start(_ context.Context, s container.Spec) (container.Instance, error) {
	f.specs = append(f.specs, s)
	var srv *httptest.Server
	srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.callsDownstream && r.URL.Path != "/downstream" && r.URL.Path != "/health" {
			u := cmp.Or(s.Env["DOWNSTREAM_URL"], "http://"+srv.Listener.Addr().String()+"/downstream")
			resp, err := http.Get(u)
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			// Go's TLS server answers clear HTTP with a 400, not the downstream's JSON.
			if err != nil || resp.StatusCode != http.StatusOK {
				http.Error(w, `{"error":"fetch failed"}`, http.StatusInternalServerError)
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"status":"UP","id":1}`) // health's, and the answer planFor's cells check
	}))
	switch p := s.Protocol; {
	case !slices.Contains(f.serves, p) || p == protocol.HTTP1:
		srv.Start()
	case p == protocol.H2C:
		var ps http.Protocols
		ps.SetUnencryptedHTTP2(true)
		srv.Config.Protocols = &ps
		srv.Start()
	default:
		cert, err := tls.LoadX509KeyPair(filepath.Join(s.TLSDir, tlscert.CertFile), filepath.Join(s.TLSDir, tlscert.KeyFile))
		if err != nil {
			return nil, err
		}
		srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
		srv.EnableHTTP2 = p == protocol.H2
		srv.StartTLS()
	}
	return &fakeInstance{srv: srv, f: &f.fakeLifecycle}, nil
}

func TestVerifyOverEachDeclaredProtocol(t *testing.T) {
	health := []verify.Case{{Name: "health", Method: http.MethodGet, Path: "/health", Status: 200}}
	all := []protocol.Protocol{protocol.HTTP1, protocol.HTTPS, protocol.H2, protocol.H2C}
	for _, c := range []struct {
		name             string
		declared, serves []protocol.Protocol
		fails            bool
	}{
		{"serves all it declares", all, all, false},
		{"declares h2 it does not serve", all, []protocol.Protocol{protocol.HTTP1, protocol.HTTPS}, true},
		{"declares nothing: clear HTTP/1.1 alone", nil, nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &protocolLifecycle{declared: c.declared, serves: c.serves}
			if f.declared == nil {
				f.declared = []protocol.Protocol{protocol.HTTP1}
			}
			var log strings.Builder
			r := &Runner{Lifecycle: f, Log: &log}
			failed, err := r.Verify(context.Background(), planFor("t"), health, nil)
			if err != nil {
				t.Fatal(err)
			}
			if (len(failed) == 1) != c.fails {
				t.Fatalf("failed %v, want failing %v; log:\n%s", failed, c.fails, log.String())
			}
			if len(f.specs) != len(f.declared) || f.removed != len(f.declared) {
				t.Errorf("%d started, %d removed, want one each per declared protocol", len(f.specs), f.removed)
			}
			for i, s := range f.specs {
				if s.Protocol != f.declared[i] || (s.TLSDir != "") != s.Protocol.TLS() {
					t.Errorf("start %d: protocol %q, certificates %q", i, s.Protocol, s.TLSDir)
				}
				if (s.Env["DOWNSTREAM_URL"] != "") != (s.Protocol != protocol.HTTP1) {
					t.Errorf("start %d (%s): DOWNSTREAM_URL %q: want iotbench's own downstream service exactly when not http1", i, s.Protocol, s.Env["DOWNSTREAM_URL"])
				}
			}
		})
	}
}
