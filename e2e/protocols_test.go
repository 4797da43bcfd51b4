//go:build e2e

package e2e

import (
	"context"
	"regexp"
	"strings"
	"testing"
)

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
