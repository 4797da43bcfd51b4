// Package signals reads what a target's runtime says of itself on its signals port (docs/contract.md,
// "Signals"): GC, JIT, safepoints, the event loop, threads and the pools that bound its concurrent
// work, about once a second over a measured phase, and sums a phase up for the rules that name what
// limited it (internal/limit). The port is never the load's, so that a read does not queue behind
// requests, and nothing here runs on the load's path.
package signals

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/iotbench/iotbench/internal/periodic"
)

// Schema is the version of /signals' answer this package reads.
const Schema = 1

// Every is how often a phase's signals are read: often enough to see a pool fill for a second,
// seldom enough to cost the target nothing it would notice (a read is a few counters).
const Every = time.Second

// Env is the variable that gives a target its signals port.
const Env = "SIGNALS_PORT"

// Reading is one answer of /signals. Members a runtime cannot tell are nil, with the reason in
// Unavailable.
type Reading struct {
	Schema      int               `json:"schema"`
	Runtime     string            `json:"runtime"`
	CPUMs       *float64          `json:"cpuMs"`
	GC          *GC               `json:"gc"`
	JITMs       *float64          `json:"jitMs"`
	Safepoint   *Safepoint        `json:"safepoint"`
	EventLoop   *EventLoop        `json:"eventLoop"`
	Threads     *Threads          `json:"threads"`
	Pools       []Pool            `json:"pools"`
	Unavailable map[string]string `json:"unavailable"`
}

// GC is the collector's pauses so far; MaxPauseMs the longest since the previous read.
type GC struct {
	Count      int64   `json:"count"`
	PauseMs    float64 `json:"pauseMs"`
	MaxPauseMs float64 `json:"maxPauseMs"`
}

// Safepoint is the JVM's safepoints so far and the time threads stood still at them.
type Safepoint struct {
	Count int64   `json:"count"`
	Ms    float64 `json:"ms"`
}

// EventLoop is the loop's busy and idle time so far, and its delay since the previous read.
type EventLoop struct {
	ActiveMs   float64 `json:"activeMs"`
	IdleMs     float64 `json:"idleMs"`
	DelayP99Ms float64 `json:"delayP99Ms"`
	DelayMaxMs float64 `json:"delayMaxMs"`
}

// Threads is the process's live threads now and those blocked on a monitor now.
type Threads struct {
	Live    int `json:"live"`
	Blocked int `json:"blocked"`
}

// Pool is one pool that bounds concurrent work, now: Waiting is nil where the pool does not
// count its waiters.
type Pool struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Size    int    `json:"size"`
	Busy    int    `json:"busy"`
	Waiting *int   `json:"waiting"`
}

// members are the answer's members, each required (null where unknown).
var members = []string{"schema", "runtime", "cpuMs", "gc", "jitMs", "safepoint", "eventLoop", "threads", "pools", "unavailable"}

// Decode reads one answer, refusing one of another schema or missing a member: a target that
// answers half the contract is a target to fix, not one whose silence means "fine".
func Decode(body []byte) (Reading, error) {
	var present map[string]json.RawMessage
	if err := json.Unmarshal(body, &present); err != nil {
		return Reading{}, fmt.Errorf("not a JSON object: %v", err)
	}
	var missing []string
	for _, m := range members {
		if _, ok := present[m]; !ok {
			missing = append(missing, m)
		}
	}
	if len(missing) > 0 {
		return Reading{}, fmt.Errorf("missing %s (docs/contract.md, \"Signals\": every member present, null where unknown)", strings.Join(missing, ", "))
	}
	var r Reading
	if err := json.Unmarshal(body, &r); err != nil {
		return Reading{}, err
	}
	if r.Schema != Schema {
		return Reading{}, fmt.Errorf("schema %d, this iotbench reads %d", r.Schema, Schema)
	}
	seen := map[string]bool{}
	for _, p := range r.Pools {
		if seen[p.Name] {
			return Reading{}, fmt.Errorf("pool %q given twice", p.Name)
		}
		seen[p.Name] = true
		if !name(p.Name) || !name(p.Kind) || p.Size < 1 || p.Busy < 0 || p.Busy > p.Size || p.Waiting != nil && *p.Waiting < 0 {
			return Reading{}, fmt.Errorf("pool %q of kind %q: size %d, busy %d: a pool's name and kind are lower-case words, its size 1 or more, its busy 0 to its size", p.Name, p.Kind, p.Size, p.Busy)
		}
	}
	return r, nil
}

