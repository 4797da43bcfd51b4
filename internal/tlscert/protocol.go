package tlscert

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// The protocols a target can be asked to serve (env EnvProtocol), one name each everywhere:
// scenarios, flags, results, the targets' own code.
const (
	HTTP1 = "http1" // HTTP/1.1 in clear text: a target's default
	HTTPS = "https" // HTTP/1.1 over TLS 1.3
	H2    = "h2"    // HTTP/2 over TLS 1.3, chosen by ALPN
	H2C   = "h2c"   // HTTP/2 in clear text, with prior knowledge
)

// Protocols are the protocols in the order verify checks them.
var Protocols = []string{HTTP1, HTTPS, H2, H2C}

// EnvProtocol tells a target which protocol to serve on its port; absent means HTTP1.
const EnvProtocol = "IOTBENCH_PROTOCOL"

// Check fails on a name that is not one of Protocols.
func Check(protocol string) error {
	if !slices.Contains(Protocols, protocol) {
		return fmt.Errorf("unknown protocol %q: want one of %s", protocol, strings.Join(Protocols, ", "))
	}
	return nil
}

// TLS says whether protocol runs over TLS (and so needs a Set).
func TLS(protocol string) bool { return protocol == HTTPS || protocol == H2 }

// Scheme is the URL scheme a client uses for protocol.
func Scheme(protocol string) string {
	if TLS(protocol) {
		return "https"
	}
	return "http"
}

// ClientConfig is the TLS configuration of iotbench's clients of a target: TLS 1.3 only, the run's
// CA alone trusted, ALPN offering exactly the protocol asked for.
func (s *Set) ClientConfig(protocol string) *tls.Config {
	next := []string{"http/1.1"}
	if protocol == H2 {
		next = []string{"h2"}
	}
	return &tls.Config{RootCAs: s.Pool, MinVersion: tls.VersionTLS13, NextProtos: next}
}

// Transport is an HTTP client transport that speaks only protocol: HTTP/1.1 (clear or over TLS),
// or HTTP/2 (over TLS by ALPN, or in clear text with prior knowledge). s may be nil for the clear
// text protocols.
func Transport(protocol string, s *Set) (*http.Transport, error) {
	if err := Check(protocol); err != nil {
		return nil, err
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil // targets are on loopback; a proxy from the environment is not ours
	var p http.Protocols
	switch protocol {
	case HTTP1, HTTPS:
		p.SetHTTP1(true)
	case H2:
		p.SetHTTP2(true)
	case H2C:
		p.SetUnencryptedHTTP2(true)
	}
	t.Protocols = &p
	if TLS(protocol) {
		if s == nil {
			return nil, fmt.Errorf("protocol %s needs the run's certificates", protocol)
		}
		t.TLSClientConfig = s.ClientConfig(protocol)
	}
	return t, nil
}
