package load

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Kind is one request of a cell that sends several (a mix): what it sends, what a good answer to
// it is, and where its sends come from. A kind with a Rate is a stream of its own at that many
// requests per second, beside the cell's load (a cheap probe beside a heavy load); one without
// takes a Weight's share of the cell's load (Model: its rate, stages and arrival process, or its
// connections), e.g. 80 and 20 of one stream.
type Kind struct {
	Name    string
	Request Request
	Check   Check
	// Weight is the kind's share of the cell's load, relative to the other shares' (80 and 20,
	// or 4 and 1); used when Rate is 0.
	Weight int
	// Rate, when set, makes the kind a stream of its own: open loop at Rate requests per second,
	// with the cell's arrival process and its own draws of it. A shard's is its part of the
	// cell's (shard.Split), placed by the model's Share.
	Rate int
}

// Own says whether the kind is a stream of its own rather than a share of the cell's load.
func (k Kind) Own() bool { return k.Rate > 0 }

// MaxWeight bounds a share's weight, so that the turns the shares take (one cycle of their
// summed weights) stay a small slice.
const MaxWeight = 1000

var kindName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// CheckKinds refuses a mix that cannot be sent: names missing, repeated or not plain; no share of
// the cell's load; a weight or a rate out of range; a stream of its own beside a closed loop.
func CheckKinds(kinds []Kind, m Model) error {
	if len(kinds) == 0 {
		return nil
	}
	seen := map[string]bool{}
	shares := 0
	for _, k := range kinds {
		switch {
		case !kindName.MatchString(k.Name):
			return fmt.Errorf("request name %q: use lower-case letters, digits, '_' and '-'", k.Name)
		case seen[k.Name]:
			return fmt.Errorf("request name %q is used twice: name each request once", k.Name)
		case k.Rate < 0:
			return fmt.Errorf("request %s: rate %d must not be negative", k.Name, k.Rate)
		case k.Own() && m.Mode() == Closed:
			return fmt.Errorf("request %s: a stream at its own rate runs beside an open loop; give the cell a rate, or give %s a weight instead", k.Name, k.Name)
		case !k.Own() && (k.Weight < 1 || k.Weight > MaxWeight):
			return fmt.Errorf("request %s: weight %d must be from 1 to %d (or give it a rate of its own)", k.Name, k.Weight, MaxWeight)
		}
		seen[k.Name] = true
		if !k.Own() {
			shares++
		}
	}
	if shares == 0 {
		return errors.New("no request takes a share of the cell's load: give at least one a weight, not a rate")
	}
	return nil
}

// FormatKinds writes a mix's layout as the results carry it: NAME:WEIGHT for a share of the
// cell's load, NAME@RATE for a stream of its own, comma-separated in the scenario's order
// (ingest:80,page:20,probe@50); empty for a cell of one request.
func FormatKinds(kinds []Kind) string {
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		if k.Own() {
			parts[i] = k.Name + "@" + strconv.Itoa(k.Rate)
		} else {
			parts[i] = k.Name + ":" + strconv.Itoa(k.Weight)
		}
	}
	return strings.Join(parts, ",")
}

// KindRate is the rate kind k of kinds is due at in an open loop at rate (the cell's load): its
// own, or its weight's share of rate.
func KindRate(kinds []Kind, k int, rate float64) float64 {
	if kinds[k].Own() {
		return float64(kinds[k].Rate)
	}
	sum := 0
	for _, o := range kinds {
		if !o.Own() {
			sum += o.Weight
		}
	}
	return rate * float64(kinds[k].Weight) / float64(sum)
}

// OwnRates is the sum of the rates of the kinds that are streams of their own.
func OwnRates(kinds []Kind) int {
	n := 0
	for _, k := range kinds {
		n += k.Rate
	}
	return n
}

// RequestedRate is the cell's open-loop rate, every stream of its own included (0 in closed loop
// without streams of their own): what its achieved rate is judged against.
func (c Config) RequestedRate() int { return c.Model.Rate + OwnRates(c.Kinds) }

// InFlightLimit is the model's (Model.InFlightLimit), with room for the streams of their own.
func (c Config) InFlightLimit() int {
	own := OwnRates(c.Kinds)
	if own == 0 || c.Model.Mode() == Closed {
		return c.Model.InFlightLimit()
	}
	return c.Model.inFlightBound(c.Model.peakRate() + own)
}

// InFlightLimitAt is the bound once the measured phase has run for at: InFlightLimit at the
// highest rate the stages have reached by then, so that requests queue behind a target falling
// behind a climb no deeper than behind a step at the rate climbed to. Bounded at the climb's
// top, a find-max ramp towards 50,000 rps let up to 10,000 wait behind spring-mvc-virtual at
// 2,000–4,000 rps, and its heap ran out.
func (c Config) InFlightLimitAt(at time.Duration) int {
	if c.Model.Mode() == Closed || len(c.Model.Stages) == 0 {
		return c.InFlightLimit()
	}
	return c.Model.inFlightBound(StagesPeakUntil(c.Model.Stages, at)/max(c.Model.Share.Count, 1) + OwnRates(c.Kinds))
}

