package load

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
	"golang.org/x/net/http2/hpack"
	"golang.org/x/sys/unix"
)

// HTTP/2 in the one loop (docs/generator.md): a connection carries up to its streams' requests
// at once. It sits in the idle list while it has a free stream, so that a request released
// takes it as it would an idle HTTP/1.1 connection. Frames are written and parsed here; the
// request's header block is encoded once per target with literals only (no dynamic table), so
// that every request is the same bytes but for its stream's id; answers' header blocks are
// decoded with hpack, whose table follows the server's.

// HTTP/2 frame types and flags (RFC 9113, section 6).
const (
	h2Data         = 0x0
	h2Headers      = 0x1
	h2RstStream    = 0x3
	h2Settings     = 0x4
	h2PushPromise  = 0x5
	h2Ping         = 0x6
	h2GoAway       = 0x7
	h2WindowUpdate = 0x8
	h2Continuation = 0x9

	h2EndStream  = 0x1
	h2Ack        = 0x1
	h2EndHeaders = 0x4
	h2Padded     = 0x8
	h2Priority   = 0x20

	h2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
	// h2Window is the flow-control window the engine grants: the largest there is, so that an
	// answer never waits for a WINDOW_UPDATE of the engine's.
	h2Window = 1<<31 - 1
	// h2MaxFrame bounds a frame the engine accepts: the protocol's default, which it never raises.
	h2MaxFrame = 1 << 14
)

// h2conn is an HTTP/2 connection's state.
type h2conn struct {
	streams    []h2stream // a fixed set, each free or carrying a request
	free       []int32    // the free ones, by index
	byID       map[uint32]int32
	queued     []h2ref // the streams whose frames are in out
	writing    []h2ref // those whose frames are in c.out
	active     int     // streams carrying a request
	maxStreams int     // the streams asked for, or fewer when the server allows fewer
	nextID     uint32
	out        []byte // frames not yet handed to the socket
	sending    []byte // the buffer c.out is a part of (plaintext)
	in         []byte // bytes read, not yet parsed into frames
	dec        *hpack.Decoder
	status     int    // :status of the header block being decoded
	block      []byte // a header block continued in CONTINUATION frames
	blockID    uint32
	blockEnd   bool // the continued block's HEADERS ended its stream
	goaway     bool // the server takes no new stream
	unacked    int64
}

// h2ref names a stream by its index and id: a ref whose stream has moved on is stale.
type h2ref struct {
	i  int32
	id uint32
}

type h2stream struct {
	idx      int32
	id       uint32
	slot     int32 // -1: free
	phase    uint8 // its frames are queued (0), being written (1), written (2)
	code     int
	body     []byte
	received int64
	first    time.Time
}

// newH2 makes c an HTTP/2 connection of streams streams, its preface queued.
func (a *attacker) newH2(c *conn, streams int) {
	h := &h2conn{streams: make([]h2stream, streams), maxStreams: streams, nextID: 1, byID: make(map[uint32]int32, streams)}
	for i := range h.streams {
		h.streams[i].slot, h.streams[i].idx = -1, int32(i)
		h.free = append(h.free, int32(streams-1-i))
	}
	h.dec = hpack.NewDecoder(4096, func(f hpack.HeaderField) {
		if f.Name == ":status" {
			h.status, _ = strconv.Atoi(f.Value)
		}
	})
	h.out = append(h.out, h2Preface...)
	// SETTINGS: no push (2), the largest initial window (4); then the connection's window.
	h.out = h2Frame(h.out, h2Settings, 0, 0, 12)
	h.out = binary.BigEndian.AppendUint16(h.out, 2)
	h.out = binary.BigEndian.AppendUint32(h.out, 0)
	h.out = binary.BigEndian.AppendUint16(h.out, 4)
	h.out = binary.BigEndian.AppendUint32(h.out, h2Window)
	h.out = h2Frame(h.out, h2WindowUpdate, 0, 0, 4)
	h.out = binary.BigEndian.AppendUint32(h.out, h2Window-65535)
	c.h2 = h
}

