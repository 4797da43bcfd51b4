// Package protocol names what iotbench speaks to a target: HTTP/1.1 in clear text (HTTP1) or over
// TLS (HTTPS), HTTP/2 over TLS by ALPN (H2) or in clear text with prior knowledge (H2C). One name
// each everywhere: scenarios, flags, results, image labels, the targets' own code (env Env). It
// also holds the one TLS configuration of iotbench's clients, the load engine's and verify's.
package protocol

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// Protocol is one of All; empty means HTTP1 wherever a protocol may be left out.
type Protocol string

const (
	HTTP1 Protocol = "http1" // HTTP/1.1 in clear text: a target's default
	HTTPS Protocol = "https" // HTTP/1.1 over TLS 1.3
	H2    Protocol = "h2"    // HTTP/2 over TLS 1.3, chosen by ALPN
	H2C   Protocol = "h2c"   // HTTP/2 in clear text, with prior knowledge
)

// All are the protocols iotbench speaks, the default first; verify checks them in this order.
var All = []Protocol{HTTP1, HTTPS, H2, H2C}

// Env tells a target which protocol to serve on its port; absent means HTTP1.
const Env = "IOTBENCH_PROTOCOL"

// Check refuses a protocol iotbench does not speak; empty is HTTP1.
func Check(p Protocol) error {
	switch p {
	case "", HTTP1, HTTPS, H2, H2C:
		return nil
	case "h3", "http3":
		return fmt.Errorf("protocol %q: HTTP/3 is not supported; use %s", p, names())
	}
	return fmt.Errorf("unknown protocol %q; use %s", p, names())
}

// names lists All as a sentence does: "http1, https, h2 or h2c".
func names() string {
	s := make([]string, len(All))
	for i, p := range All {
		s[i] = string(p)
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// Or is p, HTTP1 when empty.
func (p Protocol) Or() Protocol {
	if p == "" {
		return HTTP1
	}
	return p
}

// TLS says whether p runs over TLS (and so needs the run's certificates).
func (p Protocol) TLS() bool { return p == HTTPS || p == H2 }

// Scheme is the URL scheme of p's URLs.
func (p Protocol) Scheme() string {
	if p.TLS() {
		return "https"
	}
	return "http"
}

// Addr is the host:port u's connections go to: its port, or its scheme's (80, 443).
func Addr(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// HTTP2 says whether p is HTTP/2.
func (p Protocol) HTTP2() bool { return p == H2 || p == H2C }

// ClientTLS is the TLS configuration of a client speaking p to a target: a copy of base (whose
// RootCAs are the CAs trusted: the run's alone) at TLS 1.3 only, offering exactly p by ALPN.
// Handshakes resume sessions kept in sessions, or are all full when it is nil, whatever base
// holds. serverName is the name verified unless base names one; "" leaves it to the dialer
// (net/http takes the URL's host).
func ClientTLS(base *tls.Config, p Protocol, sessions tls.ClientSessionCache, serverName string) *tls.Config {
	c := &tls.Config{}
	if base != nil {
		c = base.Clone()
	}
	c.MinVersion = tls.VersionTLS13
	c.NextProtos = []string{"http/1.1"}
	if p == H2 {
		c.NextProtos = []string{"h2"}
	}
	c.ClientSessionCache = sessions
	if c.ServerName == "" {
		c.ServerName = serverName
	}
	return c
}