// turns is the order in which the shares take the cell's requests: one cycle of their weights,
// reduced by their common divisor, each share spread through it as evenly as it can be (nginx's
// smooth weighted round robin), so that an 80/20 mix sends ingest, ingest, ingest, ingest, page.
// Every cycle holds each share's exact count, so any stretch of requests is within a cycle of
// the weights. Entries are indices into kinds.
func turns(kinds []Kind) []int {
	g := 0
	for _, k := range kinds {
		if !k.Own() {
			g = gcd(g, k.Weight)
		}
	}
	var idx, w []int
	total := 0
	for i, k := range kinds {
		if !k.Own() {
			idx, w = append(idx, i), append(w, k.Weight/g)
			total += k.Weight / g
		}
	}
	current := make([]int, len(w))
	out := make([]int, total)
	for t := range out {
		best := 0
		for j := range w {
			current[j] += w[j]
			if current[j] > current[best] {
				best = j
			}
		}
		current[best] -= total
		out[t] = idx[best]
	}
	return out
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// mix picks the kind of every request a cell of several sends. The shares take the cell's
// requests in turns (turns). Streams of their own are merged with the cell's schedule into one:
// the next request due of any stream is the next released, so that each is charged from its own
// due time (no coordinated omission between streams either). mix is then the open loop's
// schedule; kind is asked once per request released, right after its due time (the attacker's
// order), and costs an index into a small slice.
type mix struct {
	turns  []int
	shared uint64 // requests of the shares released so far, with no stream of its own

	// With streams of their own: streams[0] is the cell's schedule, streams[s] the s-th own one,
	// whose kind is own[s].
	streams []schedule
	own     []int
	n       []uint64        // each stream's request next due
	d       []time.Duration // its due time
	cur     int             // the stream of request hit
	hit     uint64
}

var _ schedule = (*mix)(nil)

// newMix is the mix of cfg's kinds over main, the cell's schedule (nil in closed loop); nil
// for a cell of one request.
func newMix(cfg Config, main schedule, seed uint64) *mix {
	if len(cfg.Kinds) == 0 {
		return nil
	}
	m := &mix{turns: turns(cfg.Kinds)}
	if OwnRates(cfg.Kinds) == 0 || main == nil {
		return m
	}
	m.streams, m.own = []schedule{main}, []int{-1}
	for i, k := range cfg.Kinds {
		if !k.Own() {
			continue
		}
		// Each stream its own draws; a shard's, its share of the cell's stream.
		own := Model{Rate: k.Rate, Arrival: cfg.Model.Arrival, Share: cfg.Model.Share}
		m.streams = append(m.streams, newSchedule(own, seed^streamSeed*uint64(i+1)))
		m.own = append(m.own, i)
	}
	m.n = make([]uint64, len(m.streams))
	m.d = make([]time.Duration, len(m.streams))
	for s, st := range m.streams {
		m.d[s] = st.due(0)
	}
	m.cur = m.first()
	return m
}

// MixSchedule is Schedule for a mix in open loop (cfg.Kinds): when each request of the measured
// phase is due and of which kind (0 for a cell of one request), asked in order (request i, then
// i+1).
func MixSchedule(cfg Config) func(i uint64) (time.Duration, int) {
	main := newSchedule(cfg.Model, cfg.Model.Seed)
	m := newMix(cfg, main, cfg.Model.Seed)
	if m == nil {
		return func(i uint64) (time.Duration, int) { return main.due(i), 0 }
	}
	due := main.due
	if m.streams != nil {
		due = m.due
	}
	return func(i uint64) (time.Duration, int) {
		at := due(i)
		return at, m.kind()
	}
}

// streamSeed sets a stream's draws apart from the cell's and the other streams'.
const streamSeed = 0x53545245414d

// first is the stream whose request is due first.
func (m *mix) first() int {
	best := 0
	for s := 1; s < len(m.d); s++ {
		if m.d[s] < m.d[best] {
			best = s
		}
	}
	return best
}

// due is when request i of the merged streams is due (schedule's order: i, maybe again, i+1).
func (m *mix) due(i uint64) time.Duration {
	if i == m.hit+1 {
		m.n[m.cur]++
		m.d[m.cur] = m.streams[m.cur].due(m.n[m.cur])
		m.cur, m.hit = m.first(), i
	}
	if i != m.hit {
		panic(fmt.Sprintf("load: mixed schedule asked for request %d after %d", i, m.hit))
	}
	return m.d[m.cur]
}

// Pace implements vegeta.Pacer: how long until request hits is due; the end when the cell's
// schedule ends before every other stream's next request.
func (m *mix) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	at := m.due(hits)
	if m.cur == 0 {
		if _, end := m.streams[0].Pace(elapsed, m.n[0]); end {
			return 0, true
		}
	}
	return max(at-elapsed, 0), false
}

