package payload

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

func TestPad(t *testing.T) {
	reading, err := os.ReadFile("../../payloads/iot-reading.json")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		doc     string
		field   string
		size    int
		wantErr string
	}{
		{"the standard reading at 16 KiB", string(reading), "firmware", 16 << 10, ""},
		{"the standard reading at 256 KiB", string(reading), "firmware", 256 << 10, ""},
		{"exactly its own size", `{"a":"b","n":1}`, "a", len(`{"a":"b","n":1}`), ""},
		{"a field that escapes", `{"a":"<&>","n":1}`, "a", 100, ""},
		{"numbers keep their text", `{"a":"b","n":23.50,"t":1763812800000}`, "a", 64, ""},
		{"smaller than the document", string(reading), "firmware", 1000, "smaller than the body itself"},
		{"a number field", `{"a":1}`, "a", 100, `no string field "a"`},
		{"not JSON", `[1,2]`, "a", 100, "not a JSON object"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Pad([]byte(c.doc), c.field, c.size)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(c.doc, "23.50") && !strings.Contains(string(got), `"n":23.50`) {
				t.Errorf("number rewritten: %s", got)
			}
			if len(got) != c.size {
				t.Errorf("%d bytes, want %d", len(got), c.size)
			}
			var before, after map[string]any
			json.Unmarshal([]byte(c.doc), &before)
			if err := json.Unmarshal(got, &after); err != nil {
				t.Fatalf("padded body is not JSON: %v", err)
			}
			if len(after) != len(before) {
				t.Errorf("%d fields, want the document's %d", len(after), len(before))
			}
			for k, v := range before {
				if k == c.field {
					if s := after[k].(string); !strings.HasPrefix(s, v.(string)) {
						t.Errorf("%s = %.20q…, want it to start with %q", k, s, v)
					}
				} else if after[k] != v {
					t.Errorf("%s changed: %v → %v", k, v, after[k])
				}
			}
		})
	}
}

// TestMinSize: the least size Pad makes, found without building a body.
func TestMinSize(t *testing.T) {
	reading, _ := os.ReadFile("../../payloads/iot-reading.json")
	for _, doc := range []string{string(reading), `{"a":"<&>","n":23.50}`, `{"a":""}`} {
		field := "a"
		if doc == string(reading) {
			field = "firmware"
		}
		least, err := MinSize([]byte(doc), field)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := Pad([]byte(doc), field, least); err != nil || len(got) != least {
			t.Errorf("Pad(%.20q, %d): %d bytes, %v", doc, least, len(got), err)
		}
		if _, err := Pad([]byte(doc), field, least-1); err == nil {
			t.Errorf("Pad(%.20q) below MinSize %d succeeded", doc, least)
		}
	}
	if _, err := MinSize([]byte(`{"a":1}`), "a"); err == nil {
		t.Error("MinSize accepted a number field")
	}
}
