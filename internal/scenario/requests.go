package scenario

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/iotbench/iotbench/internal/load"
	"github.com/iotbench/iotbench/internal/loadspec"
	"go.yaml.in/yaml/v3"
)

// MixRequest is one request of a scenario that sends several in each cell (Scenario.Requests):
// what it sends, as Request, what a good answer to it is, and its part of the load: a Weight's
// share of the scenario's load, or a stream of its own at Rate requests per second (load.Kind).
type MixRequest struct {
	Name    string `yaml:"name"`
	Request `yaml:",inline"`
	Weight  int        `yaml:"weight"`
	Rate    int        `yaml:"rate"`
	Check   load.Check `yaml:"check"`
}

// Mixed says whether the scenario sends several requests in each cell.
func (s *Scenario) Mixed() bool { return len(s.Requests) > 0 }

// checkRequests checks a mix (requests:) of scenario s, whose node is node, and completes it
// (methods upper-cased, bodies resolved against dir, a share's weight 1 when not given, JSON
// checks' content type); it returns what is wrong, each at its line. Each request is checked as
// a scenario's request is.
func (s *Scenario) checkRequests(node *yaml.Node, dir, what string) []lineError {
	var errs []lineError
	add := func(line int, format string, args ...any) { errs = append(errs, errorf(line, format, args...)) }
	listLine := keyLine(node, "requests")
	for _, key := range []string{"request", "check"} {
		if line := keyLine(node, key); line > 0 {
			add(line, "%s: give %s per request of requests:, not beside it", what, key)
		}
	}
	items := keyNode(node, "requests")
	kinds := make([]load.Kind, 0, len(s.Requests))
	kindsOK := true // each kind on its own: then the set is checked
	m := load.Model{Rate: max(s.Load.Rate, 1), Connections: s.Load.Connections}
	for i := range s.Requests {
		r := &s.Requests[i]
		item := (*yaml.Node)(nil)
		line := listLine
		if items != nil && items.Kind == yaml.SequenceNode && i < len(items.Content) {
			item, line = items.Content[i], items.Content[i].Line
		}
		at := func(key ...string) int {
			if l := keyLine(item, key...); l > 0 {
				return l
			}
			return line
		}
		name := r.Name
		if name == "" {
			name = fmt.Sprint(i + 1)
		}
		where := fmt.Sprintf("%s: request %s", what, name)
		if r.Method == "" {
			r.Method = "GET"
		}
		r.Method = strings.ToUpper(r.Method)
		if !slices.Contains([]string{"GET", "POST", "PUT", "PATCH", "DELETE"}, r.Method) {
			add(at("method"), "%s: method %q is not one of GET, POST, PUT, PATCH, DELETE", where, r.Method)
		}
		if !strings.HasPrefix(r.Path, "/") {
			add(at("path"), "%s needs a path starting with / (e.g. /ingest)", where)
		}
		if r.BodyFile != "" {
			r.BodyFile = resolve(dir, r.BodyFile)
			if _, err := os.Stat(r.BodyFile); err != nil {
				add(at("body_file"), "%s: body_file: %v", where, err)
			}
		}
		if len(r.BodySizes) > 0 || r.PadField != "" {
			add(at("body_sizes"), "%s: body_sizes sweeps a scenario of one request; give the mix's bodies as body_file", where)
		}
		switch {
		case keyLine(item, "weight") > 0 && keyLine(item, "rate") > 0:
			add(at("rate"), "%s: give a weight (a share of load:) or a rate (a stream of its own), not both", where)
		case keyLine(item, "rate") > 0:
			if err := loadspec.CheckRate(r.Rate); err != nil {
				add(at("rate"), "%s: rate %d: %v", where, r.Rate, err)
			}
		case keyLine(item, "weight") == 0:
			r.Weight = 1
		}
		c := &r.Check
		if c.MinLatency < 0 {
			add(at("check", "min_latency"), "%s: check.min_latency %s: must not be negative", where, loadspec.FormatDuration(c.MinLatency))
		}
		if len(c.JSONFields) > 0 {
			if c.ContentType == "" {
				c.ContentType = "application/json"
			} else if c.ContentType != "application/json" {
				add(at("check", "content_type"), "%s: check.json_fields needs a JSON answer, but check.content_type is %q; drop one of them", where, c.ContentType)
			}
		}
		k := load.Kind{Name: r.Name, Weight: r.Weight, Rate: r.Rate}
		if keyLine(item, "rate") > 0 && r.Rate < 1 {
			kindsOK = false // said above
		} else if err := load.CheckKinds([]load.Kind{k}, m); err != nil && !strings.Contains(err.Error(), "no request takes a share") {
			add(at("name"), "%s: %v", what, err)
			kindsOK = false
		}
		kinds = append(kinds, k)
	}
	if kindsOK {
		if err := load.CheckKinds(kinds, m); err != nil {
			add(listLine, "%s: requests: %v", what, err)
		}
	}
	return errs
}

// Kinds are the scenario's requests as the load engine's kinds, their bodies read; nil for a
// scenario of one request. Each request's URL is its path, until a run aims it at a target.
func (s *Scenario) Kinds() ([]load.Kind, error) {
	var out []load.Kind
	for _, r := range s.Requests {
		req, err := r.Request.Load()
		if err != nil {
			return nil, fmt.Errorf("scenario %s: request %s: %w", s.Name, r.Name, err)
		}
		req.URL = r.Path
		out = append(out, load.Kind{Name: r.Name, Request: req, Check: r.Check, Weight: r.Weight, Rate: r.Rate})
	}
	return out, nil
}

// Streams is the mix's layout as the results carry it (load.FormatKinds); empty for a scenario
// of one request.
func (s *Scenario) Streams() string {
	kinds := make([]load.Kind, len(s.Requests))
	for i, r := range s.Requests {
		kinds[i] = load.Kind{Name: r.Name, Weight: r.Weight, Rate: r.Rate}
	}
	return load.FormatKinds(kinds)
}
