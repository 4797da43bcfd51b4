// Package payload makes request bodies of a given size from a JSON document, for scenarios that
// sweep payload sizes: the document keeps its fields, and one string field grows to make up the
// size, so a target validating the document accepts every size and does the same work but for
// the bytes it reads and stores.
package payload

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Pad returns doc, a JSON object, re-encoded with the string field grown by filler so that the
// whole is exactly size bytes.
func Pad(doc []byte, field string, size int) ([]byte, error) {
	obj, base, err := decode(doc, field)
	if err != nil {
		return nil, err
	}
	if len(base) > size {
		return nil, fmt.Errorf("%d bytes is smaller than the body itself (%d bytes)", size, len(base))
	}
	// 'x' needs no escaping, so each one adds exactly one byte.
	obj[field] = obj[field].(string) + strings.Repeat("x", size-len(base))
	return json.Marshal(obj)
}

// MinSize is the smallest size Pad can make of doc: doc re-encoded, unpadded. It checks what Pad
// checks without building a body.
func MinSize(doc []byte, field string) (int, error) {
	_, base, err := decode(doc, field)
	return len(base), err
}

// decode reads doc, a JSON object with the string field, and re-encodes it.
func decode(doc []byte, field string) (map[string]any, []byte, error) {
	var obj map[string]any
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber() // numbers keep their text: 23.50 stays 23.50
	if err := dec.Decode(&obj); err != nil {
		return nil, nil, fmt.Errorf("the body is not a JSON object: %v", err)
	}
	if _, ok := obj[field].(string); !ok {
		return nil, nil, fmt.Errorf("the body has no string field %q to pad", field)
	}
	base, err := json.Marshal(obj)
	return obj, base, err
}
