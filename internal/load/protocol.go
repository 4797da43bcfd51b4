package load

import (
	"crypto/tls"
	"fmt"
	"net/url"
)

// Protocol is what the engine speaks to a target: HTTP/1.1 in plaintext (HTTP1) or over TLS
// (HTTPS), HTTP/2 over TLS by ALPN (H2) or in plaintext with prior knowledge (H2C).
type Protocol string

const (
	HTTP1 Protocol = "http1"
	HTTPS Protocol = "https"
	H2    Protocol = "h2"
	H2C   Protocol = "h2c"
)

// Protocols are the protocols the engine speaks, the default first.
var Protocols = []Protocol{HTTP1, HTTPS, H2, H2C}

// CheckProtocol refuses a protocol the engine does not speak; empty is HTTP1.
func CheckProtocol(p Protocol) error {
	switch p {
	case "", HTTP1, HTTPS, H2, H2C:
		return nil
	case "h3", "http3":
		return fmt.Errorf("protocol %q: HTTP/3 is not supported; use http1, https, h2 or h2c", p)
	}
	return fmt.Errorf("unknown protocol %q; use http1, https, h2 or h2c", p)
}

// Or is p, HTTP1 when empty.
func (p Protocol) Or() Protocol {
	if p == "" {
		return HTTP1
	}
	return p
}

// TLS says whether p runs over TLS.
func (p Protocol) TLS() bool { return p == HTTPS || p == H2 }

// Scheme is the URL scheme of p's URLs.
func (p Protocol) Scheme() string {
	if p.TLS() {
		return "https"
	}
	return "http"
}

// HTTP2 says whether p is HTTP/2.
func (p Protocol) HTTP2() bool { return p == H2 || p == H2C }

// MaxStreams bounds an h2 connection's concurrent streams (Request.Streams).
const MaxStreams = 1000

// checkRequest holds a request's protocol, URL and TLS settings together.
func checkRequest(r Request) error {
	if err := CheckProtocol(r.Protocol); err != nil {
		return err
	}
	p := r.Protocol.Or()
	u, err := url.Parse(r.URL)
	if err != nil {
		return fmt.Errorf("invalid URL %q: %v", r.URL, err)
	}
	switch {
	case u.Scheme != p.Scheme():
		return fmt.Errorf("URL %q: protocol %s speaks to %s:// URLs", r.URL, p, p.Scheme())
	case p.TLS() && r.TLS == nil:
		return fmt.Errorf("URL %q: %s needs the run's CA (the request's TLS configuration)", r.URL, p)
	case !p.TLS() && (r.TLS != nil || r.Resume):
		return fmt.Errorf("protocol %s is plaintext: no TLS settings (use https or h2)", p)
	case r.Streams < 0 || r.Streams > MaxStreams:
		return fmt.Errorf("%d streams per connection: give 1 to %d", r.Streams, MaxStreams)
	case r.Streams > 0 && !p.HTTP2():
		return fmt.Errorf("streams per connection are HTTP/2's (protocol h2 or h2c), not %s's", p)
	}
	return nil
}

// clientTLS is the configuration the engine's handshakes use: base's (the run's CA) at TLS 1.3,
// with p by ALPN, keeping session tickets when resume is set (else every handshake is full),
// its server name host unless base names one.
func clientTLS(base *tls.Config, p Protocol, resume bool, host string) *tls.Config {
	c := base.Clone()
	c.MinVersion = tls.VersionTLS13
	c.NextProtos = []string{"http/1.1"}
	if p == H2 {
		c.NextProtos = []string{"h2"}
	}
	c.ClientSessionCache = nil
	if resume {
		c.ClientSessionCache = tls.NewLRUClientSessionCache(MaxInFlight)
	}
	if c.ServerName == "" {
		c.ServerName = host
	}
	return c
}
