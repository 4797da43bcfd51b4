package load

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

func TestTurnsSpreadEachShareEvenly(t *testing.T) {
	cases := []struct {
		weights []int
		want    []int
	}{
		{[]int{80, 20}, []int{0, 0, 1, 0, 0}},
		{[]int{1, 1}, []int{0, 1}},
		{[]int{3}, []int{0}},
		{[]int{2, 1, 1}, []int{0, 1, 2, 0}},
	}
	for _, tc := range cases {
		var kinds []Kind
		for i, w := range tc.weights {
			kinds = append(kinds, Kind{Name: string(rune('a' + i)), Weight: w})
		}
		// a stream of its own takes no turn
		kinds = append(kinds, Kind{Name: "probe", Rate: 50})
		if got := turns(kinds); !slices.Equal(got, tc.want) {
			t.Errorf("turns of %v = %v, want %v", tc.weights, got, tc.want)
		}
	}
}

// The merged schedule of a cell's stream and one of its own: every request of each, each at
// its own due time, in time order.
func TestMixMergesStreamsAtTheirOwnDueTimes(t *testing.T) {
	cfg := Config{
		Kinds: []Kind{{Name: "heavy", Weight: 1}, {Name: "probe", Rate: 30}},
		Model: Model{Rate: 200},
	}
	m := newMix(cfg, newSchedule(cfg.Model, 1), 1)
	main, probe := Schedule(Model{Rate: 200}), Schedule(Model{Rate: 30})
	var n [2]uint64
	last := time.Duration(0)
	for i := uint64(0); ; i++ {
		at := m.due(i)
		if at > 2*time.Second {
			break
		}
		k := m.kind()
		want := main(n[0])
		if k == 1 {
			want = probe(n[1])
		}
		if at != want || at < last {
			t.Fatalf("request %d (kind %d) due at %v, want %v, after %v", i, k, at, want, last)
		}
		n[k]++
		last = at
	}
	if n[0] != 400 || n[1] != 60 {
		t.Errorf("%d and %d requests due in 2 s, want 400 and 60", n[0], n[1])
	}
}

// recorder is an in-process server that counts the requests it gets by path: /slow sleeps
// delay, /bad answers without the check's marker.
type recorder struct {
	delay time.Duration
	mu    sync.Mutex
	got   map[string]int
}

func (s *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	s.mu.Lock()
	s.got[r.Method+" "+r.URL.Path]++
	s.mu.Unlock()
	switch r.URL.Path {
	case "/slow":
		time.Sleep(s.delay)
	case "/bad":
		_, _ = io.WriteString(w, `{"nope":1}`)
		return
	}
	_, _ = io.WriteString(w, `{"id":1}`)
}

func (s *recorder) count(what string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got[what]
}

func mixConfig(url string, m Model, d time.Duration, kinds ...Kind) Config {
	for i := range kinds {
		kinds[i].Request.URL = url + kinds[i].Request.URL
		kinds[i].Check = NewCheck(`"id"`)
	}
	return Config{Kinds: kinds, Model: m, Duration: d, Timeout: 5 * time.Second}
}

