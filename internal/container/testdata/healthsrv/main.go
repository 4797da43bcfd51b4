// healthsrv is the smallest target: it answers /health on $PORT, or exits at once when $FAIL is
// set, so that the lifecycle is tested against real containers. $BUSY spins that many goroutines
// and $HOG_MB holds that many MiB, touched, so that resource readings are tested too.
package main

import (
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strconv"
)

// hog stays reachable so that the collector keeps it.
var hog []byte

func main() {
	if msg := os.Getenv("FAIL"); msg != "" {
		fmt.Println("boom:", msg)
		os.Exit(3)
	}
	if n, _ := strconv.Atoi(os.Getenv("BUSY")); n > 0 {
		for range n {
			go func() {
				for {
				}
			}()
		}
	}
	if mb, _ := strconv.Atoi(os.Getenv("HOG_MB")); mb > 0 {
		hog = make([]byte, mb<<20)
		for i := 0; i < len(hog); i += 4096 {
			hog[i] = 1
		}
	}
	http.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"status":"UP","availableProcessors":%d}`, runtime.NumCPU())
	})
	fmt.Println(http.ListenAndServe("127.0.0.1:"+os.Getenv("PORT"), nil))
}
