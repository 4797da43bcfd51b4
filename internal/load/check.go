package load

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
)

// Check decides whether a 2xx answer did the work: its body must contain every one of Contains.
// It runs on every response, so it stays a substring test; full verification of an endpoint's
// answer happens once, before any load.
type Check struct {
	Contains [][]byte
}

// NewCheck builds a Check from the substrings a body must contain.
func NewCheck(contains ...string) Check {
	c := Check{}
	for _, s := range contains {
		c.Contains = append(c.Contains, []byte(s))
	}
	return c
}

// Pass reports whether body passes the check.
func (c Check) Pass(body []byte) bool {
	for _, want := range c.Contains {
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
