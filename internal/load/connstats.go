package load

import (
	"crypto/tls"
	"time"

	"github.com/iotbench/iotbench/internal/latency"
)

// Connections is how a phase's connections were opened.
type Connections struct {
	// Opened counts the connections opened over the phase: over TLS, each a handshake;
	// Resumed, those whose TLS session was resumed.
	Opened, Resumed int64
	// Connect is the time each took from its dial until it could carry a request: the TCP
	// connect and, over TLS, the handshake.
	Connect latency.Summary
	// TLSVersion and TLSCipher are what the last handshake negotiated (tls.VersionName,
	// tls.CipherSuiteName), in this phase or before it on a connection it used; empty in
	// plaintext.
	TLSVersion string `json:",omitempty"`
	TLSCipher  string `json:",omitempty"`
}

// connStats counts a phase's connections and the time to each answer's first byte, from the
// loop's goroutine.
type connStats struct {
	from      time.Time // the phase's start: requests started before are not its own
	res       Connections
	connect   *latency.Recorder
	firstByte *latency.Recorder
}

func newConnStats(ceiling time.Duration) *connStats {
	return &connStats{connect: latency.NewRecorder(ceiling), firstByte: latency.NewRecorder(ceiling)}
}

// firstByteOf records the time to first byte of a request that started at start, first byte at
// first, when it is the phase's.
func (s *connStats) firstByteOf(start, first time.Time) {
	if !first.IsZero() && !start.Before(s.from) {
		s.firstByte.Record(first.Sub(start))
	}
}

// opened counts a connection that took connect from its dial until it could carry requests;
// resumed, whether its TLS session was.
func (s *connStats) opened(connect time.Duration, resumed bool) {
	s.res.Opened++
	s.connect.Record(connect)
	if resumed {
		s.res.Resumed++
	}
}

// result is the phase's figures; st says what the TLS handshakes negotiated.
func (s *connStats) result(st *tlsState) (Connections, latency.Summary) {
	res := s.res
	res.Connect = s.connect.Summary()
	if st.version != 0 {
		res.TLSVersion, res.TLSCipher = tls.VersionName(st.version), tls.CipherSuiteName(st.cipher)
	}
	return res, s.firstByte.Summary()
}

// arrived notes that bytes of c's answer arrived: the first ones are its first byte.
func (a *attacker) arrived(c *conn) {
	if c.first.IsZero() {
		c.first = c.arrival
		if c.first.IsZero() {
			c.first = time.Now()
		}
	}
}
