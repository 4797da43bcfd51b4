package load

import (
	"context"
	"fmt"
	"runtime"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
	"golang.org/x/sys/unix"
)

// attacker is the engine below vegeta's seam: it takes each request from a vegeta.Targeter when a
// vegeta.Pacer says it is due, sends it over a keep-alive connection of its own, and hands its
// outcome over as a vegeta.Result. Everything happens on the goroutine that calls attack, locked
// to its thread: one epoll set holds every connection (non-blocking sockets); a request is one
// write of bytes prepared once per target; an answer is read with recvmsg, which also gives the
// time the kernel received it, and parsed as it arrives. The goroutine blocks only in epoll,
// with a timeout to the nanosecond set for the next request due.
//
// vegeta's own attacker runs a goroutine per request in flight, handed its request and its
// answer over channels, each waiting for Go's scheduler to poll the network: on the generator's
// one core that bookkeeping, not the kernel's work, capped the open loop near 10,000 rps, with
// answers left unread for milliseconds (docs/generator.md has the profiles and the figures).
//
// Its methods live by concern: this file releases requests as they fall due; poll.go waits on
// epoll; conn.go opens, hands out and closes connections; read.go reads answers (response.go
// parses them); outcome.go ends each request as a vegeta.Result.
type attacker struct {
	timeout time.Duration // each request's: from when it was released until its answer is read
	keep    int           // body bytes kept for the check
	// keepLate keeps a request past its timeout on its connection (wrk's way, Compat Wrk): it
	// counts as a timeout when its time is up, and its answer, when it comes, goes to hooks.late.
	keepLate bool
	// lingering counts the requests past their timeout still waiting for their answer.
	lingering int64

	ep     int // the epoll set
	wake   int // an eventfd, written when the attack's context ends
	events []unix.EpollEvent
	pwait2 bool // epoll_pwait2 (timeouts in ns) works; else epoll_wait (in ms)

	// Connections, by id (the epoll event's data); ids are reused, gen tells a connection's
	// events from those of an earlier one with the same id.
	conns       []*conn
	freeIDs     []int32
	idle        []*conn // most recently used last: a busy set of connections stays warm
	open        int     // connections open or being opened
	connGen     int32   // the last connection's generation
	dialing     int
	dials       []*conn // the connections being opened
	mostDialing int     // the most opened at once, ever (what the tests check of maxDialing)
	maxConns    int     // this attack's in-flight limit: at most one connection per request in flight

	addr   string // host:port of the connections
	sa     unix.Sockaddr
	family int

	// Requests in flight, by slot; each has an entry in deadlines (in the order they were
	// released, which is the order their deadlines fall in) and, while it waits for a
	// connection, one in waiting. An entry whose gen differs from its slot's is of a request
	// that has ended.
	slots     []request
	freeSlots []int32
	waiting   queue[ticket]
	deadlines queue[ticket]

	wire   *wireRequest
	target vegeta.Target
	// In a mix (kinds.go), each kind's request, and pick choosing the kind of each request
	// released instead of the targeter; pick is nil otherwise.
	kinds []*wireRequest
	pick  func() int
	hooks
	res      vegeta.Result
	errs     map[errKey]string
	statuses map[int]string

	// recvmsg's arguments, allocated once.
	rbuf, oob []byte
	iov       unix.Iovec
	msg       unix.Msghdr

	// TLS (tls.go): plain holds what was decrypted of an answer.
	tls   tlsState
	plain []byte
	// fresh: every request takes a new connection (Request.NewConnection).
	fresh bool
	// h2streams: each connection speaks HTTP/2 with this many streams (h2.go); 0: HTTP/1.1.
	h2streams int
	h2scheme  string
	// stats, when set, counts the phase's connections and first bytes.
	stats *connStats

	started, completed, peak int64
	// full: since it was last cleared, a turn of the loop ended with every in-flight slot taken.
	full bool
	// secondPeak: the most in flight since each timeline last closed a second (the warm-up's,
	// the measured phase's; runner.secondInFlight); secondFull: whether every slot was taken
	// meanwhile.
	secondPeak [2]int64
	secondFull [2]bool
	// turnEvery, when set, is how long the loop sleeps between two turns rather than waking for
	// each answer or request due (open loop; turnFor), unless events wait as a turn ends.
	turnEvery time.Duration
	// phaseEnd, when set, is the measured phase's end: past it, with every slot held, the attack
	// ends, for no slot may free (wrk's way keeps a request past its timeout on its slot) and
	// only a free slot asks the pacer whether the load is over.
	phaseEnd time.Time
	// turnLate is how late the turn's first request was released (its due time to now); -1
	// before it.
	turnLate time.Duration
	// holding: a turn behind held requests (behindAfter) that no turn since has unheld.
	holding bool
}