// Read asks url (the target's /signals) once.
func Read(ctx context.Context, url string) (Reading, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return Reading{}, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return Reading{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return Reading{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return Reading{}, fmt.Errorf("%s answered %s", url, resp.Status)
	}
	r, err := Decode(body)
	if err != nil {
		return Reading{}, fmt.Errorf("%s: %w", url, err)
	}
	return r, nil
}

// URL is the signals endpoint of a target whose signals port is port on host.
func URL(host string, port int) string {
	return "http://" + host + ":" + strconv.Itoa(port) + "/signals"
}

// client reads every target's signals: never through a proxy (a target is on loopback or on a
// host of the run's), one idle connection per target kept between reads.
var client = &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 1}}

// Watch reads a target's signals over a phase.
type Watch struct {
	p        *periodic.Watch[Reading]
	began    time.Time
	readings []Reading // under p's lock
}

// Start reads url once, then every interval until Stop. The first read's failure is Start's: a
// target that does not answer it has no signals for the phase.
func Start(url string, every time.Duration) (*Watch, error) {
	w := &Watch{began: time.Now()}
	p, err := periodic.Start(every, func() (Reading, error) { return readOnce(url) }, func(r Reading) { w.readings = append(w.readings, r) })
	if err != nil {
		return nil, err
	}
	w.p = p
	return w, nil
}

func readOnce(url string) (Reading, error) {
	ctx, cancel := context.WithTimeout(context.Background(), Every)
	defer cancel()
	return Read(ctx, url)
}

// Stop reads once more, at the phase's end, and sums the phase up. A read that failed on the way
// fails the phase's signals: its maxima would be those of the reads that happened to answer.
func (w *Watch) Stop() (Phase, error) {
	if err := w.p.Stop(); err != nil {
		return Phase{}, err
	}
	return Summarize(w.readings, time.Since(w.began))
}

// Phase is what a phase's readings say: counters as their growth over its wall time, values
// "since the previous read" as their worst, pools as their busiest and their mean.
type Phase struct {
	// GCShare is the share of the phase the collector paused the process; GCMaxPause its
	// longest pause. GCRead says the runtime told them.
	GCRead     bool
	GCShare    float64
	GCMaxPause time.Duration
	// SafepointShare is the share of the phase threads stood still at safepoints.
	SafepointRead  bool
	SafepointShare float64
	// Utilization is the event loop's busy share of the phase (summed over a cluster's loops:
	// their mean); Delay its worst p99 delay of a read's interval, DelayMax its longest.
	LoopRead    bool
	Utilization float64
	DelayRead   bool
	Delay       time.Duration
	DelayMax    time.Duration
	// BlockedMax is the most threads blocked on a monitor at one read.
	ThreadsRead bool
	BlockedMax  int
	Pools       []PoolUse
}

// PoolUse is one pool over a phase: its size, its busiest and mean busy count, its most waiters
// at one read and the share of reads that found some waiting (WaitingRead: it counts them).
type PoolUse struct {
	Name, Kind  string
	Size        int
	BusyMax     int
	BusyMean    float64
	WaitingRead bool
	WaitingMax  int
	Waited      float64
}

// Summarize sums readings, in order, taken over wall. The first reading opens the phase: its
// "since the previous read" values belong to the time before it.
func Summarize(readings []Reading, wall time.Duration) (Phase, error) {
	if len(readings) < 2 || wall <= 0 {
		return Phase{}, errors.New("fewer than two reads over the phase")
	}
	first, last := readings[0], readings[len(readings)-1]
	ms := float64(wall) / float64(time.Millisecond)
	var p Phase
	if first.GC != nil && last.GC != nil {
		p.GCRead = true
		p.GCShare = share(last.GC.PauseMs-first.GC.PauseMs, ms)
		for _, r := range readings[1:] {
			if r.GC != nil {
				p.GCMaxPause = max(p.GCMaxPause, millis(r.GC.MaxPauseMs))
			}
		}
	}
	if first.Safepoint != nil && last.Safepoint != nil {
		p.SafepointRead = true
		p.SafepointShare = share(last.Safepoint.Ms-first.Safepoint.Ms, ms)
	}
	if first.EventLoop != nil && last.EventLoop != nil {
		active := last.EventLoop.ActiveMs - first.EventLoop.ActiveMs
		idle := last.EventLoop.IdleMs - first.EventLoop.IdleMs
		if active+idle > 0 {
			p.LoopRead = true
			p.Utilization = active / (active + idle)
		}
		p.DelayRead = true
		for _, r := range readings[1:] {
			if r.EventLoop != nil {
				p.Delay = max(p.Delay, millis(r.EventLoop.DelayP99Ms))
				p.DelayMax = max(p.DelayMax, millis(r.EventLoop.DelayMaxMs))
			}
		}
	}
	pools := map[string]*PoolUse{}
	var order []string
	reads := 0
	for _, r := range readings[1:] {
		reads++
		if r.Threads != nil {
			p.ThreadsRead = true
			p.BlockedMax = max(p.BlockedMax, r.Threads.Blocked)
		}
		for _, pl := range r.Pools {
			u, ok := pools[pl.Name]
			if !ok {
				u = &PoolUse{Name: pl.Name, Kind: pl.Kind, WaitingRead: pl.Waiting != nil}
				pools[pl.Name] = u
				order = append(order, pl.Name)
			}
			u.Size = max(u.Size, pl.Size)
			u.BusyMax = max(u.BusyMax, pl.Busy)
			u.BusyMean += float64(pl.Busy)
			if pl.Waiting != nil {
				u.WaitingMax = max(u.WaitingMax, *pl.Waiting)
				if *pl.Waiting > 0 {
					u.Waited++
				}
			} else {
				u.WaitingRead = false
			}
		}
	}
	for _, name := range order {
		u := pools[name]
		u.BusyMean /= float64(reads)
		u.Waited /= float64(reads)
		p.Pools = append(p.Pools, *u)
	}
	return p, nil
}

