package verify

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/protocol"
	"github.com/iotbench/iotbench/internal/tlscert"
)

// protoServer answers GET /health as the contract wants, in whatever protocol the listener has;
// serve sets it up (TLS with ALPN next, or clear text with the protocols given).
func protoServer(t *testing.T, set *tlscert.Set, next []string, clear *http.Protocols) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"status":"UP"}`)
	}))
	if next == nil {
		srv.Config.Protocols = clear
		srv.Start()
	} else {
		cert, err := tls.LoadX509KeyPair(filepath.Join(set.Dir, tlscert.CertFile), filepath.Join(set.Dir, tlscert.KeyFile))
		if err != nil {
			t.Fatal(err)
		}
		srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: next}
		srv.EnableHTTP2 = len(next) > 1
		srv.StartTLS()
	}
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestRunOverEachProtocol(t *testing.T) {
	set, err := tlscert.New(filepath.Join(t.TempDir(), "tls"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	up := []Case{{Name: "health", Method: http.MethodGet, Path: "/health", Status: 200, Expect: fields(map[string]any{"status": "UP"})}}
	var h1, h2c http.Protocols
	h1.SetHTTP1(true)
	h2c.SetUnencryptedHTTP2(true)
	h2c.SetHTTP1(true)
	cases := []struct {
		name     string
		protocol protocol.Protocol
		url      string
		wantErr  string
	}{
		{"https", protocol.HTTPS, protoServer(t, set, []string{"http/1.1"}, nil), ""},
		{"h2 by ALPN", protocol.H2, protoServer(t, set, []string{"h2", "http/1.1"}, nil), ""},
		{"h2 where ALPN offers HTTP/1.1 alone", protocol.H2, protoServer(t, set, []string{"http/1.1"}, nil), "no application protocol"},
		{"h2c with prior knowledge", protocol.H2C, protoServer(t, nil, nil, &h2c), ""},
		{"h2c where the server speaks HTTP/1.1 alone", protocol.H2C, protoServer(t, nil, nil, &h1), "health"},
		{"https on a clear-text port", protocol.HTTPS, strings.Replace(protoServer(t, nil, nil, &h1), "http:", "https:", 1), "health"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := RunOver(context.Background(), c.url, c.protocol, set, up)
			if err != nil {
				t.Fatal(err)
			}
			got := res[0].Err
			if c.wantErr == "" && got != nil {
				t.Fatalf("failed: %v", got)
			}
			if c.wantErr != "" && (got == nil || !strings.Contains(got.Error(), c.wantErr)) {
				t.Fatalf("%v, want a failure saying %q", got, c.wantErr)
			}
		})
	}
	if _, err := RunOver(context.Background(), "https://127.0.0.1:1", "h3", set, up); err == nil {
		t.Error("RunOver accepted h3")
	}
}