// behindAfter is how late a turn of the open loop may begin releasing and still open
// connections for the requests that find none idle. Later, the loop is behind its pace (a stall
// of its core, or its CPU short): the requests it releases at once find every connection busy
// only because they came at once, and an answer frees one sooner than a dial would. Opening one
// for each made every request dearer from then on, on the core that was short already, and the
// loop fell further behind, to every in-flight slot taken (docs/generator.md has the figures). A
// turn on time dials for every request waiting, those held included: a slow target's answers
// may be far off.
const behindAfter = 200 * time.Microsecond

// behind is whether this turn holds the requests it leaves waiting (behindAfter). A request
// that takes a new connection whatever (fresh) is never held.
func (a *attacker) behind() bool { return !a.fresh && a.turnLate > behindAfter }

// dialForWaiting ends a turn's releases: unless the turn is behind, it queues, as of now, the
// requests a turn behind held, and opens connections for those waiting.
func (a *attacker) dialForWaiting(now time.Time) {
	if a.behind() {
		return
	}
	if a.holding {
		for i := range a.waiting.len() {
			t := a.waiting.at(i)
			if r := &a.slots[t.slot]; r.gen == t.gen && r.queued.IsZero() {
				r.queued = now
			}
		}
		a.holding = false
	}
	a.dialMore(now)
}

// hooks are what an attack tells of its requests, set by attack for its duration, so that the
// paths that end a request need not carry them.
type hooks struct {
	// own, when set, is given the generator's own delay in each answered request.
	own *ownDelay
	// each is given every request's outcome (the Result and its Body are valid during the call
	// only), when the engine became responsible for it (own.start), when the kernel received its
	// answer's last bytes (conn.arrival; zero without an answer or a receive time) and its kind
	// (0 but in a mix).
	each func(r *vegeta.Result, start, received time.Time, kind int)
	// late, with keepLate, is given the answer of a request that had timed out.
	late func(r *vegeta.Result)
	// tick, when set, is called once per turn of the loop before requests are released, with
	// the requests released so far; it returns the time to go on with (later than now when it
	// waited) and how long until it wants to be called again (negative: no wish).
	tick func(now time.Time, hits uint64) (time.Time, time.Duration)
	// limitAt, when set, is the in-flight bound at elapsed from the attack's start, asked at
	// most every limitEvery; the attack's limit otherwise.
	limitAt func(elapsed time.Duration) int
}

// longestTurn is the open loop's least time between two turns of the attack loop up to 20,000
// rps (above, turnFor shortens it). Each sleep costs the generator's core 10–30 µs on a VM (a
// timer armed, a task switched, the vCPU halted): waking for each answer and each request due,
// as the loop did, spent a quarter of the core at 50,000 rps. A turn every 100 µs at most serves
// the same requests in batches. An answer's latency is the kernel's receive time, so reading it
// later changes no latency; a request due meanwhile is released up to 100 µs late, which its own
// delay counts (a tenth of LagFloor). The closed loop wakes for each answer: its next request is
// sent upon it.
const longestTurn = 100 * time.Microsecond

