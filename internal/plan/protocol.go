package plan

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/protocol"
)

// Protocol is how the generator speaks to a target: a scenario's settings, or the command
// line's (which override them).
type Protocol struct {
	// Name is the protocol; empty: the scenario's, else http1 (or https for an https:// --url).
	Name protocol.Protocol
	// H2Streams is an HTTP/2 connection's concurrent streams; 0: the scenario's, else 1.
	H2Streams int
	// TLSResumption, when set, turns TLS session resumption on or off.
	TLSResumption *bool
}

// apply sets r's protocol settings: base's, overridden by o's. The TLS configuration (the run's
// CA) is the run's to give.
func (o Protocol) apply(r *load.Request, base Protocol) error {
	name := base.Name
	if o.Name != "" {
		name = o.Name
		if err := protocol.Check(name); err != nil {
			return &OverrideError{"protocol", string(o.Name), fmt.Errorf("%s", trimProtocol(err))}
		}
	}
	name = name.Or()
	streams, resume := base.H2Streams, base.TLSResumption
	if o.H2Streams != 0 {
		streams = o.H2Streams
		if !name.HTTP2() {
			return &OverrideError{"h2-streams", strconv.Itoa(o.H2Streams), fmt.Errorf("streams belong to HTTP/2: give --protocol h2 or h2c")}
		}
		if o.H2Streams < 1 || o.H2Streams > load.MaxStreams {
			return &OverrideError{"h2-streams", strconv.Itoa(o.H2Streams), fmt.Errorf("give 1 to %d", load.MaxStreams)}
		}
	}
	if o.TLSResumption != nil {
		resume = o.TLSResumption
		if !name.TLS() {
			return &OverrideError{"tls-resumption", strconv.FormatBool(*resume), fmt.Errorf("resumption belongs to a protocol over TLS: give --protocol https or h2")}
		}
	}
	if !name.HTTP2() {
		streams = 0 // a scenario's h2 streams, its protocol overridden by one without them
	}
	r.Protocol, r.Streams = name, streams
	r.Resume = name.TLS() && resume != nil && *resume
	return nil
}

// trimProtocol is a protocol error without the value the override error names already.
func trimProtocol(err error) string {
	if _, rest, ok := strings.Cut(err.Error(), ": "); ok {
		return rest
	}
	return err.Error()
}

// TargetURL is base (a target's http:// address) with p's scheme.
func TargetURL(base string, p protocol.Protocol) string {
	u, err := url.Parse(base)
	if err != nil {
		return base
	}
	u.Scheme = p.Or().Scheme()
	return u.String()
}

// urlProtocol is the protocol an ad-hoc URL names by its scheme when no protocol is given.
func urlProtocol(raw string, o Protocol) (Protocol, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return o, err
	}
	if o.Name == "" {
		if u.Scheme == "https" {
			o.Name = protocol.HTTPS
		}
		return o, nil
	}
	if p := o.Name; protocol.Check(p) == nil && p.Scheme() != u.Scheme {
		return o, &OverrideError{"protocol", string(p), fmt.Errorf("speaks to %s:// URLs, and --url is %s", p.Scheme(), raw)}
	}
	return o, nil
}
