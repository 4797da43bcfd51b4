package load

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestParseThink(t *testing.T) {
	for _, c := range []struct{ text, want, err string }{
		{text: "100ms", want: "100ms"},
		{text: "exp:1.5s", want: "exp:1.5s"},
		{text: "0s", err: "give a duration from 1ns to 1h"},
		{text: "exp:soon", err: `think time "exp:soon"`},
	} {
		got, err := ParseThink(c.text)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err %v, want %q", c.text, err, c.err)
			}
		case err != nil || got.String() != c.want:
			t.Errorf("%q: %v, %v; want %s", c.text, got, err, c.want)
		}
	}
}

// Users are released as they are ready: all at the start, then each a think time after its
// answer, the first ready first; none starts after the phase.
func TestThinkerReleasesReadyUsers(t *testing.T) {
	began := time.Now()
	ms := time.Millisecond
	th := newThinker(Think{Mean: 10 * ms}, 2, 1, began, time.Second)
	for i := range 2 {
		if wait, end := th.Pace(0, uint64(i)); wait != 0 || end {
			t.Fatalf("user %d at the start: wait %v end %v, want a release", i, wait, end)
		}
	}
	if wait, end := th.Pace(0, 2); wait != time.Second || end {
		t.Errorf("every user in flight: wait %v end %v, want to wait for an answer (up to the phase's end)", wait, end)
	}
	th.answered(began.Add(5 * ms)) // ready at 15 ms
	th.answered(began.Add(2 * ms)) // ready at 12 ms
	if wait, _ := th.Pace(3*ms, 2); wait != 9*ms {
		t.Errorf("at 3 ms: wait %v, want 9ms (the first ready at 12 ms)", wait)
	}
	if wait, _ := th.Pace(12*ms, 2); wait != 0 {
		t.Errorf("at 12 ms: wait %v, want a release", wait)
	}
	if wait, _ := th.Pace(12*ms, 3); wait != 3*ms {
		t.Errorf("at 12 ms, the next: wait %v, want 3ms", wait)
	}
	th.Pace(15*ms, 3)
	th.answered(began.Add(995 * ms)) // ready after the phase
	if _, end := th.Pace(996*ms, 4); !end {
		t.Error("a user ready only after the phase was released")
	}
}

// A closed loop with think time: each user completes at most one request a think time, however
// fast the target (a bound no machine can break); the row says the think time.
func TestClosedLoopWithThinkTime(t *testing.T) {
	url := serve(t, &stub{})
	for _, think := range []Think{{Mean: 50 * time.Millisecond}, {Mean: 50 * time.Millisecond, Exponential: true}} {
		res, err := Run(context.Background(), config(url, Model{Connections: 4, Think: think}, time.Second))
		if err != nil {
			t.Fatal(err)
		}
		limit := int64(4 * (time.Second/think.Mean + 1))
		if think.Exponential {
			limit *= 2 // exponential pauses are shorter than their mean about 63% of the time
		}
		if res.Requests == 0 || res.Requests > limit || res.Think != think {
			t.Errorf("think %s: %d requests (want 1 to %d), think %s", think, res.Requests, limit, res.Think)
		}
	}
}
