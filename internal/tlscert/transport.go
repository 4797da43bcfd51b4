package tlscert

import (
	"crypto/tls"
	"fmt"
	"net/http"

	"github.com/iotbench/iotbench/internal/protocol"
)

// Transport is an HTTP client transport that speaks only p: HTTP/1.1 (clear or over TLS), or
// HTTP/2 (over TLS by ALPN, or in clear text with prior knowledge), over TLS trusting s's CA
// alone (protocol.ClientTLS). s may be nil for the clear text protocols.
func Transport(p protocol.Protocol, s *Set) (*http.Transport, error) {
	if err := protocol.Check(p); err != nil {
		return nil, err
	}
	p = p.Or()
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil // targets are on loopback; a proxy from the environment is not ours
	var ps http.Protocols
	switch p {
	case protocol.HTTP1, protocol.HTTPS:
		ps.SetHTTP1(true)
	case protocol.H2:
		ps.SetHTTP2(true)
	case protocol.H2C:
		ps.SetUnencryptedHTTP2(true)
	}
	t.Protocols = &ps
	if p.TLS() {
		if s == nil {
			return nil, fmt.Errorf("protocol %s needs the run's certificates", p)
		}
		// net/http names the server by the URL's host; no session cache: every handshake is full.
		t.TLSClientConfig = protocol.ClientTLS(&tls.Config{RootCAs: s.Pool}, p, nil, "")
	}
	return t, nil
}
