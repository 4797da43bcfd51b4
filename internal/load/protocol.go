package load

import (
	"fmt"
	"net/url"

	"github.com/iotbench/iotbench/internal/protocol"
)

// MaxStreams bounds an h2 connection's concurrent streams (Request.Streams).
const MaxStreams = 1000

// checkRequest holds a request's protocol, URL and TLS settings together.
func checkRequest(r Request) error {
	if err := protocol.Check(r.Protocol); err != nil {
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
