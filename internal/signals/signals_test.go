package signals

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

const jvmAnswer = `{"schema":1,"runtime":"jvm","cpuMs":1200,"gc":{"count":3,"pauseMs":40,"maxPauseMs":12},"jitMs":800,
"safepoint":null,"eventLoop":null,"threads":{"live":40,"blocked":2},
"pools":[{"name":"tomcat","kind":"threads","size":200,"busy":17,"waiting":null},{"name":"hikari","kind":"connections","size":10,"busy":3,"waiting":0}],
"unavailable":{"safepoint":"no public API","eventLoop":"a JVM has none"}}`

func TestDecode(t *testing.T) {
	for _, c := range []struct {
		name, body, err string
	}{
		{"the contract's example", jvmAnswer, ""},
		{"not JSON", `{"schema":`, "not a JSON object"},
		{"a member left out", strings.Replace(jvmAnswer, `"jitMs":800,`, "", 1), "missing jitMs"},
		{"another schema", strings.Replace(jvmAnswer, `"schema":1`, `"schema":2`, 1), "schema 2, this iotbench reads 1"},
		{"more busy than its size", strings.Replace(jvmAnswer, `"busy":3`, `"busy":11`, 1), `pool "hikari" of kind "connections": size 10, busy 11`},
		{"a name with markup", strings.Replace(jvmAnswer, `"hikari"`, `"<b>"`, 1), `pool "<b>"`},
		{"a pool twice", strings.Replace(jvmAnswer, `"tomcat"`, `"hikari"`, 1), `pool "hikari" given twice`},
		{"negative waiting", strings.Replace(jvmAnswer, `"waiting":0`, `"waiting":-1`, 1), `pool "hikari"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := Decode([]byte(c.body))
			if c.err == "" {
				if err != nil || r.Runtime != "jvm" || len(r.Pools) != 2 || r.Pools[0].Waiting != nil || *r.Pools[1].Waiting != 0 || r.Safepoint != nil {
					t.Fatalf("Decode = %+v, %v", r, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("Decode error %v, want %q", err, c.err)
			}
		})
	}
}

func TestSummarizeTakesCountersGrowthAndReadsWorst(t *testing.T) {
	waiting := func(n int) *int { return &n }
	reading := func(pauseMs, maxPause, active, idle, p99 float64, busy, wait int) Reading {
		return Reading{Runtime: "node", GC: &GC{PauseMs: pauseMs, MaxPauseMs: maxPause},
			EventLoop: &EventLoop{ActiveMs: active, IdleMs: idle, DelayP99Ms: p99, DelayMaxMs: 2 * p99},
			Pools:     []Pool{{Name: "pg", Kind: "connections", Size: 10, Busy: busy, Waiting: waiting(wait)}}}
	}
	readings := []Reading{
		reading(500, 90, 10_000, 10_000, 80, 10, 50), // before the phase: its maxima are not the phase's
		reading(600, 30, 10_800, 10_200, 5, 4, 0),
		reading(700, 20, 11_700, 10_300, 9, 8, 3),
	}
	p, err := Summarize(readings, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !p.GCRead || p.GCShare != 0.1 || p.GCMaxPause != 30*time.Millisecond {
		t.Errorf("GC share %v, longest %v; want 0.1 (200 ms of 2 s), 30ms", p.GCShare, p.GCMaxPause)
	}
	if !p.LoopRead || p.Utilization != 0.85 || p.Delay != 9*time.Millisecond || p.DelayMax != 18*time.Millisecond {
		t.Errorf("loop %v, delay %v max %v; want 0.85 (1,700 of 2,000 ms), 9ms, 18ms", p.Utilization, p.Delay, p.DelayMax)
	}
	want := PoolUse{Name: "pg", Kind: "connections", Size: 10, BusyMax: 8, BusyMean: 6, WaitingRead: true, WaitingMax: 3, Waited: 0.5}
	if len(p.Pools) != 1 || p.Pools[0] != want {
		t.Errorf("pools %+v, want %+v", p.Pools, want)
	}
	if _, err := Summarize(readings[:1], time.Second); err == nil {
		t.Error("one reading summed up a phase")
	}
}

func TestBusiestIsNearestItsSize(t *testing.T) {
	p := Phase{Pools: []PoolUse{
		{Name: "tomcat", Size: 200, BusyMean: 150},
		{Name: "hikari", Size: 10, BusyMean: 9},
		{Name: "fanout", Size: 10, BusyMean: 1},
	}}
	if b, ok := p.Busiest(); !ok || b.Name != "hikari" {
		t.Errorf("busiest %+v, want hikari (0.9 of its size)", b)
	}
	if _, ok := (Phase{}).Busiest(); ok {
		t.Error("a phase without pools has a busiest")
	}
}

func TestPoolsRoundTrip(t *testing.T) {
	pools := []PoolUse{
		{Name: "tomcat", Kind: "threads", Size: 200, BusyMax: 200, BusyMean: 187.25},
		{Name: "hikari", Kind: "connections", Size: 10, BusyMax: 10, BusyMean: 9.5, WaitingRead: true, WaitingMax: 140, Waited: 0.75},
	}
	text := FormatPools(pools)
	if text != "tomcat:threads:200:200:187.25:-:- hikari:connections:10:10:9.50:140:0.75" {
		t.Errorf("FormatPools = %q", text)
	}
	back, err := ParsePools(text)
	if err != nil || fmt.Sprint(back) != fmt.Sprint(pools) {
		t.Errorf("ParsePools = %+v, %v; want %+v", back, err, pools)
	}
	for _, bad := range []string{"tomcat:threads:0:0:0:-:-", "a:b:10:11:1:-:-", "a:b:10:5:6:-:-", "a:b:10:5:1:x:-", "a:b:10:5:1:3:1.5", "a:b:10:5:1:3:-", "A:b:1:1:1:-:-", "a:b:1:1"} {
		if _, err := ParsePools(bad); err == nil {
			t.Errorf("ParsePools(%q) accepted", bad)
		}
	}
}

// A watch reads the endpoint over the phase, in-process: the first read opens it, Stop closes it
// with one more.
func TestWatchReadsOverThePhase(t *testing.T) {
	var mu sync.Mutex
	reads := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		reads++
		n := reads
		mu.Unlock()
		var v map[string]any
		json.Unmarshal([]byte(jvmAnswer), &v)
		v["gc"] = map[string]any{"count": n, "pauseMs": 10 * n, "maxPauseMs": n}
		json.NewEncoder(w).Encode(v)
	}))
	defer srv.Close()
	w, err := Start(srv.URL, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	p, err := w.Stop()
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	n := reads
	mu.Unlock()
	// The last read's maximum is its count: the worst after the first is the last's.
	if n < 2 || !p.GCRead || p.GCMaxPause != time.Duration(n)*time.Millisecond || len(p.Pools) != 2 {
		t.Errorf("after %d reads: %+v", n, p)
	}
	down := httptest.NewServer(http.NotFoundHandler())
	defer down.Close()
	if _, err := Start(down.URL, time.Second); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("a target without the endpoint: %v", err)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(jvmAnswer))
	f.Add([]byte(`{"schema":1}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := Decode(body)
		if err != nil {
			return
		}
		for _, p := range r.Pools {
			if !name(p.Name) || p.Busy > p.Size {
				t.Fatalf("accepted pool %+v", p)
			}
		}
	})
}

func FuzzParsePools(f *testing.F) {
	f.Add("tomcat:threads:200:200:187.25:-:- hikari:connections:10:10:9.50:140:0.75")
	f.Fuzz(func(t *testing.T, text string) {
		pools, err := ParsePools(text)
		if err != nil {
			return
		}
		back, err := ParsePools(FormatPools(pools))
		if err != nil || len(back) != len(pools) {
			t.Fatalf("%q read as %+v, written back unreadable: %v", text, pools, err)
		}
	})
}
