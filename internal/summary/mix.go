package summary

import (
	"fmt"
	"strconv"
	"strings"
)

// MixText says in words what a row of a mix (its streams column, load.FormatKinds) measured:
// for the cell's row the whole mix ("a mix: ingest 80% and page 20% of the load, probe at 50 rps
// of its own"), for a request's row which request of which mix. Empty for a cell of one request.
func MixText(streams, request string) string {
	if streams == "" {
		return ""
	}
	if request != "" {
		return fmt.Sprintf("request %s of the mix %s", request, streams)
	}
	type share struct {
		name   string
		weight int
	}
	var shares []share
	var own []string
	sum := 0
	for _, part := range strings.Split(streams, ",") {
		if name, rate, ok := strings.Cut(part, "@"); ok {
			own = append(own, fmt.Sprintf("%s at %s rps of its own", name, rate))
			continue
		}
		name, w, _ := strings.Cut(part, ":")
		n, err := strconv.Atoi(w)
		if err != nil || n < 1 {
			return "a mix: " + streams // not written by this iotbench: as it stands
		}
		shares, sum = append(shares, share{name, n}), sum+n
	}
	parts := make([]string, len(shares))
	for i, s := range shares {
		parts[i] = fmt.Sprintf("%s %s%%", s.name, strconv.FormatFloat(100*float64(s.weight)/float64(sum), 'f', -1, 64))
		if len(shares) == 1 {
			parts[i] = s.name + " all"
		}
	}
	text := "a mix: " + joinAnd(parts) + " of the load"
	if len(own) > 0 {
		text += ", " + joinAnd(own)
	}
	return text
}

func joinAnd(parts []string) string {
	if len(parts) <= 1 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}
