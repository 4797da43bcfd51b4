// Package downstream is the service a target's /enterprise calls (docs/contract.md): GET
// /downstream waits a fixed delay and answers {"ok":true}. iotbench runs it on loopback and hands
// its address to the target as DOWNSTREAM_URL, so that no target calls itself: a thread-per-request
// server past its pool size would wait on calls needing a thread of the same pool, a deadlock
// iotbench would have made. It counts the calls it answers, so that a target's answers claiming a
// call ("downstream":true) are held to the calls it made.
package downstream

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/iotbench/iotbench/internal/delay"
)

// Delay is the contract's wait of GET /downstream.
const Delay = 20 * time.Millisecond

// Server is a running downstream service.
type Server struct {
	delay time.Duration
	calls atomic.Int64
	srv   *http.Server
	url   string
}

// Start listens on a free loopback port and serves until Close.
func Start(wait time.Duration) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{delay: wait, url: "http://" + ln.Addr().String() + "/downstream"}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /downstream", func(w http.ResponseWriter, r *http.Request) {
		s.calls.Add(1)
		if err := delay.Wait(r.Context(), s.delay); err != nil {
			if r.Context().Err() == nil {
				http.Error(w, "downstream: "+err.Error(), http.StatusServiceUnavailable)
			}
			return
		}
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

// Close stops serving, cutting calls in progress.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		return s.srv.Close()
	}
	return nil
}
