package scenario

import (
	"reflect"

	"go.yaml.in/yaml/v3"
)

// KeyError is a key of a YAML document that its Go type does not know, at its line.
type KeyError struct {
	Line int
	Msg  string
}

// UnknownKeys reports every key under node that the yaml tags of t do not name: the check
// scenarios.yaml gets, for the files beside it (experiments.yaml). where names node in messages.
func UnknownKeys(node *yaml.Node, t reflect.Type, where string) []KeyError {
	var out []KeyError
	for _, e := range checkKeys(node, t, where) {
		out = append(out, KeyError{e.line, e.msg})
	}
	return out
}
