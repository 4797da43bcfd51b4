package verify

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
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
		{"rejection without error field", "process-data rejects 41", `{}`, "application/json", 400, `no "error" field`},
		{"ingest that skipped its wait", "ingest", `{"id":1,"processingMs":1}`, "application/json", 200, "processingMs = 1"},
	}
	checks := map[string]Case{}
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
			res := Run(context.Background(), srv.URL, []Case{check})[0]
			if c.wantErr == "" && res.Err != nil || c.wantErr != "" && (res.Err == nil || !strings.Contains(res.Err.Error(), c.wantErr)) {
				t.Errorf("err = %v, want %q", res.Err, c.wantErr)
			}
		})
	}
}

// serve answers every request with status, Content-Type ctype and body, after delay.
func serve(t *testing.T, status int, ctype, body string, delay time.Duration) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(delay)
		if ctype != "" {
			w.Header().Set("Content-Type", ctype)
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestRequestCatchesBrokenTargets(t *testing.T) {
	const ingest = `{"id":7,"processingMs":50.2}`
	jsonType := "application/json; charset=utf-8"
	asIngest := load.Check{Contains: []string{`"processingMs"`}, ContentType: "application/json",
		JSONFields: []string{"id", "processingMs"}, MinLatency: 50 * time.Millisecond}
	cases := []struct {
		name   string
		url    string
		expect load.Check
		want   string
	}{
		{"a target that does the work", serve(t, 200, jsonType, ingest, 55*time.Millisecond), asIngest, ""},
		{"skipping the sleep", serve(t, 200, jsonType, ingest, 0), asIngest, "sooner than the 50ms its work takes"},
		{"truncated JSON", serve(t, 200, jsonType, `{"id":7,"processingMs":50`, 55*time.Millisecond), asIngest, "not a JSON object"},
		{"a field missing", serve(t, 200, jsonType, `{"processingMs":50,"ID":7}`, 55*time.Millisecond), asIngest, `no "id" field`},
		{"a null field", serve(t, 200, jsonType, `{"processingMs":50,"id":null}`, 55*time.Millisecond), asIngest, `no "id" field`},
		{"JSON sent as text", serve(t, 200, "text/plain", ingest, 55*time.Millisecond), asIngest, `Content-Type "text/plain"`},
		{"body without the marker", serve(t, 200, jsonType, `{"nope":1}`, 0), load.NewCheck(`"id"`), `does not contain "\"id\""`},
		{"server error", serve(t, 500, jsonType, `{"error":"x"}`, 0), load.Check{}, "answered 500"},
		// The answer is quoted in the reason every report prints: shown, not obeyed.
		{"escape codes in the answer", serve(t, 500, "text/plain", "oops\x1b[2J\x1b[Hequivalent", 0), load.Check{}, `answered 500 oops\x1b[2J\x1b[Hequivalent`},
		{"nothing listening", "http://127.0.0.1:1/", load.Check{}, "connection refused"},
		{"a page", serve(t, 200, "text/html;charset=UTF-8", `<table><tr class="reading">`, 0),
			load.Check{Contains: []string{`<tr class="reading">`}, ContentType: "text/html"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Request(context.Background(), load.Request{Method: "POST", URL: c.url}, c.expect, time.Second)
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Errorf("Request = %v, want %q", err, c.want)
			}
		})
	}
}

func TestRequestSendsEveryTry(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		// Only the first answer is right: one lucky answer must not pass.
		if n.Add(1) == 1 {
			io.WriteString(w, `{"id":1}`)
		}
	}))
	defer srv.Close()
	err := Request(context.Background(), load.Request{Method: "GET", URL: srv.URL}, load.NewCheck(`"id"`), time.Second)
	if err == nil || !strings.Contains(err.Error(), "request 2 of 3") {
		t.Errorf("Request = %v, want the second request named", err)
	}
}

func TestStoredRows(t *testing.T) {
	cases := []struct {
		name, url string
		want      int64
		wantErr   string
	}{
		{"rows", serve(t, 200, "application/json", `{"rows":57}`, 0), 57, ""},
		{"no rows field", serve(t, 200, "application/json", `{"count":57}`, 0), 0, `want 200 {"rows":n}`},
		{"not found", serve(t, 404, "text/plain", `no`, 0), 0, "answered 404"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := StoredRows(context.Background(), nil, c.url)
			if got != c.want || c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Errorf("StoredRows = %d, %v; want %d, %q", got, err, c.want, c.wantErr)
			}
		})
	}
}

func TestRowsGrew(t *testing.T) {
	cases := []struct {
		name                               string
		before, after, successes, failures int64
		want                               string
	}{
		{"every success stored", 50, 150, 100, 0, ""},
		{"timed-out requests that stored", 50, 152, 100, 5, ""},
		{"200 without storing", 50, 50, 100, 0, "did not store"},
		{"one row short", 50, 149, 100, 5, "did not store"},
		{"more rows than requests", 50, 160, 100, 5, "something else wrote"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := RowsGrew(c.before, c.after, c.successes, c.failures)
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Errorf("RowsGrew = %v, want %q", err, c.want)
			}
		})
	}
}

// The fan-out check passes a target whose sub-tasks queue on ten workers and fails one that runs
// every request's sub-tasks at once (the bound is what seed 002's result is about).
func TestFanoutCheckSeesTheBound(t *testing.T) {
	var check Case
	for _, c := range Contract(nil) {
		if c.Name == "fanout ×3 at once" {
			check = c
		}
	}
	if check.Together != 3 {
		t.Fatalf("no fan-out check sending 3 at once: %+v", check)
	}
	workers := make(chan struct{}, 10)
	bounded := func(w http.ResponseWriter, _ *http.Request) {
		done := make(chan struct{}, 10)
		for range 10 {
			go func() {
				workers <- struct{}{}
				time.Sleep(50 * time.Millisecond)
				<-workers
				done <- struct{}{}
			}()
		}
		for range 10 {
			<-done
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"tasks":10,"waitedMs":500}`)
	}
	unbounded := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"tasks":10,"waitedMs":500}`)
	}
	for _, c := range []struct {
		name    string
		handler http.HandlerFunc
		wantErr string
	}{
		{"ten workers", bounded, ""},
		{"no bound", unbounded, "is the executor bounded?"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(c.handler)
			defer srv.Close()
			err := Run(context.Background(), srv.URL, []Case{check})[0].Err
			if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Errorf("err = %v, want %q", err, c.wantErr)
			}
		})
	}
}
