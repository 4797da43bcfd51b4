//go:build e2e

package e2e

import (
	"context"
	"regexp"
	"strings"
	"testing"
)

// TestOneJVMAndOneJSTargetLoadedOverTLSAndH2 loads spring-mvc-virtual and fastify with run over
// https and over h2, a few seconds a cell: every row over TLS 1.3 with a cipher and answers, the
// check before load passed over the protocol. express, whose image declares no h2, is skipped
// with the reason while the matrix goes on.
func TestOneJVMAndOneJSTargetLoadedOverTLSAndH2(t *testing.T) {
	for _, protocol := range []string{"https", "h2"} {
		t.Run(protocol, func(t *testing.T) {
			targets := "spring-mvc-virtual,fastify"
			if protocol == "h2" {
				targets += ",express"
			}
			out := t.TempDir()
			code, _, log := iotbench(t, context.Background(), "run", "--scenario", "io-heavy", "--targets", targets,
				"--protocol", protocol, "--rate", "100", "--duration", "3s", "--warmup", "5s", "--trials", "1",
				"--calibration=false", "--keep-disturbed", "--out", out)
			t.Log(log)
			rows := readRows(t, out)
			loaded := 0
			for _, r := range rows {
				if r.Protocol != protocol {
					t.Errorf("%s: protocol %q, want %s", r.Target, r.Protocol, protocol)
				}
				if r.Target == "express" {
					if r.Loaded() || !strings.HasPrefix(r.InvalidReason, "skipped: express does not serve h2") {
						t.Errorf("express over h2: loaded=%v reason %q, want skipped for not serving h2", r.Loaded(), r.InvalidReason)
					}
					continue
				}
				if !r.Loaded() {
					t.Errorf("%s: not loaded: %s", r.Target, r.InvalidReason)
					continue
				}
				loaded++
				if r.TLSVersion != "TLS 1.3" || r.TLSCipher == "" || r.Successes == 0 {
					t.Errorf("%s: tls_version %q cipher %q successes %d, want TLS 1.3, a cipher, answers", r.Target, r.TLSVersion, r.TLSCipher, r.Successes)
				}
				if !r.Valid {
					t.Logf("%s loaded but invalid (a shared machine): %s", r.Target, r.InvalidReason)
				}
			}
			if loaded != 2 {
				t.Errorf("%d of 2 targets loaded over %s (exit %d)", loaded, protocol, code)
			}
			if left := leftovers(t); left != "" {
				t.Errorf("containers left behind: %s", left)
			}
		})
	}
}

// TestOneJVMAndOneJSTargetOverEveryProtocol verifies spring-mvc-virtual (Tomcat, JSSE) and fastify
// (Node, OpenSSL) over each protocol their images declare: the whole contract in HTTP/1.1, over
// TLS 1.3, over h2 by ALPN and over h2c, each in a fresh container with the run's certificates.
func TestOneJVMAndOneJSTargetOverEveryProtocol(t *testing.T) {
	code, out, log := iotbench(t, context.Background(), "verify", "--targets", "spring-mvc-virtual,fastify")
	t.Log(log)
	if code != 0 || !strings.Contains(out, "all 2 target(s) pass every contract check") {
		t.Fatalf("exit %d: %s", code, out)
	}
	for _, target := range []string{"spring-mvc-virtual", "fastify"} {
		i := strings.Index(log, "verifying "+target)
		if i < 0 {
			t.Fatalf("%s was not verified", target)
		}
		part := log[i:]
		if j := strings.Index(part[1:], "] verifying "); j >= 0 {
			part = part[:j]
		}
		var over []string
		for _, m := range regexp.MustCompile(`(?m)^  over (\S+)$`).FindAllStringSubmatch(part, -1) {
			over = append(over, m[1])
		}
		if got := strings.Join(over, " "); got != "http1 https h2 h2c" {
			t.Errorf("%s verified over %q, want http1 https h2 h2c", target, got)
		}
		if n := strings.Count(part, "  ok   stats after"); n != 4 {
			t.Errorf("%s passed the whole contract %d times, want 4 (one per protocol)", target, n)
		}
	}
	if left := leftovers(t); left != "" {
		t.Errorf("containers left behind: %s", left)
	}
}
