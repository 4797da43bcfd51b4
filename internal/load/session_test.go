package load

import (
	"context"
	"testing"
	"time"
)

// A session's loads go on over the connections the first opened; separate Runs open their own.
// The open loop's step cannot dial: its in-flight bound (16, the least) is the connections the
// closed loop left open. A connection the target closed between two loads is not sent on: the
// load after it opens new ones, before its phase as a closed loop does, and loses no request.
func TestASessionKeepsItsConnections(t *testing.T) {
	const conns = 16
	closedLoop := func(url string) Config { return config(url, Model{Connections: conns}, 300*time.Millisecond) }
	openLoop := func(url string) Config { return config(url, Model{Rate: 50}, 500*time.Millisecond) }
	for _, tc := range []struct {
		name    string
		session bool
		// the connections the server has accepted after the closed loop, the open loop, and
		// the closed loop again once the server dropped every connection
		want [3]int64
	}{
		{"one session", true, [3]int64{conns, conns, 2 * conns}},
		{"separate runs", false, [3]int64{conns, conns + 1, 2*conns + 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, accepted := countingServer(t, (&stub{}).ServeHTTP, 0)
			s := NewSession()
			defer s.Close()
			run := func(cfg Config) {
				t.Helper()
				var res Result
				var err error
				if tc.session {
					res, err = s.Run(context.Background(), cfg)
				} else {
					res, err = Run(context.Background(), cfg)
				}
				if err != nil {
					t.Fatal(err)
				}
				if res.Requests == 0 || res.Successes != res.Requests {
					t.Fatalf("%d of %d requests succeeded: %v", res.Successes, res.Requests, res.ErrorKinds)
				}
				// A closed loop's connections are open before its phase, kept ones found closed
				// first: its handshakes are not measured.
				if cfg.Model.Connections > 0 && res.Connections.Opened != 0 {
					t.Errorf("a closed loop opened %d connections in its measured phase", res.Connections.Opened)
				}
			}
			check := func(i int) {
				t.Helper()
				// Separate runs open at least one connection a run; a session, none it need not.
				if got := accepted.Load(); tc.session && got != tc.want[i] || !tc.session && got < tc.want[i] {
					t.Errorf("after load %d: %d connections accepted, want %d%s", i+1, got, tc.want[i], map[bool]string{false: " or more"}[tc.session])
				}
			}
			run(closedLoop(srv.URL))
			check(0)
			run(openLoop(srv.URL))
			check(1)
			srv.CloseClientConnections()
			run(closedLoop(srv.URL))
			check(2)
		})
	}
}

// A load to another address starts on new connections, and the old ones are closed.
func TestASessionMovesToAnotherTarget(t *testing.T) {
	first, onFirst := countingServer(t, (&stub{}).ServeHTTP, 0)
	second, onSecond := countingServer(t, (&stub{}).ServeHTTP, 0)
	s := NewSession()
	defer s.Close()
	for _, url := range []string{first.URL, second.URL} {
		res, err := s.Run(context.Background(), config(url, Model{Connections: 4}, 200*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		if res.Requests == 0 || res.Successes != res.Requests {
			t.Fatalf("%s: %d of %d requests succeeded: %v", url, res.Successes, res.Requests, res.ErrorKinds)
		}
	}
	if onFirst.Load() != 4 || onSecond.Load() != 4 {
		t.Errorf("connections accepted: %d by the first target, %d by the second; want 4 each", onFirst.Load(), onSecond.Load())
	}
	if s.a == nil || s.a.open != 4 {
		t.Errorf("the session holds %v connections, want the second target's 4", s.a)
	}
}