// turnRequests is the most requests due a turn of the open loop gathers on average: above 20,000
// rps turns are closer than longestTurn (turnFor), so that batches stay small clumps (dispersion
// index 0.8–0.87 at 50,000 rps with five requests a turn; 0.35 at 20,000 with two, on a quiet
// host). Closer turns cost CPU: at 20,000 rps a turn for each 1.5 requests took
// the generator's core 57–61% busy, against 51–56% for each two.
const turnRequests = 2

// turnFor is the least time between the open loop's turns at rate requests a second.
func turnFor(rate int) time.Duration {
	if rate <= 0 {
		return longestTurn
	}
	return min(longestTurn, time.Duration(turnRequests*float64(time.Second)/float64(rate)))
}

// limitEvery is how often a moving in-flight bound (hooks.limitAt) is asked again: a climb's
// rate moves by well under 1% in it.
const limitEvery = 10 * time.Millisecond

type request struct {
	gen     int32
	seq     uint64
	start   time.Time // when the engine became responsible for it: due (open loop), else released
	taken   time.Time // when the pacer released it
	written time.Time // when its last byte was written; zero before
	c       *conn     // nil while it waits for a connection
	retried bool
	expired bool // timed out, kept on its connection for its answer (keepLate)
	wire    *wireRequest
	// queued is when its wait for a connection began to be the target's (send): its release,
	// or, held by a turn that was behind (behindAfter), the first turn on time after; zero
	// while held.
	queued time.Time
	// free is what own.record takes as when a connection became free for it (ownFrom of
	// conn.freeSince): of the one handed back to it while it waited, else of the one idle the
	// longest when it was released; moved earlier by its lateness until queued, zero if held.
	free time.Time
}

type ticket struct {
	slot, gen int32
	deadline  time.Time
}

func newAttacker(timeout time.Duration, keep int, keepLate bool) (*attacker, error) {
	keepStamping()
	ep, wake, err := openEpoll()
	if err != nil {
		return nil, err
	}
	a := &attacker{
		timeout: timeout, keep: keep, keepLate: keepLate, ep: ep, wake: wake, pwait2: true,
		events: make([]unix.EpollEvent, 256),
		errs:   map[errKey]string{}, statuses: map[int]string{},
		rbuf: make([]byte, 64<<10), plain: make([]byte, 16<<10),
		oob: make([]byte, 64), // allocated, so aligned for the control message headers read from it
	}
	a.iov.Base = &a.rbuf[0]
	a.msg.Iov = &a.iov
	a.msg.Iovlen = 1
	a.msg.Control = &a.oob[0]
	return a, nil
}