// h2Frame appends a frame header: length, type, flags, stream.
func h2Frame(b []byte, typ, flags byte, stream uint32, length int) []byte {
	return append(b, byte(length>>16), byte(length>>8), byte(length), typ, flags,
		byte(stream>>24), byte(stream>>16), byte(stream>>8), byte(stream))
}

// encodeH2 writes w's request out as an HTTP/2 header block of literals (no dynamic table:
// the same bytes on every stream), and whether it has a body.
func encodeH2(w *wireRequest, scheme string) error {
	t := &w.target
	u, err := url.Parse(t.URL)
	if err != nil {
		return err
	}
	method := t.Method
	if method == "" {
		method = "GET"
	}
	authority := u.Host
	if h := t.Header.Get("Host"); h != "" {
		authority = h
	}
	var b []byte
	lit := func(name, value string) {
		// Literal without indexing; its name by its static table index where it has one: Tomcat
		// resets a stream whose pseudo-headers come as new names.
		if i, ok := hpackStatic[name]; ok {
			b = hpackInt(b, 0, 4, i)
		} else {
			b = append(b, 0)
			b = hpackString(b, name)
		}
		b = hpackString(b, value)
	}
	lit(":method", method)
	lit(":scheme", scheme)
	lit(":authority", authority)
	lit(":path", u.RequestURI())
	hasAgent := false
	for name, values := range t.Header {
		lower := strings.ToLower(name)
		switch lower {
		case "host", "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade", "proxy-connection":
			continue // HTTP/1.1's framing, which HTTP/2 forbids
		case "user-agent":
			hasAgent = true
		}
		for _, v := range values {
			lit(lower, v)
		}
	}
	if !hasAgent {
		lit("user-agent", userAgent)
	}
	if len(t.Body) > 0 || method == "POST" || method == "PUT" || method == "PATCH" {
		lit("content-length", strconv.Itoa(len(t.Body)))
	}
	if len(b) > h2MaxFrame || len(t.Body) > h2MaxFrame {
		return fmt.Errorf("target %s: a request of more than %d bytes of headers or body in HTTP/2 (one frame each)", t.URL, h2MaxFrame)
	}
	w.h2block = b
	return nil
}

// hpackStatic are the names of HPACK's static table (RFC 7541 appendix A) a request sends, by
// their first index.
var hpackStatic = map[string]int{
	":authority": 1, ":method": 2, ":path": 4, ":scheme": 6, "accept": 19, "accept-encoding": 16,
	"authorization": 23, "content-length": 28, "content-type": 31, "cookie": 32, "user-agent": 58,
}

// hpackInt appends v as an HPACK integer of an n-bit prefix, after first's high bits.
func hpackInt(b []byte, first byte, n uint, v int) []byte {
	limit := 1<<n - 1
	if v < limit {
		return append(b, first|byte(v))
	}
	b = append(b, first|byte(limit))
	for v -= limit; v >= 128; v >>= 7 {
		b = append(b, byte(v&127|128))
	}
	return append(b, byte(v))
}

// hpackString appends s as an HPACK string literal, not Huffman-coded.
func hpackString(b []byte, s string) []byte {
	n := len(s)
	if n < 127 {
		b = append(b, byte(n))
	} else {
		b = append(b, 127)
		for n -= 127; n >= 128; n >>= 7 {
			b = append(b, byte(n&127|128))
		}
		b = append(b, byte(n))
	}
	return append(b, s...)
}

// h2ready makes c, just opened, an HTTP/2 connection and gives its streams to the requests waiting.
func (a *attacker) h2ready(c *conn) {
	a.newH2(c, a.h2streams)
	c.state = busy
	a.h2handBack(c)
	if a.conns[c.id] == c && len(c.h2.out) > 0 && len(c.out) == 0 {
		a.h2flush(c) // the preface, when no request waits
	}
}