// Rate implements vegeta.Pacer: every stream's together.
func (m *mix) Rate(elapsed time.Duration) float64 {
	var r float64
	for _, s := range m.streams {
		r += s.Rate(elapsed)
	}
	return r
}

// peek is the kind of the request due now, without taking it.
func (m *mix) peek() int {
	if m.streams == nil {
		return m.turns[m.shared%uint64(len(m.turns))]
	}
	if m.cur == 0 {
		return m.turns[m.n[0]%uint64(len(m.turns))]
	}
	return m.own[m.cur]
}

// kind is the kind of the request being released.
func (m *mix) kind() int {
	k := m.peek()
	if m.streams == nil {
		m.shared++
	}
	return k
}

// scheduled counts, by kind, the requests due within du that were not released (released
// were): what each kind is judged against, with what it sent; unsent is told when each was due,
// and its kind. It asks main (the cell's schedule, when mixed without streams of their own) or
// the merged streams on from there.
func (m *mix) scheduled(main schedule, released int64, du time.Duration, kinds int, unsent func(at time.Duration, kind int)) []int64 {
	out := make([]int64, kinds)
	n := uint64(released)
	if m.streams == nil {
		for at := main.due(n); at <= du; at = main.due(n) {
			k := m.turns[n%uint64(len(m.turns))]
			out[k]++
			unsent(at, k)
			n++
		}
		return out
	}
	for at := m.due(n); at <= du; at = m.due(n) {
		k := m.peek()
		out[k]++
		unsent(at, k)
		n++
	}
	return out
}

// useKinds readies a for a mix: each kind's request written out once, as kind i, and pick
// choosing the kind of each request released (nil: one request, from the targeter).
func (a *attacker) useKinds(reqs []Request, pick func() int) error {
	a.kinds, a.pick = a.kinds[:0], pick
	for i, r := range reqs {
		w, err := encodeRequest(&vegeta.Target{Method: r.Method, URL: r.URL, Body: r.Body, Header: r.Header})
		if err != nil {
			return fmt.Errorf("request %d: %w", i+1, err)
		}
		w.kind = i
		a.kinds = append(a.kinds, w)
	}
	return nil
}

// kindResults are the results of each kind of a mixed phase whose whole is res: each judged on
// its own, the phase's own measures (the generator's delay, the in-flight peak) being every
// kind's. The whole is invalid when a kind is, which it names.
func kindResults(res *Result, cfg Config, tallies []*tally, scheduled []int64) {
	res.Kinds = make([]Result, len(tallies))
	for i, t := range tallies {
		r := t.result()
		r.Kind = cfg.Kinds[i].Name
		r.OwnDelay, r.PeakInFlight, r.InFlightLimit, r.InFlightFull, r.Think = res.OwnDelay, res.PeakInFlight, res.InFlightLimit, res.InFlightFull, Think{}
		if r.Mode == Open {
			r.RequestedRate = int(math.Round(KindRate(cfg.Kinds, i, float64(cfg.Model.Rate))))
			r.Scheduled = r.Requests + scheduled[i]
		}
		// Judged with one request of slack: the phase's last request due may go unsent at its
		// end (the whole allows for it in its 1%), and which kind it is of is chance, a share
		// of 1% or more of a kind of 100.
		judged := r
		judged.Scheduled = max(r.Scheduled-1, r.Requests)
		r.SetFault(judge(judged))
		res.Kinds[i] = r
	}
	JudgeMix(res)
}

// JudgeMix makes res, a mixed phase's whole, invalid when one of its requests is, naming the
// first, unless it is invalid already: what a generator does with its kinds' results, and a
// merge of several generators' with theirs merged.
func JudgeMix(res *Result) {
	if !res.Valid {
		return
	}
	for _, r := range res.Kinds {
		if !r.Valid {
			res.SetFault(r.Fault, kindReason(r))
			return
		}
	}
}

// InvalidByRequest says whether res, a mixed phase's whole, is invalid only because one of its
// requests is (JudgeMix).
func (r Result) InvalidByRequest() bool {
	if r.Valid {
		return false
	}
	for _, k := range r.Kinds {
		if !k.Valid && r.InvalidReason == kindReason(k) {
			return true
		}
	}
	return false
}

// kindReason is the whole's reason when request k is invalid.
func kindReason(k Result) string { return "request " + k.Kind + ": " + k.InvalidReason }

// kindRequests are the requests of kinds, in order.
func kindRequests(kinds []Kind) []Request {
	out := make([]Request, len(kinds))
	for i, k := range kinds {
		out[i] = k.Request
	}
	return out
}

// kindsCheck says whether any kind's answers are checked for what they contain.
func kindsCheck(kinds []Kind) bool {
	for _, k := range kinds {
		if len(k.Check.Contains) > 0 {
			return true
		}
	}
	return false
}
