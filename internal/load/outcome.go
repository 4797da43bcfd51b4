package load

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
	"golang.org/x/sys/unix"
)

// errKey is an error as the results count it: an operation, and an errno or one of this
// package's errors (comparable, so that its text is made once).
type errKey struct {
	op  string
	err error
}

// errTimeout is the error of a request without a complete answer within the request timeout;
// one message, so that a cause counts once in the results.
var errTimeout = errors.New("timeout: no complete answer within the request timeout")

// finish ends c's request with its answer, and hands c to the next request.
func (a *attacker) finish(c *conn) {
	slot := c.slot
	r := &a.slots[slot]
	done := time.Now()
	sent := r.written
	if sent.IsZero() { // answered before it was all written
		sent = r.taken
	} else if a.own != nil && !c.arrival.IsZero() && !r.expired {
		a.own.record(r.start, r.free, r.written, c.arrival, done)
	}
	if a.stats != nil && !r.expired {
		a.stats.firstByteOf(r.start, c.first)
	}
	code := c.resp.code
	a.res = vegeta.Result{
		Seq: r.seq, Code: uint16(code), Timestamp: sent, Latency: done.Sub(sent),
		BytesOut: uint64(len(r.wire.bytes)), BytesIn: uint64(c.resp.received), Body: c.resp.body,
		Method: r.wire.target.Method, URL: r.wire.target.URL,
	}
	if code < 200 || code >= 400 { // as vegeta: an error, named by the status
		a.res.Error = a.statusText(code)
	}
	start, kind, expired := r.start, r.wire.kind, r.expired
	a.end(slot)
	// The result first: its body is the connection's until the next request.
	if expired {
		a.lingering--
		if a.late != nil {
			a.late(&a.res)
		}
	} else {
		a.each(&a.res, start, c.arrival, kind)
	}
	if c.resp.close || a.fresh {
		a.closeConn(c)
		return
	}
	c.reused = true
	a.handBack(c)
}

// broken ends c's request with err, after closing c. A request the server closed a reused
// connection on before answering is sent again on another when it may be sent twice, as
// net/http does: the server's keep-alive timeout is not the request's failure.
func (a *attacker) broken(c *conn, op string, err error) {
	slot := c.slot
	r := &a.slots[slot]
	closed := err == errCutShort || err == unix.ECONNRESET || err == unix.EPIPE
	retry := c.reused && !c.resp.started() && closed && r.wire.replayable && !r.retried
	a.closeConn(c)
	now := time.Now()
	if r.expired { // counted as a timeout already
		a.lingering--
		a.end(slot)
		a.dialMore(now)
		return
	}
	if retry {
		r.retried, r.c, r.written = true, nil, time.Time{}
		a.waiting.pushFront(ticket{slot: slot, gen: r.gen})
		a.dialMore(now)
		return
	}
	a.fail(slot, a.errText(op, err), now)
}

// fail ends slot's request without an answer.
func (a *attacker) fail(slot int32, text string, now time.Time) {
	r := &a.slots[slot]
	sent := r.written
	if sent.IsZero() {
		sent = r.taken
	}
	a.res = vegeta.Result{
		Seq: r.seq, Timestamp: sent, Latency: now.Sub(sent), Error: text,
		Method: r.wire.target.Method, URL: r.wire.target.URL,
	}
	start, kind := r.start, r.wire.kind
	a.end(slot)
	a.each(&a.res, start, time.Time{}, kind)
}

// timedOut counts slot's request as a timeout and keeps it on its connection for its answer, as
// wrk does: the connection carries nothing else until the answer comes, or the attack ends.
func (a *attacker) timedOut(slot int32, now time.Time) {
	r := &a.slots[slot]
	sent := r.written
	if sent.IsZero() {
		sent = r.taken
	}
	a.res = vegeta.Result{
		Seq: r.seq, Timestamp: sent, Latency: now.Sub(sent), Error: errTimeout.Error(),
		Method: r.wire.target.Method, URL: r.wire.target.URL,
	}
	r.expired = true
	a.lingering++
	a.each(&a.res, r.start, time.Time{}, r.wire.kind)
}

// dropLingering ends the requests still waiting for an answer past their timeout when the attack
// ends (each counted as a timeout already), closing their connections: an answer would come
// to the next request on them.
func (a *attacker) dropLingering() {
	for slot := range a.slots {
		if r := &a.slots[slot]; r.expired && r.c != nil {
			a.closeConn(r.c)
			a.end(int32(slot))
		}
	}
	a.lingering = 0
}

// expire ends the requests, and the dials, whose time is up.
func (a *attacker) expire(now time.Time) {
	for a.deadlines.len() > 0 {
		t := a.deadlines.peek()
		r := &a.slots[t.slot]
		if r.gen != t.gen {
			a.deadlines.pop()
			continue
		}
		if now.Before(t.deadline) {
			break
		}
		a.deadlines.pop()
		c := r.c
		if c != nil && c.h2 == nil && a.keepLate {
			a.timedOut(t.slot, now)
			continue
		}
		switch {
		case c != nil && c.h2 != nil:
			a.h2cancel(c, t.slot) // the stream only: the connection carries the others
		case c != nil:
			a.closeConn(c) // its answer may still come: it cannot carry another request
		}
		a.fail(t.slot, errTimeout.Error(), now)
		if c != nil && c.h2 != nil && a.conns[c.id] == c {
			a.h2after(c)
		}
	}
	for i := 0; i < len(a.dials); {
		if c := a.dials[i]; now.After(c.dialDeadline) {
			a.closeConn(c)
			a.dialMore(now)
			continue
		}
		i++
	}
}

// errText is the text of an error, made once for each operation and error.
func (a *attacker) errText(op string, err error) string {
	k := errKey{op, err}
	if s, ok := a.errs[k]; ok {
		return s
	}
	s := err.Error()
	if op != "" {
		s = op + ": " + s
	}
	a.errs[k] = s
	return s
}

// statusText names a status as net/http's Response.Status does: "503 Service Unavailable".
func (a *attacker) statusText(code int) string {
	if s, ok := a.statuses[code]; ok {
		return s
	}
	s := strings.TrimSpace(strconv.Itoa(code) + " " + http.StatusText(code))
	a.statuses[code] = s
	return s
}
