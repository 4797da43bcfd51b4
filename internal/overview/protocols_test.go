package overview

import (
	"bytes"
	"cmp"
	"encoding/json"
	"math"
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

// protocolRows: two targets over plaintext, TLS and h2, three trials each (one invalid, so that a
// median leaves it out), and a target without a CPU figure over TLS.
func protocolRows() []results.Row {
	var rows []results.Row
	for trial := 1; trial <= 3; trial++ {
		for _, c := range []struct {
			target, protocol, cipher string
			rps, p99ms               float64
			cpuUS                    int
		}{
			{"fastify", "http1", "", 1000, 4.1, 100},
			{"fastify", "https", "TLS_AES_128_GCM_SHA256", 990, 5.3, 150},
			{"fastify", "h2", "TLS_AES_128_GCM_SHA256", 995, 4.8, 120},
			{"spring-mvc-virtual", "http1", "", 1000, 3.2, 200},
			{"spring-mvc-virtual", "https", "TLS_AES_256_GCM_SHA384", 1000, 3.9, 0},
		} {
			r := results.Row{Scenario: "io-heavy", Target: c.target, Trial: trial, Mode: "open", RequestedRPS: 1000,
				ThroughputRPS: c.rps - float64(trial), SuccessRatio: 1, Duration: 10 * time.Second, Valid: true,
				LatencyP99:    time.Duration((c.p99ms + 0.1*float64(trial)) * float64(time.Millisecond)),
				CPUPerRequest: time.Duration(c.cpuUS+trial) * time.Microsecond, Protocol: c.protocol, TLSCipher: c.cipher}
			if c.cpuUS == 0 {
				r.CPUPerRequest = 0
			}
			if c.target == "fastify" && c.protocol == "h2" && trial == 3 {
				r.Valid, r.InvalidReason, r.SuccessRatio = false, "success ratio 90.00% < 99%", 0.9
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// TestProtocolsInEveryFormat: markdown and JSON carry the table of each target over each
// protocol (pinned by golden files), and every format prints the one model's figures in it.
func TestProtocolsInEveryFormat(t *testing.T) {
	o := summary.FromRows(protocolRows())
	over := o.Scenarios[0].Protocols
	if len(over) != 5 {
		t.Fatalf("%d figures over protocols, want 5", len(over))
	}
	var table, md, js, page bytes.Buffer
	if err := WriteTable(&table, o); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarkdown(&md, o); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&js, o); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&page, o, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	goldenFile(t, "protocols.md", md.Bytes())
	goldenFile(t, "protocols.json", js.Bytes())

	var doc struct {
		Scenarios []struct {
			Protocols []struct {
				Target, Protocol string
				Valid            int                       `json:"valid_trials"`
				Throughput       struct{ Median float64 }  `json:"throughput_rps"`
				P99              struct{ Median float64 }  `json:"latency_p99_ms"`
				CPU              *struct{ Median float64 } `json:"cpu_us_per_request"`
				Change           *float64                  `json:"cpu_per_request_change"`
				Cipher           string                    `json:"tls_cipher"`
			} `json:"protocols"`
		} `json:"scenarios"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	within := func(printed, model float64) bool { return math.Abs(printed-model) <= 0.005*math.Abs(model)+0.006 }
	// model is an estimate's median, NaN where it has none (a format prints "—").
	model := func(e *summary.Estimate) float64 {
		if e == nil {
			return math.NaN()
		}
		return e.Median
	}
	// same says a printed figure is the model's; the change is printed in whole percents.
	same := func(k int, printed, want float64) bool {
		if math.IsNaN(want) || math.IsNaN(printed) {
			return math.IsNaN(want) && math.IsNaN(printed)
		}
		return k == 4 && math.Abs(printed-want) <= 0.5 || within(printed, want)
	}
	for i, p := range over {
		change := math.NaN()
		if p.CPUChange != nil {
			change = 100 * *p.CPUChange
		}
		want := []float64{float64(p.Valid), model(p.Throughput), model(p.P99), model(p.CPUPerRequest), change}
		j := doc.Scenarios[0].Protocols[i]
		if j.Target != p.Target || j.Protocol != p.Protocol || j.Cipher != p.Cipher {
			t.Errorf("json: figures %d are %s over %s (%q), the model's %s over %s (%q)", i, j.Target, j.Protocol, j.Cipher, p.Target, p.Protocol, p.Cipher)
		}
		cpu, jchange := math.NaN(), math.NaN()
		if j.CPU != nil {
			cpu = j.CPU.Median
		}
		if j.Change != nil {
			jchange = 100 * *j.Change
		}
		got := map[string][]float64{"json": {float64(j.Valid), j.Throughput.Median, j.P99.Median, cpu, jchange}}
		ciphers := map[string]string{}
		// Every other format's line: target, protocol, valid/trials, throughput, p99, CPU, change, cipher.
		for f, text := range map[string]string{"table": table.String(), "markdown": md.String(), "html": page.String()} {
			c := rowWith(rowsOf(text, f), 0, p.Target, func(r []string) bool { return len(r) > 7 && r[1] == p.Protocol })
			if c == nil {
				t.Errorf("%s: no line of %s over %s", f, p.Target, p.Protocol)
				continue
			}
			got[f] = []float64{firstNumber(c[2]), firstNumber(c[3]), firstNumber(c[4]), firstNumber(c[5]), firstNumber(c[6])}
			ciphers[f] = c[7]
		}
		for f, g := range got {
			for k := range want {
				if !same(k, g[k], want[k]) {
					t.Errorf("%s: %s over %s figure %d is %v, the model's %v", f, p.Target, p.Protocol, k, g[k], want[k])
				}
			}
			if want := map[string]string{"markdown": mdText(p.CipherText())}[f]; f != "json" && ciphers[f] != cmp.Or(want, p.CipherText()) {
				t.Errorf("%s: %s over %s cipher %q, the model's %q", f, p.Target, p.Protocol, ciphers[f], p.CipherText())
			}
		}
	}
}
