// healthsrv is the smallest target: it answers /health on $PORT, or exits at once when $FAIL is
// set, so that the lifecycle is tested against real containers. $BUSY spins that many goroutines
// and $HOG_MB holds that many MiB, touched, so that resource readings are tested too. /confined
// tells what the container allows it, as seen from inside, so that the hardening is tested too.
// /grow?mb=N touches N MiB more, and /exit?code=N exits with code N, so that the ways a target
// ends are told apart.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
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
	http.HandleFunc("/grow", func(w http.ResponseWriter, r *http.Request) {
		mb, _ := strconv.Atoi(r.URL.Query().Get("mb"))
		more := make([]byte, mb<<20)
		for i := 0; i < len(more); i += 4096 {
			more[i] = 1
		}
		hog = append(hog, more...)
		fmt.Fprintf(w, "holding %d MiB\n", len(hog)>>20)
	})
	http.HandleFunc("/exit", func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(r.URL.Query().Get("code"))
		os.Exit(code)
	})
	http.HandleFunc("/confined", func(w http.ResponseWriter, r *http.Request) {
		status := procStatus()
		pids, err := os.ReadFile("/sys/fs/cgroup/pids.max") // cgroup v2
		if err != nil {
			pids, _ = os.ReadFile("/sys/fs/cgroup/pids/pids.max") // v1
		}
		json.NewEncoder(w).Encode(map[string]any{
			"uid":          os.Getuid(),
			"capBnd":       status["CapBnd"],
			"capEff":       status["CapEff"],
			"noNewPrivs":   status["NoNewPrivs"],
			"pidsMax":      strings.TrimSpace(string(pids)),
			"rootWritable": writable("/"),
			"tmpWritable":  writable(os.TempDir()),
		})
	})
	fmt.Println(http.ListenAndServe("127.0.0.1:"+os.Getenv("PORT"), nil))
}

// procStatus is /proc/self/status as name → value.
func procStatus() map[string]string {
	out := map[string]string{}
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out
}

// writable reports whether a file can be created in dir.
func writable(dir string) bool {
	f, err := os.CreateTemp(dir, "probe-")
	if err != nil {
		return false
	}
	f.Close()
	os.Remove(f.Name())
	return true
}
