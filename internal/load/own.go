package load

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/iotbench/iotbench/internal/latency"
	"github.com/iotbench/iotbench/internal/timeline"
)

// ownDelay measures the generator's own share of each answered request's latency, directly
// rather than as a difference against a server measured another way: the time from when the
// request was due (open loop) or handed to the transport (closed loop) until it was written to
// the socket, plus the time from when the kernel received the answer's last bytes until the
// generator had read them. What is left of the latency is the network's and the server's.
type ownDelay struct {
	began    time.Time
	schedule *pacer // open loop: when each request was due; nil in closed loop

	mu     sync.Mutex
	rec    *latency.Recorder
	second *timeline.PerSecond
}

func newOwnDelay(began time.Time, schedule *pacer, ceiling time.Duration) *ownDelay {
	return &ownDelay{began: began, schedule: schedule, rec: latency.NewRecorder(ceiling), second: timeline.NewPerSecond(began, ceiling)}
}

// seqHeader is the header in which vegeta numbers each request of an attack, from 0, in the
// order the pacer released them: the index of its due time.
const seqHeader = "X-Vegeta-Seq"

// start is when the generator became responsible for req: its due time in open loop, else now.
func (o *ownDelay) start(req *http.Request, now time.Time) time.Time {
	if o.schedule == nil {
		return now
	}
	v := req.Header[seqHeader]
	if len(v) != 1 {
		return now
	}
	seq, err := strconv.ParseUint(v[0], 10, 64)
	if err != nil {
		return now
	}
	return o.began.Add(o.schedule.due(seq))
}

// record adds the request just answered on c, when the kernel told when its answer arrived.
func (o *ownDelay) record(c *conn, now time.Time) {
	if c.arrival.IsZero() {
		return
	}
	d := max(c.written.Sub(c.start), 0) + max(now.Sub(c.arrival), 0)
	o.mu.Lock()
	o.rec.Record(d)
	o.second.Add(now, d)
	o.mu.Unlock()
}

// perSecond is the p99 of each second's own delays, by the second the answer was read in.
func (o *ownDelay) perSecond() []time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.second.Finish()
}

func (o *ownDelay) summary() latency.Summary {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.rec.Summary()
}
