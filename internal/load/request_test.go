package load

import (
	"bytes"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/iotbench/iotbench/internal/golden"
)

func goldenFile(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, filepath.Join("testdata", name), got)
}

// TestEncodeRequest pins the bytes the engine writes for a target, and what it refuses, in
// testdata/requests.golden.
func TestEncodeRequest(t *testing.T) {
	cases := []struct {
		name string
		t    vegeta.Target
	}{
		{"GET", vegeta.Target{Method: http.MethodGet, URL: "http://127.0.0.1:8080/ingest?x=1&y=2"}},
		{"POST with a body and headers", vegeta.Target{Method: http.MethodPost, URL: "http://localhost:3000/ingest", Body: []byte(`{"a":1}`),
			Header: http.Header{"Content-Type": {"application/json"}, "x-trace": {"a", "b"}, "Content-Length": {"99"}, "Connection": {"close"}}}},
		{"POST without a body", vegeta.Target{Method: http.MethodPost, URL: "http://127.0.0.1:1/"}},
		{"HEAD, a user agent and a host of its own", vegeta.Target{Method: http.MethodHead, URL: "http://127.0.0.1/", Header: http.Header{"User-Agent": {"k6"}, "Host": {"example.test"}}}},
		{"IPv6, no method", vegeta.Target{URL: "http://[::1]:9000/p"}},
		{"https, its port by default", vegeta.Target{Method: http.MethodGet, URL: "https://127.0.0.1/"}},
		{"ftp", vegeta.Target{Method: http.MethodGet, URL: "ftp://127.0.0.1/"}},
		{"no host", vegeta.Target{Method: http.MethodGet, URL: "/relative"}},
		{"bad method", vegeta.Target{Method: "GET /x", URL: "http://127.0.0.1/"}},
		{"header value with a newline", vegeta.Target{Method: http.MethodGet, URL: "http://127.0.0.1/", Header: http.Header{"X-A": {"a\r\nX-Injected: 1"}}}},
	}
	var out bytes.Buffer
	for _, c := range cases {
		fmt.Fprintf(&out, "=== %s\n", c.name)
		w, err := encodeRequest(&c.t)
		if err != nil {
			fmt.Fprintf(&out, "error: %v\n", err)
			continue
		}
		fmt.Fprintf(&out, "address %s, head %v, replayable %v\n%s\n", w.addr, w.head, w.replayable, w.bytes)
		if !w.sameTarget(&c.t) {
			t.Errorf("%s: not the same target as the one it was written from", c.name)
		}
		other := c.t
		other.Body = append([]byte(nil), c.t.Body...)
		if !w.sameTarget(&other) {
			t.Errorf("%s: a copy of its target is not the same target", c.name)
		}
		other.Header = http.Header{"X-Other": {"1"}}
		if w.sameTarget(&other) {
			t.Errorf("%s: the same target with other headers", c.name)
		}
	}
	goldenFile(t, "requests.golden", out.Bytes())
}