// h2send opens a stream of c for slot's request and queues its frames.
func (a *attacker) h2send(c *conn, slot int32) {
	h := c.h2
	r := &a.slots[slot]
	r.c = c
	// A stream shares its connection with others, whose frames keep its last arrival recent:
	// only a new connection's opening (and handshake) is taken out of the generator's share.
	r.free = time.Time{}
	if !c.reused {
		r.free = r.ownFrom(c.ready.Add(-c.helperWait))
	}
	c.reused = true
	st := &h.streams[h.free[len(h.free)-1]]
	h.free = h.free[:len(h.free)-1]
	h.byID[h.nextID] = st.idx
	h.queued = append(h.queued, h2ref{st.idx, h.nextID})
	st.id, st.slot, st.phase, st.code, st.body, st.received, st.first = h.nextID, slot, 0, 0, st.body[:0], 0, time.Time{}
	h.nextID += 2
	h.active++
	w := r.wire
	body := w.target.Body
	flags := byte(h2EndHeaders)
	if len(body) == 0 {
		flags |= h2EndStream
	}
	h.out = h2Frame(h.out, h2Headers, flags, st.id, len(w.h2block))
	h.out = append(h.out, w.h2block...)
	if len(body) > 0 {
		h.out = h2Frame(h.out, h2Data, h2EndStream, st.id, len(body))
		h.out = append(h.out, body...)
	}
	a.h2place(c)
	a.h2flush(c)
}

// h2place keeps c in the idle list while it can open a stream, out of it while it cannot.
func (a *attacker) h2place(c *conn) {
	open := a.h2open(c.h2)
	switch {
	case open && c.state != idle:
		c.state = idle
		a.idle = append(a.idle, c)
	case !open && c.state == idle:
		a.idle = deleteConn(a.idle, c)
		c.state = busy
	}
}

// h2open says whether h can open one more stream.
func (a *attacker) h2open(h *h2conn) bool {
	// A new connection per request (fresh) carries one stream, ever.
	return !h.goaway && h.active < h.maxStreams && h.nextID < 1<<31-2 && !(a.fresh && h.nextID > 1)
}

// h2handBack gives c's free streams to the requests waiting, oldest first.
func (a *attacker) h2handBack(c *conn) {
	for a.h2open(c.h2) {
		slot, ok := a.nextWaiting()
		if !ok {
			break
		}
		a.h2send(c, slot)
		if a.conns[c.id] != c {
			return // broken while sending
		}
	}
	a.h2place(c)
}

// h2flush writes c's queued frames, sealed over TLS; epoll says when the rest can be written.
func (a *attacker) h2flush(c *conn) {
	h := c.h2
	for {
		if len(c.out) == 0 {
			if len(h.out) == 0 {
				break
			}
			for _, ref := range h.queued {
				if st := h.ref(ref); st != nil {
					st.phase = 1
					h.writing = append(h.writing, ref)
				}
			}
			h.queued = h.queued[:0]
			if c.tls != nil {
				c.wire.out = c.wire.out[:0]
				if _, err := c.tls.Write(h.out); err != nil {
					a.h2broken(c, "tls write", err)
					return
				}
				c.out, h.out = c.wire.out, h.out[:0]
			} else {
				h.sending, h.out = h.out, h.sending[:0]
				c.out = h.sending
			}
		}
		switch err := a.writeOut(c); {
		case err == unix.EAGAIN:
			a.setOut(c, true)
			return
		case err != nil:
			a.h2broken(c, "write", err)
			return
		}
		now := time.Now()
		for _, ref := range h.writing {
			if st := h.ref(ref); st != nil {
				st.phase = 2
				a.slots[st.slot].written = now
			}
		}
		h.writing = h.writing[:0]
	}
	a.setOut(c, false)
}

// h2handle is what epoll reported of HTTP/2 connection c.
func (a *attacker) h2handle(c *conn, events uint32) {
	if events&unix.EPOLLOUT != 0 && len(c.out) > 0 {
		if a.h2flush(c); a.conns[c.id] != c {
			return
		}
	}
	if events&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
		a.h2read(c)
	}
}

var errH2Closed = errors.New("the server closed the HTTP/2 connection")

