package load

import (
	"context"
	"crypto/tls"
	"net/url"

	"github.com/iotbench/iotbench/internal/protocol"
)

// Session runs loads one after another on the same connections: a search's steps (internal/bench)
// go from rate to rate without the target meeting a new set of connections, and its accept queue
// a storm of them, at each step. Each Run is a measurement of its own (its warm-up, its measured
// phase, its Result), begun once the one before has ended: every request it released answered,
// failed or timed out. What stays from one Run to the next is the open connections, idle (a
// connection the target closed meanwhile is found closed before a request is sent on it), and
// the encoded request. A Run whose connections would differ from the last one's (another
// address, protocol or TLS setting) starts on new ones. A Session is not safe for concurrent use.
type Session struct {
	a     *attacker
	conns connShape // what the attacker's connections were opened as
}

// connShape is what a connection is opened as: the settings a kept connection must share with the
// Run that uses it.
type connShape struct {
	host, remote  string
	proto         protocol.Protocol
	tls           *tls.Config
	resume, fresh bool
	streams       int
	// keep is the body bytes kept for the check, which each connection is opened with.
	keep int
}

// NewSession is a session with no connection yet: its first Run opens them.
func NewSession() *Session { return &Session{} }

// Run warms up, then measures, as one continuous load (runner), on the session's connections. It
// returns an error only when the measurement could not run at all (bad config, cancelled): the
// session's connections are closed then, for a request may have been left on one. A measurement
// that ran but cannot be trusted is a Result with Valid false.
func (s *Session) Run(ctx context.Context, cfg Config) (Result, error) {
	if err := cfg.validate(); err != nil {
		return Result{}, err
	}
	shape := shapeOf(cfg)
	if s.a != nil && s.conns != shape {
		s.Close()
	}
	if s.a == nil {
		a, err := newAttacker(cfg.Timeout, shape.keep, false) // the attack's settings are set again below, each Run
		if err != nil {
			return Result{}, err
		}
		if req := cfg.Request; req.Protocol.TLS() {
			u, _ := url.Parse(cfg.urls()[0])
			var sessions tls.ClientSessionCache // nil: every handshake is full
			if req.Resume {
				sessions = tls.NewLRUClientSessionCache(MaxInFlight)
			}
			a.tls.conf = protocol.ClientTLS(req.TLS, req.Protocol, sessions, u.Hostname())
		}
		a.fresh = cfg.Request.NewConnection
		if req := cfg.Request; req.Protocol.HTTP2() {
			a.h2streams, a.h2scheme = max(req.Streams, 1), req.Protocol.Scheme()
		}
		s.a, s.conns = a, shape
	}
	// What the attack does with each request is the Run's own: a step's rate sets the loop's pace.
	a := s.a
	a.timeout, a.keep, a.keepLate, a.turnEvery = cfg.Timeout, shape.keep, cfg.Compat == Wrk, 0
	if cfg.Model.Mode() == Open {
		a.turnEvery = turnFor(cfg.Model.peakRate())
	}
	res, err := newRunner(cfg).run(ctx, a)
	if err != nil {
		s.Close()
	}
	return res, err
}

// Close closes the session's connections; a Run after it opens new ones.
func (s *Session) Close() {
	if s.a != nil {
		s.a.close()
		s.a = nil
	}
}

// shapeOf is what cfg's connections are opened as.
func shapeOf(cfg Config) connShape {
	req := cfg.Request
	keep := maxBody
	if len(cfg.Check.Contains) == 0 && !kindsCheck(cfg.Kinds) {
		keep = 0 // nothing to check: the answer is read to its end and dropped
	}
	host := ""
	if u, err := url.Parse(req.URL); err == nil {
		host = u.Host
	}
	return connShape{
		host: host, remote: req.Remote, proto: req.Protocol, tls: req.TLS,
		resume: req.Resume, fresh: req.NewConnection, streams: req.Streams, keep: keep,
	}
}