// attack releases requests from tr as p paces them (from began, until p says the end), keeping at
// most limit in flight, and tells h of every request. It returns when every request released has
// ended: answered, failed or timed out (with keepLate, a request past its timeout still unanswered
// then is dropped: it was counted as a timeout). An error means the attack could not go on: its
// context ended, or a target could not be sent.
func (a *attacker) attack(ctx context.Context, tr vegeta.Targeter, p vegeta.Pacer, began time.Time, limit int, h hooks) error {
	// Locked, so that the timer slack set here applies wherever the goroutine blocks: the
	// kernel may otherwise end an epoll wait up to 50 µs late, a request's worth at 20,000 rps.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	defer unix.Prctl(unix.PR_SET_TIMERSLACK, 0, 0, 0, 0) // the thread's default again

	defer a.watch(ctx)()

	a.hooks, a.maxConns, a.holding = h, limit, false
	a.started, a.completed, a.peak, a.lingering, a.phaseEnd, a.full, a.secondPeak, a.secondFull = 0, 0, 0, 0, time.Time{}, false, [2]int64{}, [2]bool{}
	defer func() { a.hooks = hooks{} }()

	var hits uint64
	stopped := false
	var nextLimit time.Time
	// The first wait only polls: an idle connection the server closed since the last attack
	// is found closed before any request is sent on it.
	timeout := time.Duration(0)
	var turn time.Time // when the last turn, its events handled, began its releases
	// wake is when the next turn is wanted (timeout > 0). Each wait is what is left until then,
	// read off the clock: the turn's own work since it set wake (its writes, its dials) counts
	// against it, and so does a sleep; a wait already over is none, and the turn's rest goes
	// unslept. Waiting the whole timeout released the next request late by that work and armed a
	// timer, on a VM a costly one, for a wait already over: at 100,000 rps against nginx, 8% of
	// the generator's core.
	var wake time.Time
	for {
		var n int
		var err error
		found := false // events polled before the turn's time was up
		at := time.Now()
		if timeout > 0 {
			timeout = max(wake.Sub(at), 0)
		}
		if a.turnEvery > 0 && timeout != 0 {
			if rest := a.turnEvery - at.Sub(turn); rest > 0 {
				// A sleep costs a task switch whatever its length; events already waiting
				// cost a poll. A busy loop thus turns on what it finds and sleeps only when
				// it finds nothing.
				n, err = a.wait(0)
				found = err != nil || n > 0
				if !found {
					a.sleep(rest)
					if timeout > 0 {
						timeout = max(time.Until(wake), 0)
					}
				}
			}
		}
		if !found {
			n, err = a.wait(timeout)
		}
		if err != nil {
			a.abort()
			return err
		}
		if !a.handleEvents(n) {
			a.abort()
			return ctx.Err()
		}

		now := time.Now()
		turn = now
		a.expire(now)
		tick := time.Duration(-1)
		if a.tick != nil {
			now, tick = a.tick(now, hits)
		}
		if h.limitAt != nil && !now.Before(nextLimit) {
			limit, nextLimit = h.limitAt(now.Sub(began)), now.Add(limitEvery)
		}
		// Release what is due.
		a.turnLate = -1
		next := time.Duration(-1)
		full := a.started-a.completed >= int64(limit)
		if full && !stopped && !a.phaseEnd.IsZero() {
			if now.After(a.phaseEnd) {
				stopped = true
			} else {
				next = a.phaseEnd.Sub(now) + time.Millisecond // then past it, whatever the clock's rounding
			}
		}
		for !stopped && a.started-a.completed < int64(limit) {
			wait, end := p.Pace(now.Sub(began), hits)
			if end {
				stopped = true
				break
			}
			if wait > 0 {
				next = wait
				break
			}
			if err := a.release(ctx, tr, hits, now); err != nil {
				a.abort()
				return err
			}
			hits++
		}
		a.dialForWaiting(now)
		// Taken as the turn ends, when the releases have filled them: a turn woken by an answer
		// finds a slot free, so one that looked as it began would rarely see them full.
		if a.started-a.completed >= int64(limit) {
			a.full, a.secondFull = true, [2]bool{true, true}
		}
		if stopped && a.started-a.completed == a.lingering {
			a.dropLingering()
			a.endDials()
			return nil
		}
		timeout = a.untilDeadline(now)
		if a.holding && (next < 0 || next > longestTurn) {
			next = longestTurn // the next turn soon: on time, it dials for those held
		}
		for _, t := range [...]time.Duration{next, tick} {
			if t >= 0 && (timeout < 0 || t < timeout) {
				timeout = t
			}
		}
		wake = now.Add(timeout)
	}
}

// watch makes the end of ctx wake the loop, until the function it returns is called.
func (a *attacker) watch(ctx context.Context) func() bool {
	a.drainWake()
	return context.AfterFunc(ctx, func() {
		var one = [8]byte{1}
		_, _ = unix.Write(a.wake, one[:])
	})
}

// prepare takes the next request: a mix's kind, or the targeter's target, encoded once for as
// long as it stays the same.
func (a *attacker) prepare(ctx context.Context, tr vegeta.Targeter) error {
	if a.pick != nil {
		w := a.kinds[a.pick()]
		if w.addr != a.addr {
			if err := a.connectTo(ctx, w.addr); err != nil {
				return err
			}
		}
		a.wire = w
	} else if err := tr(&a.target); err != nil {
		return fmt.Errorf("the targeter: %w", err)
	} else if a.wire == nil || !a.wire.sameTarget(&a.target) {
		w, err := encodeRequest(&a.target)
		if err != nil {
			return err
		}
		if w.addr != a.addr {
			if err := a.connectTo(ctx, w.addr); err != nil {
				return err
			}
		}
		if a.h2streams > 0 {
			if err := encodeH2(w, a.h2scheme); err != nil {
				return err
			}
		}
		a.wire = w
	}
	return nil
}

