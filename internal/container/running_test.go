package container

import (
	"context"
	"net"
	"strings"
	"testing"
)

// A service's Start succeeds when something accepts connections at its address and fails,
// naming the address and what to do, when nothing does.
func TestRunningStartChecksTheServiceAccepts(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	open := ln.Addr().String()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refusing := closed.Addr().String()
	closed.Close()
	defer ln.Close()

	in, err := Running{BaseURL: "http://" + open}.Start(context.Background(), Spec{})
	if err != nil || in.URL() != "http://"+open {
		t.Errorf("listening service: %v, %v; want it started at its URL", in, err)
	}
	if in, err := (Running{BaseURL: "http://" + open}).Start(context.Background(), Spec{Service: "http://" + refusing}); err == nil {
		t.Errorf("a Spec's service nothing listens at: started (%v), want an error", in.URL())
	} else if msg := err.Error(); !strings.Contains(msg, "nothing accepts connections at "+refusing) ||
		!strings.Contains(msg, "connection refused") || !strings.Contains(msg, "--url") {
		t.Errorf("error %q: want the address, the cause and what to do", msg)
	}
}