func TestWeightedMixSendsEachKindItsShare(t *testing.T) {
	s := &recorder{got: map[string]int{}}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	cfg := mixConfig(srv.URL, Model{Rate: 500, ExpectedLatency: time.Millisecond}, 3*time.Second,
		Kind{Name: "ingest", Weight: 80, Request: Request{Method: http.MethodPost, URL: "/ingest", Body: []byte(`{"x":1}`)}},
		Kind{Name: "page", Weight: 20, Request: Request{Method: http.MethodGet, URL: "/page"}})
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ingest, page := s.count("POST /ingest"), s.count("GET /page")
	total := ingest + page
	// Whatever the generator managed to send (this test judges the mix, not the rate), in turns.
	if total < 1000 || int64(total) != res.Requests {
		t.Fatalf("the server got %d requests, the result says %d; want most of the 1500 due", total, res.Requests)
	}
	if share := float64(ingest) / float64(total); share < 0.8*0.98 || share > 0.8*1.02 {
		t.Errorf("ingest had %.4f of the requests, want 0.80 ±2%%", share)
	}
	if share := float64(page) / float64(total); share < 0.2*0.98 || share > 0.2*1.02 {
		t.Errorf("page had %.4f of the requests, want 0.20 ±2%%", share)
	}
	if len(res.Kinds) != 2 || res.Kinds[0].Kind != "ingest" || res.Kinds[1].Kind != "page" {
		t.Fatalf("kinds %+v, want ingest and page", res.Kinds)
	}
	k0, k1 := res.Kinds[0], res.Kinds[1]
	if k0.Requests != int64(ingest) || k1.Requests != int64(page) || k0.Successes+k1.Successes != res.Successes {
		t.Errorf("kinds counted %d and %d (%d and %d successes of %d), the server %d and %d", k0.Requests, k1.Requests, k0.Successes, k1.Successes, res.Successes, ingest, page)
	}
	if k0.RequestedRate != 400 || k1.RequestedRate != 100 || k0.Scheduled != 1200 || k1.Scheduled != 300 || res.Scheduled != 1500 {
		t.Errorf("rates %d and %d, %d and %d scheduled of %d; want 400 and 100, 1200 and 300 of 1500", k0.RequestedRate, k1.RequestedRate, k0.Scheduled, k1.Scheduled, res.Scheduled)
	}
	if k0.Latency.Count != k0.Successes || k1.Latency.Count != k1.Successes || res.Latency.Count != res.Successes {
		t.Errorf("latencies %d, %d and %d for %d, %d and %d successes", k0.Latency.Count, k1.Latency.Count, res.Latency.Count, k0.Successes, k1.Successes, res.Successes)
	}
	// Each request's seconds add up to its figures, as the whole's do to the whole's.
	for _, k := range res.Kinds {
		var sent, successes, pooled int64
		for _, sec := range k.Timeline {
			sent, successes = sent+sec.Sent, successes+sec.Successes
			if sec.Histogram != nil {
				h, err := hdrhistogram.Decode(sec.Histogram)
				if err != nil {
					t.Fatal(err)
				}
				pooled += h.TotalCount()
			}
		}
		if len(k.Timeline) < 3 || sent != k.Requests || successes != k.Successes || pooled != k.Latencies.TotalCount() {
			t.Errorf("request %s: %d seconds sent %d, answered %d successes, held %d latencies; its result %d, %d, %d", k.Kind, len(k.Timeline), sent, successes, pooled, k.Requests, k.Successes, k.Latencies.TotalCount())
		}
	}
}

func TestOwnRateStreamKeepsItsRateAndItsLatencies(t *testing.T) {
	const delay = 30 * time.Millisecond
	s := &recorder{delay: delay, got: map[string]int{}}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	cfg := mixConfig(srv.URL, Model{Rate: 300, ExpectedLatency: delay}, 2*time.Second,
		Kind{Name: "heavy", Weight: 1, Request: Request{Method: http.MethodGet, URL: "/slow"}},
		Kind{Name: "probe", Rate: 50, Request: Request{Method: http.MethodGet, URL: "/probe"}})
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	heavy, probe := res.Kinds[0], res.Kinds[1]
	if got := s.count("GET /probe"); got < 99 || got > 101 || probe.Requests != int64(got) {
		t.Errorf("the probe sent %d (the server got %d), want 100 ±1%%: 50 rps for 2 s", probe.Requests, got)
	}
	if got := s.count("GET /slow"); got < 594 || got > 606 || heavy.Requests != int64(got) {
		t.Errorf("the heavy stream sent %d (the server got %d), want 600 ±1%%", heavy.Requests, got)
	}
	// Throughput over the phase: about the probe's rate (a bound on counts, not on timing).
	if tp := probe.Throughput(); tp < 40 || tp > 51 {
		t.Errorf("the probe's throughput %.1f rps, want about 50", tp)
	}
	if probe.RequestedRate != 50 || heavy.RequestedRate != 300 || res.RequestedRate != 350 || probe.Scheduled != 100 {
		t.Errorf("rates: probe %d, heavy %d, whole %d, probe scheduled %d; want 50, 300, 350, 100", probe.RequestedRate, heavy.RequestedRate, res.RequestedRate, probe.Scheduled)
	}
	// Each kind's latencies are its own: every heavy one carries the server's sleep, and the
	// probe's fastest does not.
	if probe.Latency.Count != probe.Successes || heavy.Latency.Count != heavy.Successes || probe.Successes < 99 {
		t.Errorf("latencies %d and %d for %d and %d successes", probe.Latency.Count, heavy.Latency.Count, probe.Successes, heavy.Successes)
	}
	heavyMin := time.Duration(heavy.Latencies.Min()) * time.Microsecond
	probeMin := time.Duration(probe.Latencies.Min()) * time.Microsecond
	if heavyMin < delay-time.Millisecond || probeMin >= delay {
		t.Errorf("fastest heavy %v, fastest probe %v: want the heavy ones at least %v, the probe's below", heavyMin, probeMin, delay)
	}
	if probe.Errors != 0 || heavy.Errors != 0 {
		t.Errorf("%d and %d errors, want none: %v", probe.Errors, heavy.Errors, res.ErrorKinds)
	}
}

