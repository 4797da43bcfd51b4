package protocol

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/iotbench/iotbench/internal/golden"
)

func TestCheck(t *testing.T) {
	var b strings.Builder
	for _, p := range []Protocol{"", HTTP1, HTTPS, H2, H2C, "h3", "http3", "spdy", "HTTP1"} {
		fmt.Fprintf(&b, "%q: %v\n", p, Check(p))
	}
	golden.Check(t, "testdata/check.golden", []byte(b.String()))
}

func TestProperties(t *testing.T) {
	for _, c := range []struct {
		p          Protocol
		or         Protocol
		tls, http2 bool
		scheme     string
	}{
		{"", HTTP1, false, false, "http"},
		{HTTP1, HTTP1, false, false, "http"},
		{HTTPS, HTTPS, true, false, "https"},
		{H2, H2, true, true, "https"},
		{H2C, H2C, false, true, "http"},
	} {
		if c.p.Or() != c.or || c.p.TLS() != c.tls || c.p.HTTP2() != c.http2 || c.p.Scheme() != c.scheme {
			t.Errorf("%q: Or %s TLS %v HTTP2 %v Scheme %s, want %s %v %v %s", c.p, c.p.Or(), c.p.TLS(), c.p.HTTP2(), c.p.Scheme(), c.or, c.tls, c.http2, c.scheme)
		}
	}
	if !slices.Equal(All, []Protocol{HTTP1, HTTPS, H2, H2C}) {
		t.Errorf("All = %v, want http1 (the default) first", All)
	}
}

func TestClientTLS(t *testing.T) {
	roots := x509.NewCertPool()
	sessions := tls.NewLRUClientSessionCache(4)
	for _, c := range []struct {
		name       string
		base       *tls.Config
		p          Protocol
		sessions   tls.ClientSessionCache
		serverName string
		wantALPN   string
		wantName   string
	}{
		{"https", &tls.Config{RootCAs: roots}, HTTPS, nil, "", "http/1.1", ""},
		{"h2 offers h2 alone", &tls.Config{RootCAs: roots}, H2, nil, "", "h2", ""},
		{"resumed, named by its host", &tls.Config{RootCAs: roots}, HTTPS, sessions, "127.0.0.1", "http/1.1", "127.0.0.1"},
		{"base's name kept, base's sessions dropped", &tls.Config{RootCAs: roots, ServerName: "target", ClientSessionCache: sessions}, H2, nil, "127.0.0.1", "h2", "target"},
		{"no base", nil, HTTPS, nil, "", "http/1.1", ""},
	} {
		got := ClientTLS(c.base, c.p, c.sessions, c.serverName)
		switch {
		case got == c.base:
			t.Errorf("%s: base itself returned, want a copy", c.name)
		case got.MinVersion != tls.VersionTLS13:
			t.Errorf("%s: min version %x, want TLS 1.3", c.name, got.MinVersion)
		case !slices.Equal(got.NextProtos, []string{c.wantALPN}):
			t.Errorf("%s: ALPN %v, want %s alone", c.name, got.NextProtos, c.wantALPN)
		case got.ClientSessionCache != c.sessions:
			t.Errorf("%s: session cache %v, want %v", c.name, got.ClientSessionCache, c.sessions)
		case got.ServerName != c.wantName:
			t.Errorf("%s: server name %q, want %q", c.name, got.ServerName, c.wantName)
		case c.base != nil && got.RootCAs != c.base.RootCAs:
			t.Errorf("%s: the base's CAs were not kept", c.name)
		case c.base != nil && (c.base.MinVersion != 0 || c.base.NextProtos != nil):
			t.Errorf("%s: base changed: %+v", c.name, c.base)
		}
	}
}

func TestClientTLSRefusesBelow13(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.TLS = &tls.Config{MaxVersion: tls.VersionTLS12}
	srv.StartTLS()
	defer srv.Close()
	base := srv.Client().Transport.(*http.Transport).TLSClientConfig // trusts the server's certificate
	c, err := tls.Dial("tcp", srv.Listener.Addr().String(), ClientTLS(base, HTTPS, nil, "example.com"))
	if err == nil {
		c.Close()
		t.Fatal("a TLS 1.2 server was accepted")
	}
	if !strings.Contains(err.Error(), "version") {
		t.Errorf("refused for %v, want for its version", err)
	}
}

func TestAddr(t *testing.T) {
	for _, c := range []struct{ url, want string }{
		{"http://127.0.0.1:8080/ingest", "127.0.0.1:8080"},
		{"http://localhost/", "localhost:80"},
		{"https://localhost/x", "localhost:443"},
		{"http://[::1]/", "[::1]:80"},
		{"https://[::1]:8443", "[::1]:8443"},
	} {
		u, err := url.Parse(c.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := Addr(u); got != c.want {
			t.Errorf("Addr(%s) = %s, want %s", c.url, got, c.want)
		}
	}
}
