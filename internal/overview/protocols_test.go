package overview

import (
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/results"
	"github.com/iotbench/iotbench/internal/summary"
)

// The HTML report puts a target's figures over each protocol side by side, as the terminal's does.
func TestHTMLProtocolsSideBySide(t *testing.T) {
	var rows []results.Row
	for _, c := range []struct {
		protocol string
		cpu      time.Duration
	}{{"http1", 100 * time.Microsecond}, {"https", 150 * time.Microsecond}} {
		rows = append(rows, results.Row{Scenario: "io-heavy", Target: "fastify", Trial: 1, Mode: "open", RequestedRPS: 100,
			ThroughputRPS: 100, SuccessRatio: 1, LatencyP99: 55 * time.Millisecond, Duration: 3 * time.Second,
			Valid: true, Protocol: c.protocol, CPUPerRequest: c.cpu, TLSCipher: map[string]string{"https": "TLS_AES_128_GCM_SHA256"}[c.protocol]})
	}
	var b strings.Builder
	if err := WriteHTML(&b, summary.FromRows(rows), time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	i := strings.Index(html, "Over each protocol")
	if i < 0 {
		t.Fatal("no table of protocols in the HTML report")
	}
	for _, want := range []string{"<td class=\"text\">https</td>", "&#43;50%", "TLS_AES_128_GCM_SHA256"} {
		if !strings.Contains(html[i:], want) {
			t.Errorf("the table lacks %q", want)
		}
	}
}