// h2read reads what arrived on c and handles its frames.
func (a *attacker) h2read(c *conn) {
	h := c.h2
	for {
		var n int
		var err error
		if c.tls != nil {
			n, err = c.tls.Read(a.plain)
			if err == errWouldBlock {
				break
			}
			if n > 0 {
				h.in = append(h.in, a.plain[:n]...)
			}
		} else {
			var at time.Time
			n, at, err = a.recv(c.fd)
			if err == unix.EAGAIN {
				break
			}
			if err == unix.EINTR {
				continue
			}
			if err == nil {
				if !at.IsZero() {
					c.arrival = at
				}
				if n == 0 {
					err = io.EOF
				}
				h.in = append(h.in, a.rbuf[:n]...)
			}
		}
		if err != nil {
			if err == io.EOF {
				err = errH2Closed
			}
			a.h2frames(c)
			if a.conns[c.id] == c {
				a.h2broken(c, "read", err)
			}
			return
		}
		if !a.h2frames(c) {
			return
		}
	}
	if len(h.out) > 0 && len(c.out) == 0 {
		a.h2flush(c)
	}
}

// h2frames handles the complete frames read; false when c was closed.
func (a *attacker) h2frames(c *conn) bool {
	h := c.h2
	p := 0
	for len(h.in)-p >= 9 {
		length := int(h.in[p])<<16 | int(h.in[p+1])<<8 | int(h.in[p+2])
		if length > h2MaxFrame {
			a.h2broken(c, "", fmt.Errorf("an HTTP/2 frame of %d bytes, above the %d the engine accepts", length, h2MaxFrame))
			return false
		}
		if len(h.in)-p < 9+length {
			break
		}
		typ, flags := h.in[p+3], h.in[p+4]
		id := binary.BigEndian.Uint32(h.in[p+5:]) & (1<<31 - 1)
		payload := h.in[p+9 : p+9+length]
		p += 9 + length
		if err := a.h2frame(c, typ, flags, id, payload); err != nil {
			a.h2broken(c, "", err)
			return false
		}
		if a.conns[c.id] != c {
			return false
		}
	}
	h.in = h.in[:copy(h.in, h.in[p:])]
	return true
}

// h2frame handles one frame.
func (a *attacker) h2frame(c *conn, typ, flags byte, id uint32, payload []byte) error {
	h := c.h2
	if h.blockID != 0 && typ != h2Continuation {
		return errors.New("HTTP/2: a header block interrupted by another frame")
	}
	switch typ {
	case h2Data:
		return a.h2data(c, flags, id, payload)
	case h2Headers:
		return a.h2headersFrame(c, flags, id, payload)
	case h2Continuation:
		return a.h2continuation(c, flags, id, payload)
	case h2RstStream:
		a.h2reset(c, id, payload)
	case h2Settings:
		a.h2settings(c, flags, payload)
	case h2Ping:
		if flags&h2Ack == 0 && len(payload) == 8 {
			h.out = h2Frame(h.out, h2Ping, h2Ack, 0, 8)
			h.out = append(h.out, payload...)
		}
	case h2GoAway:
		return a.h2goAway(c, payload)
	case h2PushPromise:
		return errors.New("HTTP/2: a server push, which the engine's SETTINGS turned off")
	}
	return nil
}

// h2data handles a DATA frame: the connection's window, then the stream's body.
func (a *attacker) h2data(c *conn, flags byte, id uint32, payload []byte) error {
	h := c.h2
	data, err := h2Unpad(flags, payload)
	if err != nil {
		return err
	}
	if h.unacked += int64(len(payload)); h.unacked > 1<<30 {
		h.out = h2Frame(h.out, h2WindowUpdate, 0, 0, 4)
		h.out = binary.BigEndian.AppendUint32(h.out, uint32(h.unacked))
		h.unacked = 0
	}
	st := h.stream(id)
	if st == nil {
		return nil // of a stream the engine gave up on
	}
	a.h2arrived(c, st)
	st.received += int64(len(payload))
	if keep := a.keep - len(st.body); keep > 0 {
		st.body = append(st.body, data[:min(keep, len(data))]...)
	}
	if flags&h2EndStream != 0 {
		a.h2finish(c, st)
	}
	return nil
}

