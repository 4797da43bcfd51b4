package verify

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/iotbench/iotbench/internal/load"
)

func TestEnrichMatchesTheContract(t *testing.T) {
	doc := map[string]any{}
	for i, v := range []float64{2, 4, 4, 4, 5, 5, 7, 9} {
		doc[fmt.Sprintf("metric%02d", i+1)] = v
	}
	mean, lo, hi, sd := enrich(doc)
	if mean != 5 || lo != 2 || hi != 9 || sd != 2 {
		t.Errorf("enrich = %v %v %v %v, want 5 2 9 2 (population standard deviation)", mean, lo, hi, sd)
	}
}

func TestChecksCatchWrongWork(t *testing.T) {
	cases := []struct {
		name    string
		check   string
		answer  string
		ctype   string
		status  int
		wantErr string
	}{
		{"exact values", "cpu", `{"pi":3.141124,"trace":50545,"primes":9592}`, "application/json", 200, ""},
		{"fewer primes", "cpu", `{"pi":3.141124,"trace":50545,"primes":9000}`, "application/json", 200, "primes = 9000, want 9592"},
		{"wrong status", "cpu", `{}`, "application/json", 500, "status 500, want 200"},
		{"not JSON", "cpu", `primes`, "text/plain", 200, "want application/json"},
		{"fib", "process-data fib(25)", `{"n":25,"result":75025}`, "application/json", 200, ""},
		{"a page short of rows", "page", strings.Repeat(`<tr class="reading">x</tr>`, 49) + strings.Repeat(" ", 5000), "text/html", 200, "49 <tr"},
		{"rejection without error field", "process-data rejects 36", `{}`, "application/json", 400, `no "error" field`},
		{"ingest that skipped its wait", "ingest", `{"id":1,"processingMs":1}`, "application/json", 200, "processingMs = 1"},
	}
	checks := map[string]Check{}
	payload, _ := json.Marshal(map[string]any{"deviceId": "d", "metric01": 1.0})
	for _, c := range Contract(payload) {
		checks[c.Name] = c
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", c.ctype)
				w.WriteHeader(c.status)
				io.WriteString(w, c.answer)
			}))
			defer srv.Close()
			check, ok := checks[c.check]
			if !ok {
				t.Fatalf("no check %q", c.check)
			}
			res := Run(context.Background(), srv.URL, []Check{check})[0]
			if c.wantErr == "" && res.Err != nil || c.wantErr != "" && (res.Err == nil || !strings.Contains(res.Err.Error(), c.wantErr)) {
				t.Errorf("err = %v, want %q", res.Err, c.wantErr)
			}
		})
	}
}

func serveBody(t *testing.T, status int, body string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestRequest(t *testing.T) {
	good := serveBody(t, 200, `{"id":1}`)
	bad := serveBody(t, 200, `{"nope":1}`)
	failing := serveBody(t, 500, `{"error":"x"}`)
	cases := []struct {
		name, url, want string
	}{
		{"passes", good, ""},
		{"body without the marker", bad, `answered 200 {"nope":1}`},
		{"server error", failing, "answered 500"},
		{"nothing listening", "http://127.0.0.1:1/", "connection refused"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Request(context.Background(), load.Request{Method: "GET", URL: c.url}, load.NewCheck(`"id"`), time.Second)
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Errorf("Verify = %v, want %q", err, c.want)
			}
		})
	}
}
