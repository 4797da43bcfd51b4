package tlscert

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/protocol"
)

func newSet(t *testing.T) *Set {
	t.Helper()
	s, err := New(filepath.Join(t.TempDir(), "tls"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	blk, rest := pem.Decode(b)
	if blk == nil || blk.Type != "CERTIFICATE" || len(strings.TrimSpace(string(rest))) != 0 {
		t.Fatalf("%s: want exactly one PEM certificate", path)
	}
	c, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestLeafChainsToTheRunsCAForLoopbackNamesOnly(t *testing.T) {
	s := newSet(t)
	leaf := readCert(t, filepath.Join(s.Dir, CertFile))
	for _, name := range []string{"localhost", "127.0.0.1", "::1"} {
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: s.Pool, DNSName: name}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: s.Pool, DNSName: "example.com"}); err == nil {
		t.Error("the leaf verifies for example.com: it must name loopback only")
	}
	// Another run's CA does not trust this run's leaf.
	other := newSet(t)
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: other.Pool, DNSName: "localhost"}); err == nil {
		t.Error("another run's CA trusts this run's leaf")
	}
	if leaf.PublicKeyAlgorithm != x509.ECDSA {
		t.Errorf("leaf key %v, want ECDSA", leaf.PublicKeyAlgorithm)
	}
	if life := leaf.NotAfter.Sub(leaf.NotBefore); life > Validity+time.Hour {
		t.Errorf("leaf valid for %v, want at most %v", life, Validity+time.Hour)
	}
	ca := readCert(t, filepath.Join(s.Dir, CAFile))
	if !ca.IsCA || !ca.MaxPathLenZero {
		t.Error("the CA may sign intermediates: want IsCA with path length 0")
	}
}

func TestNoCAKeyIsWritten(t *testing.T) {
	s := newSet(t)
	entries, err := os.ReadDir(s.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var keys int
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(s.Dir, e.Name()))
		keys += strings.Count(string(b), "PRIVATE KEY-----\n") / 2
	}
	if keys != 1 || len(entries) != 3 {
		t.Errorf("%d files holding %d private keys, want 3 files and the leaf's key alone", len(entries), keys)
	}
}

func TestLoadReadsTheSameCA(t *testing.T) {
	s := newSet(t)
	l, err := Load(s.Dir)
	if err != nil {
		t.Fatal(err)
	}
	leaf := readCert(t, filepath.Join(s.Dir, CertFile))
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: l.Pool, DNSName: "localhost"}); err != nil {
		t.Error(err)
	}
	if _, err := Load(t.TempDir()); err == nil {
		t.Error("Load of an empty folder succeeded")
	}
}

// server serves the Set's leaf on loopback with the given ALPN protocols, answering the request's
// protocol and TLS version.
func server(t *testing.T, s *Set, next []string) *httptest.Server {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(filepath.Join(s.Dir, CertFile), filepath.Join(s.Dir, KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Proto+" "+tls.VersionName(r.TLS.Version))
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: next}
	srv.EnableHTTP2 = len(next) > 1
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

func TestClientsSpeakExactlyTheirProtocol(t *testing.T) {
	s := newSet(t)
	srv := server(t, s, []string{"h2", "http/1.1"})
	for _, c := range []struct {
		protocol protocol.Protocol
		want     string
	}{
		{protocol.HTTPS, "HTTP/1.1 TLS 1.3"},
		{protocol.H2, "HTTP/2.0 TLS 1.3"},
	} {
		tr, err := Transport(c.protocol, s)
		if err != nil {
			t.Fatal(err)
		}
		res, err := (&http.Client{Transport: tr, Timeout: time.Minute}).Get(srv.URL)
		if err != nil {
			t.Fatalf("%s: %v", c.protocol, err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if string(b) != c.want {
			t.Errorf("%s: the server saw %q, want %q", c.protocol, b, c.want)
		}
		tr.CloseIdleConnections()
	}
}

func TestH2FailsOnAServerWithoutALPNH2(t *testing.T) {
	s := newSet(t)
	srv := server(t, s, []string{"http/1.1"})
	tr, _ := Transport(protocol.H2, s)
	if _, err := (&http.Client{Transport: tr, Timeout: time.Minute}).Get(srv.URL); err == nil {
		t.Error("h2 reached a server that does not offer h2 by ALPN")
	}
}

func TestTLSRefusesBelow13(t *testing.T) {
	s := newSet(t)
	cert, err := tls.LoadX509KeyPair(filepath.Join(s.Dir, CertFile), filepath.Join(s.Dir, KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, MaxVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.(*tls.Conn).Handshake()
			c.Close()
		}
	}()
	c, err := tls.Dial("tcp", ln.Addr().String(), protocol.ClientTLS(&tls.Config{RootCAs: s.Pool}, protocol.HTTPS, nil, ""))
	if err == nil {
		c.Close()
		t.Error("a TLS 1.2 server was accepted")
	}
}

func TestUntrustedServerIsRefused(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler()) // Go's own test certificate, not the run's
	defer srv.Close()
	tr, _ := Transport(protocol.HTTPS, newSet(t))
	if _, err := (&http.Client{Transport: tr, Timeout: time.Minute}).Get(srv.URL); err == nil {
		t.Error("a server with a certificate of another CA was trusted")
	}
}

func TestH2CWithPriorKnowledge(t *testing.T) {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Proto)
	}))
	srv.Config.Protocols = &p
	srv.Start()
	defer srv.Close()
	tr, err := Transport(protocol.H2C, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := (&http.Client{Transport: tr, Timeout: time.Minute}).Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if b, _ := io.ReadAll(res.Body); string(b) != "HTTP/2.0" {
		t.Errorf("the server saw %q, want HTTP/2.0", b)
	}
}

func TestTransportRefusesWhatItCannotSpeak(t *testing.T) {
	if _, err := Transport("h3", nil); err == nil || !strings.Contains(err.Error(), "use http1, https, h2 or h2c") {
		t.Errorf("h3: %v, want the known protocols named", err)
	}
	if _, err := Transport(protocol.HTTPS, nil); err == nil {
		t.Error("https without certificates succeeded")
	}
}
