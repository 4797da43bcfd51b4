package load

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Check is what a good answer is: the one model of it, read from a scenario's check block (the
// YAML keys are its tags), planned into each cell's Config and applied by each stage in turn. The
// engine tests Contains on every 2xx answer, so that stays a substring test; verification before
// any load checks the answer once more thoroughly (ContentType, JSONFields, MinLatency); the
// bench checks StoresRows and CallsDownstream against what the target did over the measured phase.
type Check struct {
	// Contains must each be in a successful answer's body.
	Contains []string `yaml:"contains"`
	// ContentType is the media type the answer must declare, e.g. text/html; empty accepts any.
	// A scenario's JSONFields imply application/json.
	ContentType string `yaml:"content_type"`
	// JSONFields must each be present, and not null, in the JSON object answered.
	JSONFields []string `yaml:"json_fields"`
	// MinLatency is the least time the endpoint's work takes (a contract wait): an answer that
	// comes sooner skipped the work.
	MinLatency time.Duration `yaml:"min_latency"`
	// StoresRows says each success stores one reading: /stats must grow by the successes.
	StoresRows bool `yaml:"stores_rows"`
	// CallsDownstream says each success calls the downstream service iotbench runs (DOWNSTREAM_URL):
	// its calls over the measured phase must be at least the successes.
	CallsDownstream bool `yaml:"calls_downstream"`
}

// NewCheck builds a Check from the substrings a body must contain.
func NewCheck(contains ...string) Check {
	return Check{Contains: contains}
}

// Pass reports whether body contains every one of Contains.
func (c Check) Pass(body []byte) bool { return containsOf(c.Contains).pass(body) }

// contains is a Check's Contains as bytes, made once per phase: the engine tests every answer
// against it, and converting each substring per answer would make garbage.
type contains [][]byte

func containsOf(subs []string) contains {
	c := make(contains, len(subs))
	for i, s := range subs {
		c[i] = []byte(s)
	}
	return c
}

func (c contains) pass(body []byte) bool {
	for _, want := range c {
		if !bytes.Contains(body, want) {
			return false
		}
	}
	return true
}

// errorKind strips the method and URL that net/http puts before the cause, so that the same cause
// counts once whatever the request.
func errorKind(msg string) string {
	if i := strings.LastIndex(msg, "\": "); i >= 0 {
		msg = msg[i+3:]
	}
	return msg
}

func isTimeout(msg string) bool {
	return strings.Contains(msg, "Timeout") || strings.Contains(msg, "deadline exceeded") || strings.Contains(msg, "timeout")
}

// FormatCodes renders status counts as "200:1234 503:12" in code order; 0 stands for no answer.
func FormatCodes(codes map[int]int64) string {
	keys := make([]int, 0, len(codes))
	for k := range codes {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d:%d", k, codes[k])
	}
	return strings.Join(parts, " ")
}
