package load

import (
	"errors"
	"strings"
	"testing"
)

// parsed is what a response made of an answer: as much as the attacker uses.
type parsed struct {
	code     int
	body     string
	close    bool
	complete bool
	consumed int
	err      error
}

// parseIn feeds raw to a response in the pieces given by cuts (offsets), then the end of the
// connection when eof is set, as the attacker does.
func parseIn(raw string, head bool, keep int, eof bool, cuts ...int) parsed {
	var r response
	r.keep = keep
	r.reset(head)
	var p parsed
	from := 0
	for _, to := range append(cuts, len(raw)) {
		if to < from || to > len(raw) {
			continue
		}
		n, err := r.feed([]byte(raw[from:to]))
		p.consumed += n
		if err != nil {
			p.err = err
			break
		}
		if r.complete() {
			break
		}
		from = to
	}
	if p.err == nil && eof && !r.complete() {
		p.err = r.eof()
	}
	p.code, p.body, p.close, p.complete = r.code, string(r.body), r.close, r.complete()
	return p
}

func TestResponseParsesInAnyPieces(t *testing.T) {
	cases := []struct {
		name string
		raw  string
		head bool // the request was HEAD
		eof  bool // the connection ends after raw
		want parsed
	}{
		{"content length", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 8\r\n\r\n{\"id\":1}", false, false,
			parsed{code: 200, body: `{"id":1}`, complete: true}},
		{"no reason phrase, bare LF", "HTTP/1.1 503\nContent-Length: 2\n\nno", false, false,
			parsed{code: 503, body: "no", complete: true}},
		{"chunked, with extensions and trailers", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6;ext=1\r\n{\"id\":\r\n2\r\n1}\r\n0\r\nX-Trailer: t\r\n\r\n", false, false,
			parsed{code: 200, body: `{"id":1}`, complete: true}},
		{"chunked wins over a length", "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", false, false,
			parsed{code: 200, body: "ok", complete: true}},
		{"another coding: the body ends with the connection", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nzzz", false, true,
			parsed{code: 200, body: "zzz", close: true, complete: true}},
		{"no length: the body ends with the connection", "HTTP/1.1 200 OK\r\n\r\nuntil close", false, true,
			parsed{code: 200, body: "until close", close: true, complete: true}},
		{"HTTP/1.0 closes", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", false, false,
			parsed{code: 200, body: "ok", close: true, complete: true}},
		{"HTTP/1.0 keep-alive", "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nok", false, false,
			parsed{code: 200, body: "ok", complete: true}},
		{"Connection: close", "HTTP/1.1 200 OK\r\nconnection: foo, close\r\ncontent-length: 2\r\n\r\nok", false, false,
			parsed{code: 200, body: "ok", close: true, complete: true}},
		{"204 has no body", "HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n", false, false,
			parsed{code: 204, complete: true}},
		{"304 has no body", "HTTP/1.1 304 Not Modified\r\n\r\n", false, false,
			parsed{code: 304, complete: true}},
		{"HEAD has no body", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", true, false,
			parsed{code: 200, complete: true}},
		{"interim answers first", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok", false, false,
			parsed{code: 201, body: "ok", complete: true}},
		{"a folded header line is skipped", "HTTP/1.1 200 OK\r\nX-A: a\r\n b\r\nContent-Length: 2\r\n\r\nok", false, false,
			parsed{code: 200, body: "ok", complete: true}},
		{"bytes after the answer are left", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA", false, false,
			parsed{code: 200, body: "ok", complete: true}},
		{"cut short", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", false, true,
			parsed{code: 200, body: "short", err: errCutShort}},
		{"nothing before the end", "", false, true, parsed{err: errCutShort}},
		{"switching protocols", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n", false, false,
			parsed{code: 101, err: errSwitching}},
		{"not HTTP", "SSH-2.0-OpenSSH\r\n", false, false, parsed{err: errStatusLine}},
		{"HTTP/2 status line", "HTTP/2 200\r\n\r\n", false, false, parsed{err: errStatusLine}},
		{"bad code", "HTTP/1.1 2x0 OK\r\n\r\n", false, false, parsed{err: errStatusLine}},
		{"bad length", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", false, false, parsed{code: 200, err: errLength}},
		{"two lengths", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nok", false, false, parsed{code: 200, err: errLength}},
		{"header without a colon", "HTTP/1.1 200 OK\r\nnonsense\r\n\r\n", false, false, parsed{code: 200, err: errHeaderLine}},
		{"bad chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", false, false, parsed{code: 200, err: errChunk}},
		{"chunk without its CRLF", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokX\r\n0\r\n\r\n", false, false, parsed{code: 200, body: "ok", err: errChunk}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			whole := parseIn(c.raw, c.head, 1<<20, c.eof)
			if c.want.err == nil {
				c.want.consumed = whole.consumed // checked below for the answer's end
			} else {
				whole.consumed, c.want.consumed = 0, 0
			}
			if whole != c.want {
				t.Fatalf("whole: %+v, want %+v", whole, c.want)
			}
			if whole.err == nil && strings.HasSuffix(c.raw, "EXTRA") != (whole.consumed < len(c.raw)) {
				t.Errorf("consumed %d of %d bytes", whole.consumed, len(c.raw))
			}
			// The same, whatever the pieces: every cut in two, and byte by byte.
			for cut := 1; cut < len(c.raw); cut++ {
				if got := parseIn(c.raw, c.head, 1<<20, c.eof, cut); !sameParse(got, whole) {
					t.Errorf("cut at %d: %+v, want %+v", cut, got, whole)
				}
			}
			bytewise := make([]int, len(c.raw))
			for i := range bytewise {
				bytewise[i] = i + 1
			}
			if got := parseIn(c.raw, c.head, 1<<20, c.eof, bytewise...); !sameParse(got, whole) {
				t.Errorf("byte by byte: %+v, want %+v", got, whole)
			}
		})
	}
}

func sameParse(a, b parsed) bool {
	if a.err != nil || b.err != nil {
		return errors.Is(a.err, b.err) && a.code == b.code
	}
	return a == b
}

func TestResponseKeepsAtMostKeepBytes(t *testing.T) {
	raw := "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789"
	if got := parseIn(raw, false, 4, false, 40, 45); got.body != "0123" || !got.complete || got.consumed != len(raw) {
		t.Errorf("%+v: want 4 bytes kept and the whole answer read", got)
	}
}

func TestResponseLineTooLong(t *testing.T) {
	raw := "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("x", maxLine) + "\r\n\r\n"
	for _, cuts := range [][]int{nil, {20}, {20, 40000}} {
		if got := parseIn(raw, false, 0, false, cuts...); !errors.Is(got.err, errLineTooLong) {
			t.Errorf("cuts %v: err %v, want %v", cuts, got.err, errLineTooLong)
		}
	}
}

// FuzzResponse: whatever a server sends, the parser neither panics nor depends on how the
// bytes were cut by the network.
func FuzzResponse(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"), uint16(5), false)
	f.Add([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"), uint16(40), false)
	f.Add([]byte("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.0 200 OK\r\n\r\nbody"), uint16(3), true)
	f.Fuzz(func(t *testing.T, raw []byte, cut uint16, head bool) {
		whole := parseIn(string(raw), head, 64, true)
		split := parseIn(string(raw), head, 64, true, int(cut)%(len(raw)+1))
		if !sameParse(whole, split) {
			t.Errorf("whole %+v, cut at %d %+v", whole, int(cut)%(len(raw)+1), split)
		}
		if whole.consumed > len(raw) || len(whole.body) > 64 {
			t.Errorf("consumed %d of %d, kept %d bytes", whole.consumed, len(raw), len(whole.body))
		}
	})
}
