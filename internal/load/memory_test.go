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

// What an open-loop phase allocates for each second it lasts, at two rates: iotbench run holds
// the garbage collector back until the heap nears 1 GiB (GeneratorGC), so whatever a long phase
// allocates as it goes stays in the process's memory. Two phases, of 2 s and 6 s: the difference
// is what the 4 seconds more cost, without what any phase costs once (its histograms,
// buffers, connections). Prints its figures; no bound on them (the bytes per second were about
// 1.5 MB at either rate while each second's histogram was encoded with a new compressor).
//
//	go test -run - -bench OpenLoopMemory ./internal/load
func BenchmarkOpenLoopMemory(b *testing.B) {
	url := rawServer(b)
	allocated := func(rate int, du time.Duration) (bytes float64, requests int64) {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		res, err := Run(context.Background(), config(url, Model{Rate: rate, ExpectedLatency: time.Millisecond}, du))
		if err != nil {
			b.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return float64(after.TotalAlloc - before.TotalAlloc), res.Requests
	}
	for _, rate := range []int{1000, 5000} {
		b.Run(fmt.Sprintf("%drps", rate), func(b *testing.B) {
			for b.Loop() {
				short, n1 := allocated(rate, 2*time.Second)
				long, n2 := allocated(rate, 6*time.Second)
				b.ReportMetric((long-short)/4, "B-allocated/s")
				b.ReportMetric((long-short)/float64(n2-n1), "B-allocated/request")
			}
		})
	}
}
