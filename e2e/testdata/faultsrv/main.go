// faultsrv is a target that fails on purpose, for the end-to-end tests of how iotbench explains
// failures: it answers /health and GET /work ({"id":n} after 5 ms) on $PORT, exits with status 3
// after $EXIT_AFTER answers to /work, and keeps $LEAK_KB KiB, touched, per answer, so that a
// small memory limit kills it.
package main

import (
	"fmt"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"
)

func main() {
	exitAfter, _ := strconv.Atoi(os.Getenv("EXIT_AFTER"))
	leakKB, _ := strconv.Atoi(os.Getenv("LEAK_KB"))
	var mu sync.Mutex
	var served int
	var kept [][]byte
	http.HandleFunc("/health", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `{"status":"UP","runtime":"faultsrv"}`)
	})
	http.HandleFunc("/work", func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(5 * time.Millisecond)
		mu.Lock()
		served++
		n := served
		if leakKB > 0 {
			b := make([]byte, leakKB<<10)
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			kept = append(kept, b)
		}
		mu.Unlock()
		if exitAfter > 0 && n > exitAfter {
			fmt.Println("faultsrv: exiting after", exitAfter, "requests")
			os.Exit(3)
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":%d}`, n)
	})
	fmt.Println(http.ListenAndServe("127.0.0.1:"+os.Getenv("PORT"), nil))
}
