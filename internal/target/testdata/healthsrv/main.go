// healthsrv is the smallest target: it answers /health on $PORT, or exits at once when $FAIL is
// set, so that the lifecycle is tested against real containers.
package main

import (
	"fmt"
	"net/http"
	"os"
	"runtime"
)

func main() {
	if msg := os.Getenv("FAIL"); msg != "" {
		fmt.Println("boom:", msg)
		os.Exit(3)
	}
	http.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"status":"UP","availableProcessors":%d}`, runtime.NumCPU())
	})
	fmt.Println(http.ListenAndServe("127.0.0.1:"+os.Getenv("PORT"), nil))
}