// h2headersFrame handles a HEADERS frame: a whole header block, or the start of one that
// CONTINUATION frames end.
func (a *attacker) h2headersFrame(c *conn, flags byte, id uint32, payload []byte) error {
	h := c.h2
	frag, err := h2Unpad(flags, payload)
	if err != nil {
		return err
	}
	if flags&h2Priority != 0 {
		if len(frag) < 5 {
			return errors.New("HTTP/2: a HEADERS frame too short for its priority")
		}
		frag = frag[5:]
	}
	if flags&h2EndHeaders == 0 {
		h.block, h.blockID, h.blockEnd = append(h.block[:0], frag...), id, flags&h2EndStream != 0
		return nil
	}
	return a.h2headers(c, id, frag, flags&h2EndStream != 0, len(payload))
}

// h2continuation handles a CONTINUATION frame of the header block under way.
func (a *attacker) h2continuation(c *conn, flags byte, id uint32, payload []byte) error {
	h := c.h2
	if id != h.blockID || id == 0 {
		return errors.New("HTTP/2: a CONTINUATION frame out of place")
	}
	h.block = append(h.block, payload...)
	if flags&h2EndHeaders != 0 {
		h.blockID = 0
		return a.h2headers(c, id, h.block, h.blockEnd, len(h.block))
	}
	return nil
}

// h2reset handles an RST_STREAM frame: the stream's request fails with the server's code.
func (a *attacker) h2reset(c *conn, id uint32, payload []byte) {
	if st := c.h2.stream(id); st != nil && len(payload) == 4 {
		slot := st.slot
		a.h2free(c, st)
		a.fail(slot, a.errText("", h2ResetError(binary.BigEndian.Uint32(payload))), time.Now())
		a.h2after(c)
	}
}

// h2settings handles a SETTINGS frame, of which the engine reads only the stream limit, and acks it.
func (a *attacker) h2settings(c *conn, flags byte, payload []byte) {
	if flags&h2Ack != 0 {
		return
	}
	h := c.h2
	for i := 0; i+6 <= len(payload); i += 6 {
		if binary.BigEndian.Uint16(payload[i:]) == 3 { // MAX_CONCURRENT_STREAMS
			n := binary.BigEndian.Uint32(payload[i+2:])
			h.maxStreams = int(min(uint32(len(h.streams)), max(n, 1)))
		}
	}
	h.out = h2Frame(h.out, h2Settings, h2Ack, 0, 0)
	a.h2place(c)
}

// h2goAway handles a GOAWAY frame: no new streams on c, and its streams the server never
// processed wait for another connection.
func (a *attacker) h2goAway(c *conn, payload []byte) error {
	if len(payload) < 8 {
		return errors.New("HTTP/2: a GOAWAY frame too short")
	}
	h := c.h2
	last := binary.BigEndian.Uint32(payload) & (1<<31 - 1)
	h.goaway = true
	a.h2place(c)
	now := time.Now()
	for i := range h.streams {
		if st := &h.streams[i]; st.slot >= 0 && st.id > last {
			// Never processed by the server: sent again on another connection.
			slot := st.slot
			a.h2free(c, st)
			a.slots[slot].c, a.slots[slot].written = nil, time.Time{}
			a.waiting.pushFront(ticket{slot: slot, gen: a.slots[slot].gen})
		}
	}
	a.dialMore(now)
	a.h2after(c)
	return nil
}

// h2headers decodes a header block of stream id; endStream: it ends the stream.
func (a *attacker) h2headers(c *conn, id uint32, block []byte, endStream bool, size int) error {
	h := c.h2
	h.status = 0
	// Close ends the block: a table size update is allowed only at a block's start, and the
	// decoder knows a start only from the previous block's Close (Tomcat sends one).
	if _, err := h.dec.Write(block); err != nil {
		return fmt.Errorf("HTTP/2 header block: %v", err)
	}
	if err := h.dec.Close(); err != nil {
		return fmt.Errorf("HTTP/2 header block: %v", err)
	}
	st := h.stream(id)
	if st == nil {
		return nil
	}
	a.h2arrived(c, st)
	st.received += int64(size)
	if h.status >= 200 && st.code == 0 {
		st.code = h.status
	}
	if endStream {
		a.h2finish(c, st)
	}
	return nil
}

