package overview

import (
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/results"
)

// Rows of one scenario over several protocols get a table of each target's figures per protocol,
// its CPU per request beside its plaintext's; rows of one protocol do not.
func TestProtocolsSideBySide(t *testing.T) {
	var rows []results.Row
	for _, c := range []struct {
		target, protocol, cipher string
		cpu                      time.Duration
	}{
		{"fastify", "https", "TLS_AES_128_GCM_SHA256", 150 * time.Microsecond},
		{"fastify", "http1", "", 100 * time.Microsecond},
		{"fastify", "h2", "TLS_AES_128_GCM_SHA256", 120 * time.Microsecond},
		{"spring-mvc-virtual", "http1", "", 200 * time.Microsecond},
		{"spring-mvc-virtual", "https", "TLS_AES_256_GCM_SHA384", 0},
	} {
		r := row(c.target, 1, 999.9, 55, true, "")
		r.Protocol, r.TLSCipher, r.CPUPerRequest = c.protocol, c.cipher, c.cpu
		rows = append(rows, r)
	}
	var b strings.Builder
	if err := Write(&b, rows); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	i := strings.Index(out, "over each protocol")
	if i < 0 {
		t.Fatalf("no table of protocols:\n%s", out)
	}
	table := out[i:]
	// Each trial says which protocol it was measured over, in the table of trials too.
	for _, want := range []string{"│ fastify (https)", "│ fastify (h2)", "│ spring-mvc-virtual (http1)"} {
		if !strings.Contains(out[:i], want) {
			t.Errorf("the trials lack %q:\n%s", want, out[:i])
		}
	}
	for _, want := range []string{"+50%", "+20%", "TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384"} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q:\n%s", want, table)
		}
	}
	// Targets by name, protocols in their order (http1 first, the base of the change).
	fast := []int{strings.Index(table, "http1"), strings.Index(table, "https"), strings.Index(table, "h2 ")}
	if fast[0] < 0 || fast[0] > fast[1] || fast[1] > fast[2] {
		t.Errorf("fastify's protocols out of order (%v):\n%s", fast, table)
	}
	b.Reset()
	if err := Write(&b, rows[3:4]); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "over each protocol") {
		t.Errorf("a table of protocols for rows of one:\n%s", b.String())
	}
}
