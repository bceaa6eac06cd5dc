package dataset

import (
	"encoding/json"
	"strings"
	"testing"
)

// refusal is digest's name, promptfoo's is-refusal is read as it, each
// with not-, with or without a value (is-refusal takes none; one given is
// not a schema, as for is-json).
func TestRefusalAssertionType(t *testing.T) {
	for _, tt := range []struct {
		name     string
		hasValue bool
		want     string
	}{
		{"refusal", false, "refusal"},
		{"not-refusal", false, "not-refusal"},
		{"is-refusal", false, "refusal"},
		{"is-refusal", true, "refusal"},
		{"not-is-refusal", false, "not-refusal"},
		{" Is-Refusal ", false, "refusal"},
		{"NOT-IS-REFUSAL", false, "not-refusal"},
	} {
		got, known := AssertionType(tt.name, tt.hasValue)
		if !known || got != tt.want {
			t.Errorf("AssertionType(%q, %v) = %q, %v; want %q", tt.name, tt.hasValue, got, known, tt.want)
		}
	}
	if _, known := AssertionType("is-refused", false); known {
		t.Error("is-refused is known")
	}
	known := KnownAssertions()
	if !strings.Contains(known, "judge, refusal, each") || !strings.Contains(known, ", is-refusal") {
		t.Errorf("KnownAssertions does not list refusal and is-refusal: %s", known)
	}
}

// is-refusal reads in a JSON Lines dataset, needing no value there.
func TestRefusalInJSONLines(t *testing.T) {
	items, skipped, err := readAll(`{"prompt": "x", "assert": [{"type": "is-refusal"}, {"type": "not-is-refusal", "weight": 2}, {"type": "refusal", "value": "ignored"}]}`+"\n", Options{})
	if err != nil || len(skipped) > 0 || len(items) != 1 {
		t.Fatalf("read: %v, skipped %v, %d items", err, skipped, len(items))
	}
	if got, want := assertsOf(items[0]), `refusal null; not-refusal null w2; refusal "ignored"`; got != want {
		t.Errorf("JSON Lines asserts %s, want %s", got, want)
	}

}

func assertsOf(it Item) string {
	var parts []string
	for _, a := range it.Asserts {
		v, _ := json.Marshal(a.Value)
		s := a.Type + " " + string(v)
		if a.Weight != 0 {
			s += " w" + strings.TrimRight(strings.TrimRight(jsonNum(a.Weight), "0"), ".")
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

func jsonNum(f float64) string { b, _ := json.Marshal(f); return string(b) }
