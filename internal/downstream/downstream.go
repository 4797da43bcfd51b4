// Package downstream is the service a target's /enterprise calls (docs/contract.md): GET
// /downstream waits a fixed delay and answers {"ok":true}. iotbench runs it on loopback and hands
// its address to the target as DOWNSTREAM_URL, so that no target calls itself: a thread-per-request
// server past its pool size would wait on calls needing a thread of the same pool, a deadlock
// iotbench would have made. It counts the calls it answers, so that a target's answers claiming a
// call ("downstream":true) are held to the calls it made.
//
// A run serves it from a helper process of its own (StartHelper, the hidden `iotbench
// downstream`) on the generator's CPUs at the lowest priority: in the generator's process it
// took more of their CPU than the generator (0.50 of a core at 8,600 calls a second against the
// generator's 0.12), and its goroutines delayed the load loop's reads, which then read as the
// generator's own delay.
package downstream

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/iotbench/iotbench/internal/delay"
	"github.com/iotbench/iotbench/internal/latency"
)

// Delay is the contract's wait of GET /downstream.
const Delay = 20 * time.Millisecond

// Service is a running downstream service, in this process (Start) or a helper's (StartHelper).
type Service interface {
	// URL is what a target calls: DOWNSTREAM_URL.
	URL() string
	// Tally is what it has done so far.
	Tally() (Tally, error)
	// Close stops it, cutting calls in progress.
	Close() error
}

// Tally is what a downstream service has done: the calls it has received since it started, the
// CPU time of its own process (zero in this one, whose time is the generator's), and by how much
// its waits overran its delay since the tally before (a late answer is in the target's latency).
type Tally struct {
	Calls int64
	CPU   time.Duration
	Late  latency.Summary
}

// lateCeiling bounds the overruns recorded: far past any the service has shown (24 ms).
const lateCeiling = 10 * time.Second

// Server is a downstream service in this process.
type Server struct {
	delay time.Duration
	calls atomic.Int64
	srv   *http.Server
	url   string

	mu   sync.Mutex
	late *latency.Recorder // since the last Tally
}

// Start listens on a free loopback port and serves until Close.
func Start(wait time.Duration) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{delay: wait, url: "http://" + ln.Addr().String() + "/downstream", late: latency.NewRecorder(lateCeiling)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /downstream", func(w http.ResponseWriter, r *http.Request) {
		s.calls.Add(1)
		began := time.Now()
		if err := delay.Wait(r.Context(), s.delay); err != nil {
			if r.Context().Err() == nil {
				http.Error(w, "downstream: "+err.Error(), http.StatusServiceUnavailable)
			}
			return
		}
		late := time.Since(began) - s.delay
		s.mu.Lock()
		s.late.Record(late)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"ok":true}`)
	})
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			panic("downstream: " + err.Error())
		}
	}()
	return s, nil
}

// URL is what a target calls: DOWNSTREAM_URL.
func (s *Server) URL() string { return s.url }

// Calls is how many calls it has received so far.
func (s *Server) Calls() int64 { return s.calls.Load() }

// Tally is its calls, and its overruns since the last tally; its CPU is this process's. It
// cannot fail: the error is the Service's, whose helper can.
func (s *Server) Tally() (Tally, error) { return s.tally(), nil }

func (s *Server) tally() Tally {
	s.mu.Lock()
	late := s.late.Summary()
	s.late = latency.NewRecorder(lateCeiling)
	s.mu.Unlock()
	return Tally{Calls: s.Calls(), Late: late}
}

// Close stops serving, cutting calls in progress.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		return s.srv.Close()
	}
	return nil
}
