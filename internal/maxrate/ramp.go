package maxrate

import "slices"

// RampBreak is how many seconds in a row must fail the SLO for a ramp to have broken it: one
// failing second is a pause or a burst, not the boundary.
const RampBreak = 3

// RampLow is where a ramp's bracket starts, as a share of its first failing rate. A queue takes
// time to lift a second's p99, and a second is a shorter test than a step, so a ramp fails
// later than steps do: climbing, doubling every 4 s, fastify first failed a second at 13,000
// rps, spring-mvc-virtual at 3,750 and bun-native at 38,750, where whole 4-s steps met 10,000,
// 3,000–3,500 and 28,000 (77%, 80–93% and 72% of those rates).
const RampLow = 0.65

// RampBroken says the last RampBreak seconds of a ramp (each a Step at that second's rate,
// judged or not) all fail slo: the ramp has found the boundary and need not load the target on.
func RampBroken(seconds []Step, slo SLO) bool {
	return len(FailingEnd(seconds, slo)) >= RampBreak
}

// RecoverySeconds is how many seconds in a row must meet the SLO for a load after a failing step
// to have recovered (Recovered). Three, so that a recovery lasts about 4 s, as it did when two
// were judged a second late: recoveries of 3 s came with spring-mvc-virtual's two lowest maxima
// of a day's 18 searches, neither shown to be their doing nor ruled out.
const RecoverySeconds = 3

// Recovered says the last RecoverySeconds seconds of a load below the target's boundary (each a
// Step at its rate) all meet slo: what a failing step left in the target has cleared, and it
// serves that load as it did before.
func Recovered(seconds []Step, slo SLO) bool {
	return len(tail(seconds, slo, false)) >= RecoverySeconds
}

// RampBracket is where a broken ramp (RampBroken) puts the boundary: High the rate of the first
// of the failing seconds that broke it, Low RampLow of that. A ramp that ran its whole course
// (whole: it reached its highest rate) brackets from its failing seconds at the end however
// few, as it could not go on to see more of them (bun-native's, to 50,000 rps, failed only its
// last two at times), and from its last second when none failed: its rate is the most a step
// may ask, and a second is a shorter test than a step (bun-native met 50,000 rps to the end of
// its ramp and failed it in steps), so the boundary lies from RampLow of it up, where doubling
// from the first rate would only step up to it. Zero when a ramp cut short did not break.
func RampBracket(seconds []Step, slo SLO, whole bool) Bracket {
	if len(seconds) == 0 {
		return Bracket{}
	}
	n := len(FailingEnd(seconds, slo))
	if n < RampBreak && !whole {
		return Bracket{}
	}
	high := seconds[len(seconds)-max(n, 1)].Rate
	b := Bracket{Low: int(RampLow * float64(high)), High: high}
	if b.Low < 1 || b.High <= b.Low {
		return Bracket{}
	}
	return b
}

// FailingEnd is the seconds at the end of seconds that all fail slo, judged (Failed says how), in
// their order: those that broke a ramp (RampBroken).
func FailingEnd(seconds []Step, slo SLO) []Step { return tail(seconds, slo, true) }

// tail is the seconds at the end of seconds that all fail slo (failing), or all meet it, judged.
func tail(seconds []Step, slo SLO, failing bool) []Step {
	var judged []Step
	for i := len(seconds) - 1; i >= 0; i-- {
		s := seconds[i]
		if slo.Judge(&s); (s.Failed != "") != failing {
			break
		}
		judged = append(judged, s)
	}
	slices.Reverse(judged)
	return judged
}
