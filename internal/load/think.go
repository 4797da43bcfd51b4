package load

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Think is a closed loop's think time: how long each connection, a user, pauses between an
// answer and its next request, as k6's and Gatling's users do. Fixed, or drawn from an
// exponential distribution of mean Mean (users who pause at random).
type Think struct {
	Mean        time.Duration
	Exponential bool
}

// String writes the think time as ParseThink reads it: 100ms, or exp:100ms.
func (t Think) String() string {
	if t.Mean == 0 {
		return ""
	}
	if t.Exponential {
		return "exp:" + t.Mean.String()
	}
	return t.Mean.String()
}

// ParseThink reads a think time: a duration (fixed) or exp:DURATION (exponential of that mean).
func ParseThink(text string) (Think, error) {
	d, exp := strings.CutPrefix(strings.TrimSpace(text), "exp:")
	mean, err := time.ParseDuration(d)
	if err != nil || mean <= 0 || mean > time.Hour {
		return Think{}, fmt.Errorf("think time %q: give a duration from 1ns to 1h (e.g. 100ms), or exp:DURATION for an exponential of that mean", text)
	}
	return Think{Mean: mean, Exponential: exp}, nil
}

// thinker paces a closed loop with think time: each user (connection) is ready again a think
// time after its answer, and a request is released only for a ready user. It is a vegeta.Pacer
// the attacker asks as it releases (Pace says 0 only for a request it will release at once),
// told of every answer by the engine on the same goroutine.
type thinker struct {
	think Think
	rng   *rand.Rand
	began time.Time
	du    time.Duration   // the phase: no user starts a request after it
	ready []time.Duration // a min-heap of when each waiting user is ready, from began
}

var _ vegeta.Pacer = (*thinker)(nil)

func newThinker(t Think, users int, seed uint64, began time.Time, du time.Duration) *thinker {
	// Every user ready at the start.
	return &thinker{think: t, rng: rand.New(rand.NewPCG(seed, seed^0x7468696e6b)), began: began, du: du, ready: make([]time.Duration, users, users+1)}
}

// rebase makes the phase start at (from the thinker's start) and last du: the measured
// phase's, after the warm-up's users.
func (t *thinker) rebase(at, du time.Duration) {
	for i := range t.ready {
		t.ready[i] -= at // the same shift for all: still a heap
	}
	t.began, t.du = t.began.Add(at), du
}

// answered makes the user whose request was answered at ready again a think time later.
func (t *thinker) answered(at time.Time) {
	pause := t.think.Mean
	if t.think.Exponential {
		pause = time.Duration(t.rng.ExpFloat64() * float64(t.think.Mean))
	}
	t.push(at.Sub(t.began) + pause)
}

// Pace implements vegeta.Pacer: release now when a user is ready (taking it), else wait for the
// first to be; the end once no user can start within the phase.
func (t *thinker) Pace(elapsed time.Duration, _ uint64) (time.Duration, bool) {
	switch {
	case len(t.ready) == 0 && elapsed >= t.du, len(t.ready) > 0 && t.ready[0] > t.du:
		return 0, true
	case len(t.ready) == 0:
		return t.du - elapsed, false // every user in flight: an answer comes first
	}
	if wait := t.ready[0] - elapsed; wait > 0 {
		return wait, false
	}
	t.pop()
	return 0, false
}

// Rate implements vegeta.Pacer: unknown ahead of the answers.
func (t *thinker) Rate(time.Duration) float64 { return 0 }

func (t *thinker) push(v time.Duration) {
	t.ready = append(t.ready, v)
	for i := len(t.ready) - 1; i > 0; {
		parent := (i - 1) / 2
		if t.ready[parent] <= t.ready[i] {
			break
		}
		t.ready[parent], t.ready[i] = t.ready[i], t.ready[parent]
		i = parent
	}
}

func (t *thinker) pop() {
	last := len(t.ready) - 1
	t.ready[0] = t.ready[last]
	t.ready = t.ready[:last]
	for i := 0; ; {
		small, l, r := i, 2*i+1, 2*i+2
		if l < last && t.ready[l] < t.ready[small] {
			small = l
		}
		if r < last && t.ready[r] < t.ready[small] {
			small = r
		}
		if small == i {
			return
		}
		t.ready[i], t.ready[small] = t.ready[small], t.ready[i]
		i = small
	}
}