func TestEachKindsBodyCheckFailsOnlyItsKind(t *testing.T) {
	s := &recorder{got: map[string]int{}}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	cfg := mixConfig(srv.URL, Model{Rate: 400, ExpectedLatency: time.Millisecond}, time.Second,
		Kind{Name: "ingest", Weight: 4, Request: Request{Method: http.MethodGet, URL: "/ingest"}},
		Kind{Name: "page", Weight: 1, Request: Request{Method: http.MethodGet, URL: "/bad"}})
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ingest, page := res.Kinds[0], res.Kinds[1]
	// (The generator's own delay may invalidate a kind under -race: only the check is judged here.)
	if ingest.Errors != 0 || ingest.Successes != ingest.Requests || strings.Contains(ingest.InvalidReason, "success ratio") {
		t.Errorf("ingest: %d errors of %d, valid %v (%s); want none, valid", ingest.Errors, ingest.Requests, ingest.Valid, ingest.InvalidReason)
	}
	if page.Successes != 0 || page.Errors != page.Requests || page.Valid || !strings.Contains(page.InvalidReason, "success ratio") {
		t.Errorf("page: %d successes of %d, valid %v (%s); want every answer failing its check", page.Successes, page.Requests, page.Valid, page.InvalidReason)
	}
	if res.Valid || res.Errors != page.Errors {
		t.Errorf("whole: valid %v (%s), %d errors; want invalid, with page's %d errors", res.Valid, res.InvalidReason, res.Errors, page.Errors)
	}
}

func TestCheckKinds(t *testing.T) {
	open, closed := Model{Rate: 10}, Model{Connections: 2}
	cases := []struct {
		kinds []Kind
		m     Model
		want  string
	}{
		{[]Kind{{Name: "a", Weight: 1}, {Name: "b", Rate: 5}}, open, ""},
		{[]Kind{{Name: "a", Weight: 1}, {Name: "b", Weight: 3}}, closed, ""},
		{[]Kind{{Name: "a", Weight: 1}, {Name: "b", Rate: 5}}, closed, "beside an open loop"},
		{[]Kind{{Name: "b", Rate: 5}}, open, "no request takes a share"},
		{[]Kind{{Name: "a", Weight: 1}, {Name: "a", Weight: 1}}, open, "used twice"},
		{[]Kind{{Name: "A b", Weight: 1}}, open, "lower-case"},
		{[]Kind{{Name: "a", Weight: MaxWeight + 1}}, open, "weight"},
		{[]Kind{{Name: "a"}}, open, "weight 0"},
	}
	for _, tc := range cases {
		err := CheckKinds(tc.kinds, tc.m)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("CheckKinds(%s) = %v, want %q", FormatKinds(tc.kinds), err, tc.want)
		}
	}
}
