// Package reference is a server whose latencies are known before it is measured: every answer
// waits a fixed delay, and, optionally, the server freezes for a while every period (as a
// stop-the-world pause does), holding the requests that arrive meanwhile until it thaws. Under
// evenly spaced arrivals its true percentiles follow in closed form (Shape.Quantile), so
// measuring it tells how far the instrument is from the truth on this machine today
// (internal/run's calibration).
package reference

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/iotbench/iotbench/internal/cpuset"
	"github.com/iotbench/iotbench/internal/delay"
	"github.com/iotbench/iotbench/internal/hostinfo"
)

// Shape is what the server does to each request.
type Shape struct {
	// Delay is every answer's wait.
	Delay time.Duration
	// Freeze, every Period, holds the requests that arrive during it until it ends; none when
	// either is zero.
	Freeze, Period time.Duration
	// Workers, when set, is how many requests it serves at once; the others queue for one: a
	// target at its capacity (Workers ÷ Delay a second), whose queue is its latency. Quantile
	// holds only without it.
	Workers int
}

// frozen is the share of the time the server is frozen.
func (s Shape) frozen() float64 {
	if s.Freeze <= 0 || s.Period <= 0 {
		return 0
	}
	return float64(min(s.Freeze, s.Period)) / float64(s.Period)
}

// Quantile is the true latency at quantile q (0 < q < 1) of requests arriving evenly over whole
// periods: the delay, and for the share f of them that arrive frozen a wait spread evenly from 0
// to the freeze, so above 1-f the wait grows linearly: Freeze × (q − (1 − f)) / f.
func (s Shape) Quantile(q float64) time.Duration {
	f := s.frozen()
	if f == 0 || q <= 1-f {
		return s.Delay
	}
	return s.Delay + time.Duration(float64(s.Freeze)*(q-(1-f))/f)
}

// wait is how long a request arriving since after the server began waits before its answer.
func (s Shape) wait(since time.Duration) time.Duration {
	if s.frozen() == 0 {
		return s.Delay
	}
	if phase := since % s.Period; phase < s.Freeze {
		return s.Freeze - phase + s.Delay
	}
	return s.Delay
}

// Server is a running reference server.
type Server struct {
	srv *http.Server
	url string
}

// Body is every answer's body.
const Body = `{"ok":true}`

// Start serves shape on a free loopback port until Close.
func Start(shape Shape) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	began := time.Now()
	var workers chan struct{}
	if shape.Workers > 0 {
		workers = make(chan struct{}, shape.Workers)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if workers != nil {
			select {
			case workers <- struct{}{}:
				defer func() { <-workers }()
			case <-r.Context().Done():
				return
			}
		}
		if err := delay.Wait(r.Context(), shape.wait(time.Since(began))); err != nil {
			if r.Context().Err() == nil {
				http.Error(w, "reference: "+err.Error(), http.StatusServiceUnavailable)
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, Body)
	})
	s := &Server{srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}, url: "http://" + ln.Addr().String() + "/"}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			panic("reference: " + err.Error())
		}
	}()
	return s, nil
}

// URL is the server's address.
func (s *Server) URL() string { return s.url }

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }

// Serve is the hidden `iotbench reference`: pinned to cpus (none: not pinned), it serves shape
// on loopback, writes its URL as a line to out, and serves until in is closed (its parent, the
// calibrating run, is done with it or gone).
func Serve(shape Shape, cpus []int, in io.Reader, out io.Writer) error {
	if len(cpus) > 0 {
		if err := hostinfo.PinServer(cpus); err != nil {
			return fmt.Errorf("pinning the reference server to CPUs %s: %w", cpuset.Format(cpus), err)
		}
	}
	srv, err := Start(shape)
	if err != nil {
		return err
	}
	defer srv.Close()
	if _, err := fmt.Fprintln(out, srv.URL()); err != nil {
		return err
	}
	if _, err := io.Copy(io.Discard, in); err != nil && !errors.Is(err, io.ErrClosedPipe) {
		return err
	}
	return nil
}
