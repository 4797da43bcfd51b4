package maxrate

// RampBreak is how many seconds in a row must fail the SLO for a ramp to have broken it: one
// failing second is a pause or a burst, not the boundary.
const RampBreak = 3

// RampBroken says the last RampBreak seconds of a ramp (each a Step at that second's rate,
// judged or not) all fail slo: the ramp has found the boundary and need not load the target on.
func RampBroken(seconds []Step, slo SLO) bool {
	if len(seconds) < RampBreak {
		return false
	}
	for _, s := range seconds[len(seconds)-RampBreak:] {
		if slo.Judge(&s); s.Failed == "" {
			return false
		}
	}
	return true
}
