package bench

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/iotbench/iotbench/internal/protocol"
	"github.com/iotbench/iotbench/internal/results"
)

// A run over TLS makes the run's certificates once, serves each cell over its protocol (checked
// before load over it too), skips a cell whose protocol the image does not declare, and removes
// the certificates when it ends.
func TestRunOverEachProtocol(t *testing.T) {
	declared := []protocol.Protocol{protocol.HTTP1, protocol.HTTPS, protocol.H2C}
	f := &protocolLifecycle{declared: declared, serves: declared}
	p := planFor("t", "t", "t", "t")
	for i, pr := range []protocol.Protocol{protocol.HTTP1, protocol.HTTPS, protocol.H2, protocol.H2C} {
		p.Cells[i].Scenario = string(pr)
		p.Cells[i].Load.Request.Protocol = pr
	}
	p.Builds = p.Builds[:1]
	var log strings.Builder
	r := &Runner{Lifecycle: f, Log: &log, Record: func(results.Row) error { return nil }}
	rows, err := r.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	byProtocol := map[string]results.Row{}
	for _, row := range rows {
		byProtocol[row.Protocol] = row
	}
	for _, pr := range []string{"http1", "https", "h2c"} {
		row := byProtocol[pr]
		if !row.Loaded() || row.Successes == 0 || (row.TLSVersion == "TLS 1.3") != (pr == "https") {
			t.Errorf("%s: loaded %v, %d successes, TLS %q (%s); log:\n%s", pr, row.Loaded(), row.Successes, row.TLSVersion, row.InvalidReason, log.String())
		}
	}
	if row := byProtocol["h2"]; row.Loaded() || !strings.HasPrefix(row.InvalidReason, "skipped: t does not serve h2 (its image declares http1, https, h2c") {
		t.Errorf("h2: loaded %v, reason %q: want skipped, naming what the image declares", row.Loaded(), row.InvalidReason)
	}
	if len(f.specs) != 3 {
		t.Fatalf("%d targets started, want 3 (h2 skipped before starting)", len(f.specs))
	}
	var dir string
	for _, s := range f.specs {
		// Plaintext HTTP/1.1 is a target's default: its spec says no protocol.
		if !slices.Contains([]protocol.Protocol{"", protocol.HTTPS, protocol.H2C}, s.Protocol) || (s.TLSDir != "") != s.Protocol.TLS() {
			t.Errorf("spec protocol %q, certificates %q", s.Protocol, s.TLSDir)
		}
		if s.TLSDir != "" {
			dir = s.TLSDir
		}
	}
	if _, err := os.Stat(dir); dir == "" || !os.IsNotExist(err) {
		t.Errorf("the run's certificates %q: %v, want removed when the run ends", dir, err)
	}
}

// A target whose work calls downstream where its scenario does not say so (no
// check.calls_downstream) calls itself over clear HTTP/1.1 by default, which its port answers only
// over http1: over any other protocol it is given iotbench's downstream service, and verifies and
// loads as it does over http1.
func TestUndeclaredDownstreamCallOverEachProtocol(t *testing.T) {
	declared := []protocol.Protocol{protocol.HTTP1, protocol.HTTPS, protocol.H2, protocol.H2C}
	f := &protocolLifecycle{declared: declared, serves: declared, callsDownstream: true}
	p := planFor("t", "t", "t", "t")
	for i, pr := range []protocol.Protocol{protocol.HTTP1, protocol.HTTPS, protocol.H2, protocol.H2C} {
		p.Cells[i].Scenario = string(pr)
		p.Cells[i].Load.Request.Protocol = pr
	}
	p.Builds = p.Builds[:1]
	var log strings.Builder
	r := &Runner{Lifecycle: f, Log: &log, Record: func(results.Row) error { return nil }}
	rows, err := r.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		if !row.Loaded() || row.Successes == 0 {
			t.Errorf("%s: loaded %v, %d successes (%s); log:\n%s", row.Protocol, row.Loaded(), row.Successes, row.InvalidReason, log.String())
		}
	}
	for _, s := range f.specs {
		// Over http1 the target keeps its default, as the scenario asked nothing else.
		if plain := s.Protocol == ""; (s.Env["DOWNSTREAM_URL"] == "") != plain {
			t.Errorf("protocol %q: DOWNSTREAM_URL %q, want iotbench's service exactly when not http1", s.Protocol, s.Env["DOWNSTREAM_URL"])
		}
	}
	if r.downstream != nil {
		t.Error("the downstream service outlives the run")
	}
}
