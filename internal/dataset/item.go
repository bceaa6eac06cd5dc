// Package dataset reads evaluation datasets: JSON Lines in the formats of
// digest itself, openai/evals, inspect_ai and promptfoo, one item at a time,
// so that a dataset of any size streams through in constant memory.
package dataset

import (
	"fmt"

	"github.com/digest-cli/digest/internal/provider"
)

// Formats an item can come in, detected line by line.
const (
	Native      = "native"       // {"id"?, "system"?, "prompt" | "messages", "expected"?, "assert"?, "metadata"?}
	OpenAIEvals = "openai-evals" // {"input": string | [messages], "ideal": string | [strings]}
	Inspect     = "inspect"      // {"input", "target", "choices"?, "id"?, "metadata"?}
	Promptfoo   = "promptfoo"    // {"vars": {...}, "assert": [...]} with a --prompt template
)

// Item is one dataset entry, ready to send and to score.
type Item struct {
	ID       string // the item's own id, or "line-N"
	Line     int    // 1-based line in the source
	Format   string // one of the format constants
	System   string
	Messages []provider.Message
	// Expected holds the acceptable answers (expected, ideal, target).
	Expected []string
	// Choices are the options of a multiple-choice item, in order: A, B, ...
	Choices  []string
	Asserts  []Assertion
	Metadata map[string]any
}

// Assertion is one check on a model's answer, as written in a dataset's
// "assert" list or given with --assert.
type Assertion struct {
	// Type is exact, includes, icontains, starts-with, regex, numeric,
	// choice, json, json-schema or judge, optionally prefixed with "not-".
	// promptfoo's names (equals, contains, is-json, llm-rubric, ...) are
	// read as their digest equivalents.
	Type string `json:"type"`
	// Value is what the assertion compares against: a string, a number, a
	// list of strings (any may match), a JSON schema object, or a rubric.
	// Empty means the item's Expected answers.
	Value any `json:"value,omitempty"`
	// Weight is the assertion's share of the item's score; 0 means 1.
	Weight float64 `json:"weight,omitempty"`
	// Threshold is the score at or above which the item passes; nil means
	// every assertion must pass.
	Threshold *float64 `json:"threshold,omitempty"`
}

// LineError is a dataset line that cannot be read.
type LineError struct {
	File string
	Line int
	Msg  string
}

func (e *LineError) Error() string {
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}
