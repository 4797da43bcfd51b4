package load

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/iotbench/iotbench/internal/protocol"
	vegeta "github.com/tsenart/vegeta/v12/lib"
	"golang.org/x/net/http/httpguts"
)

// wireRequest is a target written out as the bytes of an HTTP/1.1 request, once: every request
// to the same target is a write of the same bytes.
type wireRequest struct {
	target     vegeta.Target // what the bytes say, to tell whether the next target is the same
	bytes      []byte
	addr       string // host:port to connect to
	head       bool   // a HEAD request: its answer has no body
	replayable bool   // may be sent again when a reused connection turns out closed
	kind       int    // the request's kind in a mix (Config.Kinds); 0 otherwise
	h2block    []byte // its HTTP/2 header block (h2.go), when the engine speaks HTTP/2
}

// userAgent names the engine to the servers it loads, unless the request names another.
const userAgent = "iotbench"

// encodeRequest writes t out as an HTTP/1.1 request for a keep-alive connection, over TLS for
// an https:// URL (the attacker's TLS configuration says how).
func encodeRequest(t *vegeta.Target) (*wireRequest, error) {
	u, err := url.Parse(t.URL)
	if err != nil {
		return nil, fmt.Errorf("target URL %q: %v", t.URL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("target URL %q: the load engine sends HTTP/1.1 to http://host:port/path or https://host:port/path", t.URL)
	}
	method := t.Method
	if method == "" {
		method = http.MethodGet
	}
	if !httpguts.ValidHeaderFieldName(method) {
		return nil, fmt.Errorf("target %s: invalid method %q", t.URL, method)
	}
	host := u.Host
	if h := t.Header.Get("Host"); h != "" {
		host = h
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, u.RequestURI(), host)
	names := make([]string, 0, len(t.Header))
	for name := range t.Header {
		names = append(names, name)
	}
	slices.Sort(names) // the same bytes every time, as net/http writes them
	hasAgent := false
	for _, name := range names {
		canonical := http.CanonicalHeaderKey(name)
		switch canonical {
		case "Host", "Content-Length", "Transfer-Encoding", "Connection":
			continue // the engine's own framing
		case "User-Agent":
			hasAgent = true
		}
		if !httpguts.ValidHeaderFieldName(name) {
			return nil, fmt.Errorf("target header %q: invalid name", name)
		}
		for _, v := range t.Header[name] {
			if !httpguts.ValidHeaderFieldValue(v) {
				return nil, fmt.Errorf("target header %s: invalid value %q", name, v)
			}
			fmt.Fprintf(&b, "%s: %s\r\n", canonical, v)
		}
	}
	if !hasAgent {
		b.WriteString("User-Agent: " + userAgent + "\r\n")
	}
	// A request with a body says its length; so does one whose method expects a body.
	switch {
	case len(t.Body) > 0, method == http.MethodPost, method == http.MethodPut, method == http.MethodPatch:
		b.WriteString("Content-Length: " + strconv.Itoa(len(t.Body)) + "\r\n")
	}
	b.WriteString("\r\n")
	b.Write(t.Body)

	_, key := t.Header["Idempotency-Key"]
	_, xkey := t.Header["X-Idempotency-Key"]
	w := &wireRequest{
		target: *t,
		bytes:  b.Bytes(),
		addr:   protocol.Addr(u),
		head:   method == http.MethodHead,
		// net/http's rule: methods that do nothing twice, or a request that says so.
		replayable: method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions || method == http.MethodTrace || key || xkey,
	}
	return w, nil
}

// sameTarget tells whether t is the target w was written from, cheaply: the engine's targeter
// hands out the same target every time, with the same body and header values.
func (w *wireRequest) sameTarget(t *vegeta.Target) bool {
	o := &w.target
	if t.Method != o.Method || t.URL != o.URL || len(t.Body) != len(o.Body) || len(t.Header) != len(o.Header) {
		return false
	}
	if len(t.Body) > 0 && &t.Body[0] != &o.Body[0] && !bytes.Equal(t.Body, o.Body) {
		return false
	}
	for name, values := range t.Header {
		if !slices.Equal(values, o.Header[name]) {
			return false
		}
	}
	return true
}
