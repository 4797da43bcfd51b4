package load

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"runtime"
	"testing"
	"time"
)

// rawServer answers every HTTP/1.1 request on its connections with one fixed answer, from a
// goroutine per connection that allocates nothing per request: what the engine allocates is
// then what a measurement of the process sees.
func rawServer(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	answer := []byte("HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\n{\"id\":1}")
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReaderSize(c, 4096)
				body := make([]byte, 7)
				for {
					// The engine's requests end with their body, {"x":1}, after an empty line.
					line, err := r.ReadSlice('\n')
					if err != nil {
						return
					}
					if len(line) == 2 { // the empty line: the body follows
						if _, err := r.Read(body); err != nil {
							return
						}
						if _, err := c.Write(answer); err != nil {
							return
						}
					}
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String() + "/"
}

// What the engine allocates over an open-loop phase, per request and per second, at two rates:
// iotbench run holds the garbage collector back until the heap nears 1 GiB (GeneratorGC), so
// whatever is allocated stays in the process's memory until then. A cost that stays per second
// when the rate changes is the per-second work (the timeline closing each second: its percentiles
// and its encoded histogram), not the requests'. Prints its figures; no bound on them.
//
//	go test -run - -bench OpenLoopMemory ./internal/load
func BenchmarkOpenLoopMemory(b *testing.B) {
	url := rawServer(b)
	for _, rate := range []int{1000, 5000} {
		b.Run(fmt.Sprintf("%drps", rate), func(b *testing.B) {
			const du = 3 * time.Second
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				res, err := Run(context.Background(), config(url, Model{Rate: rate, ExpectedLatency: time.Millisecond}, du))
				if err != nil {
					b.Fatal(err)
				}
				runtime.ReadMemStats(&after)
				allocated := float64(after.TotalAlloc - before.TotalAlloc)
				b.ReportMetric(allocated/float64(res.Requests), "B-allocated/request")
				b.ReportMetric(allocated/du.Seconds(), "B-allocated/s")
				b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(res.Requests), "allocs/request")
			}
		})
	}
}
