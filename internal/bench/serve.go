package bench

import (
	"context"
	"crypto/tls"
	"fmt"
	"slices"
	"strings"

	"github.com/iotbench/iotbench/internal/container"
	"github.com/iotbench/iotbench/internal/fault"
	"github.com/iotbench/iotbench/internal/plan"
	"github.com/iotbench/iotbench/internal/protocol"
	"github.com/iotbench/iotbench/internal/tlscert"
)

// serve sets c to be served over its request's protocol: the target told the protocol, over TLS
// given the run's certificates (made once per run, removed when it ends) and the request their
// CA. A target whose image does not declare the protocol comes back as notLoaded (skipped), as
// does a TLS cell when the engine is on another host, which cannot mount the certificates.
func (r *Runner) serve(ctx context.Context, c *plan.Cell, images built) *notLoaded {
	p := c.Load.Request.Protocol.Or()
	if p == protocol.HTTP1 {
		return nil
	}
	if r.ServiceCA != nil {
		c.Load.Request.TLS = &tls.Config{RootCAs: r.ServiceCA}
		return nil
	}
	if o, ok := r.Lifecycle.(container.Offerer); ok {
		offered, err := o.Protocols(ctx, images.ids[c.Build.Tag()])
		if err != nil {
			return &notLoaded{kind: fault.Skipped, detail: err.Error()}
		}
		if !slices.Contains(offered, p) {
			return &notLoaded{kind: fault.Skipped, detail: fmt.Sprintf("%s does not serve %s (its image declares %s in label %s; the target's README says why): give --protocol one of those, or leave %s out", c.Target, p, joined(offered), container.LabelProtocols, c.Target)}
		}
	}
	c.Spec.Protocol = p
	if !p.TLS() {
		return nil
	}
	if r.RemoteHost != "" {
		return &notLoaded{kind: fault.Skipped, detail: fmt.Sprintf("%s needs the run's certificates, which are on this machine and the engine on %s cannot mount: run over TLS with a local engine", p, r.RemoteHost)}
	}
	set, err := r.runCerts()
	if err != nil {
		return &notLoaded{kind: fault.StartFailed, detail: err.Error()}
	}
	c.Spec.TLSDir = set.Dir
	c.Load.Request.TLS = &tls.Config{RootCAs: set.Pool}
	return nil
}

// joined lists ps as a label does, comma-separated.
func joined(ps []protocol.Protocol) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = string(p)
	}
	return strings.Join(s, ", ")
}

// runCerts are the run's certificates, made when first asked for.
func (r *Runner) runCerts() (*tlscert.Set, error) {
	if r.certs == nil {
		r.certs = &runCerts{}
	}
	return r.certs.get()
}

// dropCerts removes the run's certificates, if any were made.
func (r *Runner) dropCerts() {
	if r.certs != nil {
		r.certs.remove()
		r.certs = nil
	}
}
