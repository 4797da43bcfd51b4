package load

import (
	"bytes"
	"errors"
)

// response parses an HTTP/1.1 answer as its bytes arrive, in whatever pieces the kernel hands
// them over: the status code, the framing of the body (Content-Length, chunked, or up to the end
// of the connection), and whether the connection may carry another request. It keeps up to keep
// bytes of the body, for the check; the rest is counted and dropped. One response serves every
// answer of a connection (reset between them), so parsing allocates nothing once its buffers
// have grown.
type response struct {
	keep int  // body bytes kept, at most
	head bool // the request was HEAD: no body, whatever the headers say

	state    parseState
	code     int
	close    bool  // the connection ends after this answer
	length   int64 // body bytes left: of the whole body, or of the current chunk
	received int64 // bytes of this answer, head included
	body     []byte
	line     []byte // a line cut between two reads: its first part

	// Read from the head, until its end decides the framing.
	contentLength int64 // -1: none
	chunked       bool  // Transfer-Encoding ends with chunked
	encoded       bool  // Transfer-Encoding other than chunked: the body ends with the connection
	http10        bool
	keepAlive     bool // Connection: keep-alive (HTTP/1.0)
}

type parseState uint8

const (
	inStatus     parseState = iota // the status line
	inHeaders                      // header lines, up to the empty line
	inBody                         // length bytes of the body left
	inUntilClose                   // a body delimited by the end of the connection
	inChunkSize                    // a chunk's size line
	inChunk                        // length bytes of the chunk's data left
	inChunkEnd                     // the empty line after a chunk's data
	inTrailer                      // trailer lines, up to the empty line
	done
)

// maxLine bounds a line of the head or of the chunked framing.
const maxLine = 64 << 10

var (
	errLineTooLong = errors.New("malformed HTTP response: a line of its head longer than 64 KiB")
	errStatusLine  = errors.New("malformed HTTP response: bad status line")
	errHeaderLine  = errors.New("malformed HTTP response: bad header line")
	errLength      = errors.New("malformed HTTP response: bad Content-Length")
	errChunk       = errors.New("malformed HTTP response: bad chunked encoding")
	errSwitching   = errors.New("the server switched protocols (101), which the load engine does not speak")
	errCutShort    = errors.New("the server closed the connection before the end of the answer")
)

// reset prepares r for the answer to a new request.
func (r *response) reset(head bool) {
	r.head = head
	r.state, r.code, r.close, r.length, r.received = inStatus, 0, false, 0, 0
	r.body, r.line = r.body[:0], r.line[:0]
	r.resetHead()
}

func (r *response) resetHead() {
	r.contentLength, r.chunked, r.encoded, r.http10, r.keepAlive = -1, false, false, false, false
}

// started reports whether any byte of the answer arrived.
func (r *response) started() bool { return r.received > 0 }

// complete reports whether the answer has been read to its end.
func (r *response) complete() bool { return r.state == done }

// feed parses the bytes in b, which follow those fed before. It returns how many it consumed:
// fewer than len(b) when the answer ended before them, or at an error.
func (r *response) feed(b []byte) (int, error) {
	n := 0
	for n < len(b) && r.state != done {
		var used int
		var err error
		switch r.state {
		case inBody, inChunk:
			used = int(min(int64(len(b)-n), r.length))
			r.keepBody(b[n : n+used])
			if r.length -= int64(used); r.length == 0 {
				r.state = done
				if r.chunked {
					r.state = inChunkEnd
				}
			}
		case inUntilClose:
			used = len(b) - n
			r.keepBody(b[n:])
		default:
			used, err = r.feedLine(b[n:])
		}
		n += used
		r.received += int64(used)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// feedLine consumes b up to the end of a line, which it then handles, or all of b, kept until
// the line's end arrives.
func (r *response) feedLine(b []byte) (int, error) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		if len(r.line)+len(b) > maxLine {
			return len(b), errLineTooLong
		}
		r.line = append(r.line, b...)
		return len(b), nil
	}
	if len(r.line)+i > maxLine {
		return i + 1, errLineTooLong
	}
	line := b[:i]
	if len(r.line) > 0 {
		r.line = append(r.line, line...)
		line = r.line
	}
	line = bytes.TrimSuffix(line, []byte{'\r'})
	err := r.handleLine(line)
	r.line = r.line[:0]
	return i + 1, err
}

