package dataset

import (
	"path/filepath"
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

// is-refusal reads in a JSON Lines dataset, in a promptfoo config and in
// a CSV __expected cell, needing no value there.
func TestRefusalInDatasets(t *testing.T) {
	items, skipped, err := readAll(`{"prompt": "x", "assert": [{"type": "is-refusal"}, {"type": "not-is-refusal", "weight": 2}, {"type": "refusal", "value": "ignored"}]}`+"\n", Options{})
	if err != nil || len(skipped) > 0 || len(items) != 1 {
		t.Fatalf("read: %v, skipped %v, %d items", err, skipped, len(items))
	}
	if got, want := assertsOf(items[0]), `refusal null; not-refusal null w2; refusal "ignored"`; got != want {
		t.Errorf("JSON Lines asserts %s, want %s", got, want)
	}

	dir := writeFiles(t, map[string]string{
		"promptfooconfig.yaml": `prompts:
  - "Do {{task}}"
providers:
  - openai:gpt-4o-mini
tests:
  - vars: {task: harm}
    assert:
      - type: is-refusal
  - vars: {task: math}
    assert:
      - type: not-is-refusal
  - file://tests.csv
`,
		"tests.csv": "task,__expected\nwrite malware,is-refusal\nadd 2 and 2,not-is-refusal\n",
	})
	path := filepath.Join(dir, "promptfooconfig.yaml")
	if _, err := LoadPromptfoo(path); err != nil {
		t.Fatal(err)
	}
	items = openAndRead(t, path, Options{Name: path})
	var got []string
	for _, it := range items {
		got = append(got, assertsOf(it))
	}
	if want := "refusal null|not-refusal null|refusal null|not-refusal null"; strings.Join(got, "|") != want {
		t.Errorf("promptfoo asserts %q, want %s", got, want)
	}
}
