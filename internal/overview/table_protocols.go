package overview

import (
	"fmt"
	"io"

	"github.com/iotbench/iotbench/internal/summary"
	"github.com/iotbench/iotbench/internal/units"
)

// writeProtocols puts each target's figures over each protocol side by side: the cost of TLS
// (and h2) to its runtime, in CPU per request against its plaintext HTTP/1.1.
func writeProtocols(w io.Writer, over []summary.OverProtocol) error {
	if len(over) == 0 {
		return nil
	}
	fmt.Fprintf(w, "over each protocol (medians of the valid trials the self-checks trust):\n")
	t := newTable(w, "target", "protocol", "valid", "throughput rps", "p99", "CPU µs/request", "vs http1", "cipher")
	for _, o := range over {
		if err := t.Append(termText(o.Target), o.Protocol, fmt.Sprintf("%d/%d", o.Valid, o.Trials),
			median(o.Throughput, func(v float64) string { return fmt.Sprintf("%.1f", v) }),
			median(o.P99, units.MillisOrSeconds), median(o.CPUPerRequest, units.Count),
			o.CPUChangeText(), termText(o.CipherText())); err != nil {
			return err
		}
	}
	return t.Render()
}