func (r *response) handleLine(line []byte) error {
	switch r.state {
	case inStatus:
		return r.statusLine(line)
	case inHeaders:
		if len(line) == 0 {
			return r.endOfHead()
		}
		return r.headerLine(line)
	case inChunkSize:
		size, ok := chunkSize(line)
		switch {
		case !ok:
			return errChunk
		case size == 0:
			r.state = inTrailer
		default:
			r.state, r.length = inChunk, size
		}
	case inChunkEnd:
		if len(line) != 0 {
			return errChunk
		}
		r.state = inChunkSize
	case inTrailer:
		if len(line) == 0 {
			r.state = done
		}
	}
	return nil
}

// statusLine reads "HTTP/1.1 200 OK".
func (r *response) statusLine(line []byte) error {
	rest, ok := bytes.CutPrefix(line, []byte("HTTP/1."))
	if !ok || len(rest) < 5 || (rest[0] != '0' && rest[0] != '1') || rest[1] != ' ' || len(rest) > 5 && rest[5] != ' ' {
		return errStatusLine
	}
	code := 0
	for _, c := range rest[2:5] {
		if c < '0' || c > '9' {
			return errStatusLine
		}
		code = code*10 + int(c-'0')
	}
	if code < 100 {
		return errStatusLine
	}
	r.code, r.http10, r.state = code, rest[0] == '0', inHeaders
	return nil
}

func (r *response) headerLine(line []byte) error {
	name, value, ok := bytes.Cut(line, []byte{':'})
	if !ok || len(name) == 0 || name[len(name)-1] == ' ' || name[len(name)-1] == '\t' {
		if len(line) > 0 && (line[0] == ' ' || line[0] == '\t') {
			return nil // a folded continuation of the line before: of no header read here
		}
		return errHeaderLine
	}
	value = bytes.Trim(value, " \t")
	switch {
	case equalFold(name, "content-length"):
		n, ok := parseLength(value)
		if !ok || r.contentLength >= 0 && n != r.contentLength {
			return errLength
		}
		r.contentLength = n
	case equalFold(name, "transfer-encoding"):
		// The last coding decides: chunked frames the body, anything else leaves it to the
		// connection's end (RFC 9112, 6.3).
		last := value
		if i := bytes.LastIndexByte(value, ','); i >= 0 {
			last = bytes.Trim(value[i+1:], " \t")
		}
		if equalFold(last, "chunked") {
			r.chunked, r.encoded = true, false
		} else {
			r.chunked, r.encoded = false, true
		}
	case equalFold(name, "connection"):
		for v := range bytes.SplitSeq(value, []byte{','}) {
			switch v = bytes.Trim(v, " \t"); {
			case equalFold(v, "close"):
				r.close = true
			case equalFold(v, "keep-alive"):
				r.keepAlive = true
			}
		}
	}
	return nil
}

// endOfHead decides how the body is framed (RFC 9112, 6.3).
func (r *response) endOfHead() error {
	if r.http10 && !r.keepAlive {
		r.close = true
	}
	switch {
	case r.code == 101:
		return errSwitching
	case r.code < 200:
		// An interim answer (100 Continue, 103 Early Hints) precedes the real one.
		r.state = inStatus
		r.close = false
		r.resetHead()
	case r.head || r.code == 204 || r.code == 304:
		r.state = done
	case r.chunked:
		r.state = inChunkSize
	case r.encoded:
		r.state, r.close = inUntilClose, true
	case r.contentLength == 0:
		r.state = done
	case r.contentLength > 0:
		r.state, r.length = inBody, r.contentLength
	default:
		r.state, r.close = inUntilClose, true
	}
	return nil
}

// eof is the end of the connection: it completes a body delimited by it, and cuts any other
// answer short.
func (r *response) eof() error {
	switch r.state {
	case inUntilClose:
		r.state = done
		return nil
	case done:
		return nil
	}
	return errCutShort
}

func (r *response) keepBody(b []byte) {
	if room := r.keep - len(r.body); room > 0 {
		r.body = append(r.body, b[:min(len(b), room)]...)
	}
}

// parseLength reads a Content-Length: decimal digits only, below 2^62.
func parseLength(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// chunkSize reads a chunk's size line: hexadecimal digits, then extensions, ignored.
func chunkSize(line []byte) (int64, bool) {
	if i := bytes.IndexByte(line, ';'); i >= 0 {
		line = line[:i]
	}
	line = bytes.Trim(line, " \t")
	if len(line) == 0 || len(line) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range line {
		switch {
		case c >= '0' && c <= '9':
			n = n<<4 | int64(c-'0')
		case c >= 'a' && c <= 'f':
			n = n<<4 | int64(c-'a'+10)
		case c >= 'A' && c <= 'F':
			n = n<<4 | int64(c-'A'+10)
		default:
			return 0, false
		}
	}
	return n, true
}

// equalFold compares b with lower, an ASCII lower-case name, ignoring the case of b.
func equalFold(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}