func share(ms, wallMs float64) float64 {
	return min(max(ms/wallMs, 0), 1)
}

func millis(ms float64) time.Duration {
	return time.Duration(ms * float64(time.Millisecond))
}

// Busiest is the pool nearest its size on average (ties: the one with more waiting); false when
// the phase read none.
func (p Phase) Busiest() (PoolUse, bool) {
	if len(p.Pools) == 0 {
		return PoolUse{}, false
	}
	return slices.MaxFunc(p.Pools, func(a, b PoolUse) int {
		if c := cmp.Compare(a.BusyMean/float64(a.Size), b.BusyMean/float64(b.Size)); c != 0 {
			return c
		}
		return a.WaitingMax - b.WaitingMax
	}), true
}

// FormatPools writes pools as a results file holds them: one "name:kind:size:busiest:mean:waiting:waited"
// each, space-separated, waiting and waited "-" where the pool does not count its waiters.
func FormatPools(pools []PoolUse) string {
	parts := make([]string, len(pools))
	for i, p := range pools {
		waiting, waited := "-", "-"
		if p.WaitingRead {
			waiting, waited = strconv.Itoa(p.WaitingMax), strconv.FormatFloat(p.Waited, 'f', 2, 64)
		}
		parts[i] = fmt.Sprintf("%s:%s:%d:%d:%s:%s:%s", p.Name, p.Kind, p.Size, p.BusyMax, strconv.FormatFloat(p.BusyMean, 'f', 2, 64), waiting, waited)
	}
	return strings.Join(parts, " ")
}

// ParsePools reads what FormatPools wrote.
func ParsePools(text string) ([]PoolUse, error) {
	var pools []PoolUse
	for _, part := range strings.Fields(text) {
		f := strings.Split(part, ":")
		if len(f) != 7 || !name(f[0]) || !name(f[1]) {
			return nil, fmt.Errorf("pool %q: name:kind:size:busiest:mean:waiting:waited", part)
		}
		p := PoolUse{Name: f[0], Kind: f[1]}
		var err error
		if p.Size, err = strconv.Atoi(f[2]); err != nil || p.Size < 1 {
			return nil, fmt.Errorf("pool %q: its size is a whole number of 1 or more", part)
		}
		if p.BusyMax, err = strconv.Atoi(f[3]); err != nil || p.BusyMax < 0 || p.BusyMax > p.Size {
			return nil, fmt.Errorf("pool %q: its busiest is a whole number from 0 to its size", part)
		}
		if p.BusyMean, err = strconv.ParseFloat(f[4], 64); err != nil || !(p.BusyMean >= 0 && p.BusyMean <= float64(p.BusyMax)) {
			return nil, fmt.Errorf("pool %q: its mean busy is a number from 0 to its busiest", part)
		}
		if f[5] != "-" || f[6] != "-" {
			if p.WaitingMax, err = strconv.Atoi(f[5]); err != nil || p.WaitingMax < 0 {
				return nil, fmt.Errorf("pool %q: its waiting is a whole number of 0 or more, or -", part)
			}
			if p.Waited, err = strconv.ParseFloat(f[6], 64); err != nil || !(p.Waited >= 0 && p.Waited <= 1) {
				return nil, fmt.Errorf("pool %q: its waited is a share from 0 to 1, or -", part)
			}
			p.WaitingRead = true
		}
		pools = append(pools, p)
	}
	return pools, nil
}

// name is a pool's name or kind as a file may hold it: lower-case letters, digits and dashes, so
// that nothing a target answers carries markup or separators into a file or a report.
func name(s string) bool {
	if s == "" || len(s) > 40 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}
