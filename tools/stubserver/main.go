// Command stubserver is an independent HTTP server with a fixed service time and an optional share
// of failures: the yardstick for iotbench's own accuracy (make acceptance).
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"runtime/debug"
	"sync/atomic"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18999", "listen address (loopback)")
	delay := flag.Duration("delay", 50*time.Millisecond, "service time of every request")
	failPercent := flag.Int("fail-percent", 0, "answer 503 to this many of every 100 requests")
	flag.Parse()
	// A yardstick must not pause: collect only when the heap nears 256 MiB.
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(256 << 20)
	var n atomic.Int64
	// How many requests it answered (health and these counts aside), for a check that the
	// generator's count is the server's: as a number, and as the contract's /stats (docs/contract.md),
	// which iotbench holds against a writing scenario's successes.
	http.HandleFunc("/served", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "%d\n", n.Load())
	})
	http.HandleFunc("/stats", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"rows":%d}`, n.Load())
	})
	http.HandleFunc("/health", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `{"status":"UP"}`)
	})
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		time.Sleep(*delay)
		// The last failPercent of every 100 requests fail: the first ones succeed, as a
		// verification before load expects of a server that works most of the time.
		if int(n.Add(1)%100) >= 100-*failPercent {
			http.Error(w, `{"error":"injected"}`, http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, `{"id":1,"processingMs":50}`)
	})
	log.Printf("stubserver on %s: %s per request, %d%% failures", *addr, *delay, *failPercent)
	log.Fatal(http.ListenAndServe(*addr, nil))
}