// h2arrived notes that bytes of st's answer arrived.
func (a *attacker) h2arrived(c *conn, st *h2stream) {
	if st.first.IsZero() {
		st.first = c.arrival
		if st.first.IsZero() {
			st.first = time.Now()
		}
	}
}

func h2Unpad(flags byte, payload []byte) ([]byte, error) {
	if flags&h2Padded == 0 {
		return payload, nil
	}
	if len(payload) < 1 || int(payload[0]) >= len(payload) {
		return nil, errors.New("HTTP/2: padding longer than its frame")
	}
	return payload[1 : len(payload)-int(payload[0])], nil
}

// h2ResetError is the error of a stream the server reset with its code: comparable, so that
// its text is made once per code.
type h2ResetError uint32

func (e h2ResetError) Error() string {
	return fmt.Sprintf("HTTP/2: the server reset the stream (error code %d)", uint32(e))
}

// stream is the stream of c with id, nil when none carries a request.
func (h *h2conn) stream(id uint32) *h2stream {
	if i, ok := h.byID[id]; ok {
		return &h.streams[i]
	}
	return nil
}

// ref is the stream ref names, nil when it has moved on.
func (h *h2conn) ref(r h2ref) *h2stream {
	if st := &h.streams[r.i]; st.slot >= 0 && st.id == r.id {
		return st
	}
	return nil
}

// h2free frees st: its request is the caller's to end.
func (a *attacker) h2free(c *conn, st *h2stream) {
	h := c.h2
	delete(h.byID, st.id)
	st.slot = -1
	h.free = append(h.free, st.idx)
	h.active--
}

// h2after hands c's free streams to the requests waiting, or closes it when it is done with.
func (a *attacker) h2after(c *conn) {
	h := c.h2
	if h.active == 0 && (h.goaway || a.fresh) {
		a.closeConn(c)
		return
	}
	a.h2handBack(c)
}

// h2finish ends st's request with its answer.
func (a *attacker) h2finish(c *conn, st *h2stream) {
	slot := st.slot
	r := &a.slots[slot]
	done := time.Now()
	sent := r.written
	if sent.IsZero() {
		sent = r.taken
	} else if a.own != nil && !c.arrival.IsZero() {
		a.own.record(r.start, r.free, r.written, c.arrival, done)
	}
	if a.stats != nil {
		a.stats.firstByteOf(r.start, st.first)
	}
	code := st.code
	a.res = vegeta.Result{
		Seq: r.seq, Code: uint16(code), Timestamp: sent, Latency: done.Sub(sent),
		BytesOut: uint64(len(r.wire.h2block) + len(r.wire.target.Body)), BytesIn: uint64(st.received), Body: st.body,
		Method: r.wire.target.Method, URL: r.wire.target.URL,
	}
	if code < 200 || code >= 400 {
		a.res.Error = a.statusText(code)
	}
	start, kind := r.start, r.wire.kind
	a.h2free(c, st)
	a.end(slot)
	a.each(&a.res, start, c.arrival, kind)
	a.h2after(c)
}

// h2cancel gives up on slot's stream of c (its time is up): the server is told, and the stream
// is free; the request is the caller's to end.
func (a *attacker) h2cancel(c *conn, slot int32) {
	h := c.h2
	for i := range h.streams {
		if st := &h.streams[i]; st.slot == slot {
			h.out = h2Frame(h.out, h2RstStream, 0, st.id, 4)
			h.out = binary.BigEndian.AppendUint32(h.out, 0x8) // CANCEL
			a.h2free(c, st)
			break
		}
	}
	a.slots[slot].c = nil
	if len(c.out) == 0 {
		a.h2flush(c)
	}
}

// h2broken ends every request of c with err, after closing c.
func (a *attacker) h2broken(c *conn, op string, err error) {
	h := c.h2
	a.closeConn(c)
	now := time.Now()
	for i := range h.streams {
		if st := &h.streams[i]; st.slot >= 0 {
			slot := st.slot
			a.h2free(c, st)
			a.fail(slot, a.errText(op, err), now)
		}
	}
	a.dialMore(now)
}