// release takes request seq from the targeter and sends it, or queues it for a connection.
func (a *attacker) release(ctx context.Context, tr vegeta.Targeter, seq uint64, now time.Time) error {
	if err := a.prepare(ctx, tr); err != nil {
		return err
	}
	slot := a.takeSlot()
	r := &a.slots[slot]
	r.seq, r.taken, r.queued, r.start, r.written, r.c, r.retried, r.expired, r.wire = seq, now, now, now, time.Time{}, nil, false, false, a.wire
	if a.own != nil {
		r.start = a.own.start(seq, now)
	}
	if a.turnLate < 0 {
		a.turnLate = now.Sub(r.start)
	}
	a.deadlines.push(ticket{slot, r.gen, now.Add(a.timeout)})
	a.started++
	n := a.started - a.completed
	a.peak = max(a.peak, n)
	a.secondPeak[0], a.secondPeak[1] = max(a.secondPeak[0], n), max(a.secondPeak[1], n)
	if n := len(a.idle); n > 0 {
		// It takes the connection idle the shortest (the others may idle out), but it could
		// have gone on the one idle the longest: from when that one was free, a wait is the
		// generator's. (The newest alone left the turn's wait out of 45–46% of the own delays at
		// 12,000 rps, their p99 low by 15–17%.)
		c, free := a.idle[n-1], a.idle[0].freeSince()
		a.idle = a.idle[:n-1]
		a.send(c, slot, free)
		return nil
	}
	if a.behind() {
		r.queued, a.holding = time.Time{}, true
	}
	a.waiting.push(ticket{slot: slot, gen: r.gen})
	return nil // dialForWaiting, once the turn's releases are done
}

// handleEvents handles the first n events of the last wait; it returns false when one says the
// attack's context ended.
func (a *attacker) handleEvents(n int) bool {
	for _, ev := range a.events[:n] {
		switch ev.Fd {
		case wakeID:
			return false
		case handshakeID:
			a.handshaken()
		default:
			// A connection closed since, while handling this batch, is nil or of another gen.
			if c := a.conns[ev.Fd]; c != nil && c.gen == ev.Pad {
				a.handle(c, ev.Events)
			}
		}
	}
	return true
}

func (a *attacker) takeSlot() int32 {
	if n := len(a.freeSlots); n > 0 {
		s := a.freeSlots[n-1]
		a.freeSlots = a.freeSlots[:n-1]
		return s
	}
	a.slots = append(a.slots, request{})
	return int32(len(a.slots) - 1)
}

// end closes slot's request: its tickets become stale.
func (a *attacker) end(slot int32) {
	r := &a.slots[slot]
	r.gen++
	r.c, r.wire = nil, nil
	a.freeSlots = append(a.freeSlots, slot)
	a.completed++
}

// untilDeadline is the time left until the next deadline, -1 when there is none.
func (a *attacker) untilDeadline(now time.Time) time.Duration {
	next := time.Time{}
	if a.deadlines.len() > 0 {
		next = a.deadlines.peek().deadline
	}
	for _, c := range a.dials {
		if next.IsZero() || c.dialDeadline.Before(next) {
			next = c.dialDeadline
		}
	}
	if next.IsZero() {
		return -1
	}
	return max(next.Sub(now), 0)
}

// abort ends an attack that cannot go on: every connection is closed (one with a request in
// flight would hand its answer to the next attack) and every request forgotten.
func (a *attacker) abort() {
	a.closeConns()
	a.waiting.clear()
	a.deadlines.clear()
	a.slots, a.freeSlots = a.slots[:0], a.freeSlots[:0]
}

// close releases everything the attacker holds.
func (a *attacker) close() {
	a.abort()
	a.closeTLS()
	unix.Close(a.ep)
	unix.Close(a.wake)
}
