package summary

import (
	"fmt"
	"slices"

	"github.com/iotbench/iotbench/internal/protocol"
	"github.com/iotbench/iotbench/internal/results"
)

// OverProtocol is one target's figures over one protocol, in a scenario whose rows hold several:
// the cost of TLS (or h2) to a runtime, read beside its plaintext figures.
type OverProtocol struct {
	Target, Protocol string
	// Cipher is what the target's TLS stack agreed on (its first valid row's); empty in plaintext.
	Cipher string
	// Valid counts the valid trials the self-checks trust (results.Row.Distrust).
	Trials, Valid int
	// Medians over those trials; nil without one (CPUPerRequest: without a CPU figure).
	Throughput, P99, CPUPerRequest *Estimate
	// CPUChange is CPUPerRequest's median against the target's over http1, as a fraction (0.18:
	// 18% more CPU a request); nil for http1 itself or without both figures.
	CPUChange *float64
}

// overProtocols are rows' figures by target, then protocol (in protocol.All's order), when the
// rows hold more than one protocol; nil otherwise.
func overProtocols(rows []results.Row) []OverProtocol {
	type key struct {
		target   string
		protocol protocol.Protocol
	}
	by := map[key][]results.Row{}
	var keys []key
	protocols := map[protocol.Protocol]bool{}
	for _, r := range rows {
		k := key{nameOf(r), protocol.Protocol(r.ProtocolName())}
		if _, ok := by[k]; !ok {
			keys = append(keys, k)
		}
		by[k] = append(by[k], r)
		protocols[k.protocol] = true
	}
	if len(protocols) < 2 {
		return nil
	}
	order := func(p protocol.Protocol) int { return slices.Index(protocol.All, p) }
	slices.SortStableFunc(keys, func(a, b key) int {
		if a.target != b.target {
			if a.target < b.target {
				return -1
			}
			return 1
		}
		return order(a.protocol) - order(b.protocol)
	})
	var out []OverProtocol
	for _, k := range keys {
		o := OverProtocol{Target: k.target, Protocol: string(k.protocol)}
		var valid []results.Row
		for _, r := range by[k] {
			o.Trials++
			// A row the self-checks distrust is no figure to set beside another (Row.Distrust).
			if r.Valid && r.Distrust() == "" {
				valid = append(valid, r)
				if o.Cipher == "" {
					o.Cipher = r.TLSCipher
				}
			}
		}
		o.Valid = len(valid)
		o.Throughput, o.P99, o.CPUPerRequest = median(valid, "throughput"), median(valid, "p99"), median(valid, "cpu-per-request")
		out = append(out, o)
	}
	plain := map[string]*Estimate{}
	for _, o := range out {
		if o.Protocol == string(protocol.HTTP1) {
			plain[o.Target] = o.CPUPerRequest
		}
	}
	for i, o := range out {
		if base := plain[o.Target]; o.Protocol != string(protocol.HTTP1) && base != nil && base.Median > 0 && o.CPUPerRequest != nil {
			change := o.CPUPerRequest.Median/base.Median - 1
			out[i].CPUChange = &change
		}
	}
	return out
}

// CPUChangeText is CPUChange as a renderer shows it: "+18%", "—" when unknown.
func (o OverProtocol) CPUChangeText() string {
	if o.CPUChange == nil {
		return "—"
	}
	return fmt.Sprintf("%+.0f%%", 100**o.CPUChange)
}

// CipherText is Cipher as a renderer shows it: "—" in plaintext.
func (o OverProtocol) CipherText() string {
	if o.Cipher == "" {
		return "—"
	}
	return o.Cipher
}

// median is metric's estimate over rows, leaving out an optional metric's missing values.
func median(rows []results.Row, metric string) *Estimate {
	m := results.MustMetric(metric)
	var v []float64
	for _, r := range rows {
		if x := m.Value(r); !m.Optional || x != 0 {
			v = append(v, x)
		}
	}
	return estimate(v)
}
