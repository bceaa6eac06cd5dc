package dataset

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/provider"
)

// readAll reads a whole dataset into memory (the tests' datasets are small).
func readAll(in string, o Options) ([]Item, []*LineError, error) {
	var items []Item
	skipped, err := Read(strings.NewReader(in), o, func(it Item) error {
		items = append(items, it)
		return nil
	})
	return items, skipped, err
}

func user(s string) []provider.Message { return []provider.Message{{Role: "user", Content: s}} }

func ptr(f float64) *float64 { return &f }

func TestFormats(t *testing.T) {
	const translate = "Translate into {{ language }}:\n\n{{text}}\n"
	tests := []struct {
		name, template, line string
		want                 Item
	}{
		{
			name: "native GSM8K-style",
			line: `{"id": "gsm8k-0", "prompt": "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. How many clips did Natalia sell altogether in April and May?", "expected": "72"}`,
			want: Item{ID: "gsm8k-0", Line: 1, Format: Native,
				Messages: user("Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. How many clips did Natalia sell altogether in April and May?"),
				Expected: []string{"72"}},
		},
		{
			name: "native with system, numeric assert, numeric id and metadata",
			line: `{"id": 1042, "system": "End with #### <number>.", "prompt": "2+2?", "expected": 4, "assert": [{"type": "numeric", "weight": 2, "threshold": 0.5}, {"type": "not-includes", "value": "I cannot"}], "metadata": {"split": "test", "n": 3}}`,
			want: Item{ID: "1042", Line: 1, Format: Native, System: "End with #### <number>.", Messages: user("2+2?"),
				Expected: []string{"4"},
				Asserts:  []Assertion{{Type: "numeric", Weight: 2, Threshold: ptr(0.5)}, {Type: "not-includes", Value: "I cannot"}},
				Metadata: map[string]any{"split": "test", "n": 3.0}},
		},
		{
			name: "native messages with a leading system message and expected list",
			line: `{"system": "Be brief.", "messages": [{"role": "system", "content": "Answer in French."}, {"role": "user", "content": "Capital of Italy?"}, {"role": "assistant", "content": "Rome."}, {"role": "user", "content": "And of Spain?"}], "expected": ["Madrid", "madrid"]}`,
			want: Item{ID: "line-1", Line: 1, Format: Native, System: "Be brief.\n\nAnswer in French.",
				Messages: []provider.Message{{Role: "user", Content: "Capital of Italy?"}, {Role: "assistant", Content: "Rome."}, {Role: "user", Content: "And of Spain?"}},
				Expected: []string{"Madrid", "madrid"}},
		},
		{
			name: "native json assert with a schema and promptfoo names",
			line: `{"prompt": "Give {\"a\": 1} back.", "assert": [{"type": "is-json"}, {"type": "is-json", "value": {"type": "object"}}, {"type": "equals", "value": "x"}, {"type": "not-contains", "value": ["y", "z"]}, {"type": "llm-rubric", "value": "polite"}, {"type": "Not-Contains-JSON"}, {"type": "model-graded-closedqa", "value": "c"}]}`,
			want: Item{ID: "line-1", Line: 1, Format: Native, Messages: user(`Give {"a": 1} back.`),
				Asserts: []Assertion{{Type: "json"}, {Type: "json-schema", Value: map[string]any{"type": "object"}}, {Type: "exact", Value: "x"},
					{Type: "not-includes", Value: []any{"y", "z"}}, {Type: "judge", Value: "polite"},
					{Type: "not-contains-json"}, {Type: "judge", Value: "c"}}},
		},
		{
			name: "openai/evals Match",
			line: `{"input": [{"role": "system", "content": "Complete the phrase as concisely as possible."}, {"role": "user", "content": "Once upon a "}], "ideal": "time"}`,
			want: Item{ID: "line-1", Line: 1, Format: OpenAIEvals, System: "Complete the phrase as concisely as possible.",
				Messages: user("Once upon a "), Expected: []string{"time"}},
		},
		{
			name: "openai/evals few-shot and ideal list",
			line: `{"input": [{"role": "system", "content": "Name the color."}, {"role": "system", "name": "example_user", "content": "grass"}, {"role": "system", "name": "example_assistant", "content": "green"}, {"role": "user", "content": "sky"}], "ideal": ["blue", "Blue"]}`,
			want: Item{ID: "line-1", Line: 1, Format: OpenAIEvals, System: "Name the color.",
				Messages: []provider.Message{{Role: "user", Content: "grass"}, {Role: "assistant", Content: "green"}, {Role: "user", Content: "sky"}},
				Expected: []string{"blue", "Blue"}},
		},
		{
			name: "openai/evals string input",
			line: `{"input": "What is 2+2?", "ideal": "4"}`,
			want: Item{ID: "line-1", Line: 1, Format: OpenAIEvals, Messages: user("What is 2+2?"), Expected: []string{"4"}},
		},
		{
			name: "inspect multiple choice by letter",
			line: `{"id": "arc-1", "input": "Which gas do plants absorb from the air?", "choices": ["Oxygen", "Carbon dioxide", "Nitrogen", "Helium"], "target": "B", "metadata": {"source": "arc"}}`,
			want: Item{ID: "arc-1", Line: 1, Format: Inspect,
				Messages: user("Which gas do plants absorb from the air?\n\nA) Oxygen\nB) Carbon dioxide\nC) Nitrogen\nD) Helium\n\n" + ChoiceInstruction),
				Expected: []string{"B"}, Choices: []string{"Oxygen", "Carbon dioxide", "Nitrogen", "Helium"},
				Metadata: map[string]any{"source": "arc"}},
		},
		{
			name: "inspect multiple choice by text, messages input",
			line: `{"input": [{"role": "system", "content": "Science quiz."}, {"role": "user", "content": [{"type": "text", "text": "Which is a mammal?"}]}], "choices": ["Shark", "Dolphin"], "target": ["Dolphin"]}`,
			want: Item{ID: "line-1", Line: 1, Format: Inspect, System: "Science quiz.",
				Messages: user("Which is a mammal?\n\nA) Shark\nB) Dolphin\n\n" + ChoiceInstruction),
				Expected: []string{"B"}, Choices: []string{"Shark", "Dolphin"}},
		},
		{
			name: "inspect lower-case letter target",
			line: `{"input": "Pick one.", "choices": ["x", "y"], "target": "b"}`,
			want: Item{ID: "line-1", Line: 1, Format: Inspect, Messages: user("Pick one.\n\nA) x\nB) y\n\n" + ChoiceInstruction),
				Expected: []string{"B"}, Choices: []string{"x", "y"}},
		},
		{
			name: "inspect target",
			line: `{"id": 7, "input": "Name a primary color.", "target": ["red", "blue", "yellow"]}`,
			want: Item{ID: "7", Line: 1, Format: Inspect, Messages: user("Name a primary color."), Expected: []string{"red", "blue", "yellow"}},
		},
		{
			name:     "promptfoo with a text template",
			template: translate,
			// promptfoo renders assertion values with the vars too.
			line: `{"description": "french greeting", "vars": {"language": "French", "text": "Good morning", "expected": "Bonjour"}, "assert": [{"type": "icontains", "value": "bonjour"}, {"type": "equals", "value": "{{expected}}", "weight": 0.5}], "options": {}}`,
			want: Item{ID: "french greeting", Line: 1, Format: Promptfoo,
				Messages: user("Translate into French:\n\nGood morning"),
				Asserts:  []Assertion{{Type: "icontains", Value: "bonjour"}, {Type: "exact", Value: "Bonjour", Weight: 0.5}}},
		},
		{
			name:     "promptfoo non-string vars, dotted paths, id wins over description",
			template: "Data: {{ data }}; n={{n}}; who={{ user.name }}; none=[{{ missing_is_null }}]",
			line:     `{"id": "pf-2", "description": "d", "vars": {"data": {"k": [1, 2.50]}, "n": 3, "user": {"name": "Ada"}, "missing_is_null": null}}`,
			want: Item{ID: "pf-2", Line: 1, Format: Promptfoo,
				Messages: user(`Data: {"k":[1,2.50]}; n=3; who=Ada; none=[]`)},
		},
		{
			name:     "promptfoo chat template",
			template: `[{"role": "system", "content": "You translate to {{language}}."}, {"role": "user", "content": "{{ text }}"}]`,
			line:     `{"vars": {"language": "German", "text": "Thank you"}, "assert": [{"type": "contains", "value": "Danke"}]}`,
			want: Item{ID: "line-1", Line: 1, Format: Promptfoo, System: "You translate to German.", Messages: user("Thank you"),
				Asserts: []Assertion{{Type: "includes", Value: "Danke"}}},
		},
		{
			name: "escapes and unicode",
			line: `{"prompt": "tab\there \"quoted\" \\ \u00e9\ud83d\ude00 é 😀", "expected": "\u0041"}`,
			want: Item{ID: "line-1", Line: 1, Format: Native, Messages: user("tab\there \"quoted\" \\ é😀 é 😀"), Expected: []string{"A"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			items, _, err := readAll(tc.line+"\n", Options{Name: "d.jsonl", Template: tc.template})
			if err != nil {
				t.Fatal(err)
			}
			if len(items) != 1 {
				t.Fatalf("got %d items, want 1", len(items))
			}
			if !reflect.DeepEqual(items[0], tc.want) {
				t.Errorf("got  %#v\nwant %#v", items[0], tc.want)
			}
		})
	}
}

func TestBlankLinesCRLFAndBOM(t *testing.T) {
	in := "\uFEFF{\"prompt\": \"one\"}\r\n\r\n   \t\r\n{\"prompt\": \"two\\r\\n\", \"id\": \"b\"}\r\n\n{\"prompt\": \"three\"}"
	items, _, err := readAll(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range items {
		got = append(got, fmt.Sprintf("%d %s %q", it.Line, it.ID, it.Messages[0].Content))
	}
	want := []string{`1 line-1 "one"`, `4 b "two\r\n"`, `6 line-6 "three"`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	// A byte order mark is only welcome on line 1.
	_, _, err = readAll("{\"prompt\": \"one\"}\n\uFEFF{\"prompt\": \"two\"}\n", Options{Name: "d.jsonl"})
	if err == nil || !strings.HasPrefix(err.Error(), "d.jsonl:2: invalid JSON at byte 1:") {
		t.Errorf("BOM on line 2: got %v", err)
	}
	// Empty input and only blank lines are no items and no error.
	for _, in := range []string{"", "\n", "\r\n  \n\t", "\uFEFF"} {
		items, skipped, err := readAll(in, Options{})
		if len(items) != 0 || len(skipped) != 0 || err != nil {
			t.Errorf("%q: got %v, %v, %v", in, items, skipped, err)
		}
	}
}

func TestLineErrors(t *testing.T) {
	many := make([]string, 27)
	for i := range many {
		many[i] = fmt.Sprintf("%q", fmt.Sprint(i))
	}
	tests := []struct {
		line, template, want string
	}{
		// Not JSON, not an object.
		{`{"prompt": "x"`, "", `invalid JSON: the line ends before the value does`},
		{`{`, "", `invalid JSON: the line ends before the value does (digest eval reads JSON Lines: each object on one line, not pretty-printed JSON)`},
		{`{"prompt": "x"} {"prompt": "y"}`, "", `invalid JSON at byte 17: invalid character '{' after top-level value`},
		{`{'prompt': 'x'}`, "", `invalid JSON at byte 2: invalid character '\'' looking for beginning of object key string`},
		{"{\"prompt\": \"caf\xe9\"}", "", `invalid UTF-8 at byte 16; save the file as UTF-8`},
		{`[{"prompt": "x"}]`, "", `a line must be a JSON object; got a list (digest eval reads JSON Lines: one object per line, not a JSON array)`},
		{`"What is 2+2?"`, "", `a line must be a JSON object; got a string`},
		{`{}`, "", shapes + `; got an empty object`},
		{`{"question": "2+2?", "answer": "2+2=4 #### 4"}`, "", shapes + `; got keys "question", "answer" (for GSM8K-style lines, rename "question" to "prompt" and put the number after "####" in "expected")`},
		{`{"input": "2+2?"}`, "", shapes + `; got keys "input" ("input" needs "ideal", "target" or "choices")`},
		{`{"text": "x", "label": 1}`, "", shapes + `; got keys "text", "label"`},
		// native
		{`{"prompt": 12, "expected": "12"}`, "", `"prompt" must be a string or "messages" a list of {"role","content"}; got a number`},
		{`{"prompt": null}`, "", `"prompt" must be a string or "messages" a list of {"role","content"}; got null`},
		{`{"prompt": null, "messages": null}`, "", `"prompt" must be a string or "messages" a list of {"role","content"}; got null`},
		{`{"messages": "hello"}`, "", `"prompt" must be a string or "messages" a list of {"role","content"}; got a string`},
		{`{"prompt": " \n "}`, "", `"prompt" is empty`},
		{`{"prompt": "x", "messages": [{"role": "user", "content": "y"}]}`, "", `a line has either "prompt" or "messages", not both`},
		{`{"messages": []}`, "", `"messages" is an empty list`},
		{`{"messages": ["hi"]}`, "", `"messages"[0] must be an object {"role","content"}; got a string`},
		{`{"messages": [{"content": "hi"}]}`, "", `"messages"[0]: "role" is missing`},
		{`{"messages": [{"role": 1, "content": "hi"}]}`, "", `"messages"[0]: "role" must be "system", "user" or "assistant"; got a number`},
		{`{"messages": [{"role": "tool", "content": "hi"}]}`, "", `"messages"[0]: "role" must be "system", "user" or "assistant"; got "tool"`},
		{`{"messages": [{"role": "user"}]}`, "", `"messages"[0]: "content" is missing`},
		{`{"messages": [{"role": "user", "content": 5}]}`, "", `"messages"[0]: "content" must be a string; got a number`},
		{`{"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": ""}]}`, "", `"messages"[1]: "content" is empty`},
		{`{"messages": [{"role": "user", "content": "a"}, {"role": "system", "content": "b"}]}`, "", `"messages"[1]: a "system" message must come before the conversation`},
		{`{"messages": [{"role": "system", "content": "a"}, {"role": "assistant", "content": "b"}]}`, "", `"messages" has no "user" message`},
		{`{"messages": [{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4"}]}`, "", `"messages" must end with a "user" message, not "assistant" (an answer to check belongs in "expected")`},
		{`{"input": [{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4"}], "target": "4"}`, "", `"input" must end with a "user" message, not "assistant" (an answer to check belongs in "target")`},
		{`{"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]}`, "", `"messages"[0]: "content"[0]: only "text" parts are supported; got "image_url"`},
		{`{"messages": [{"role": "user", "content": ["hi"]}]}`, "", `"messages"[0]: "content"[0] must be a {"type": "text", "text"} part; got a string`},
		{`{"messages": [{"role": "user", "content": [{"type": "text", "text": 1}]}]}`, "", `"messages"[0]: "content"[0]: "text" must be a string; got a number`},
		{`{"prompt": "x", "system": ["a"]}`, "", `"system" must be a string; got a list`},
		{`{"prompt": "x", "expected": {"a": 1}}`, "", `"expected" must be a string or a list of strings; got an object`},
		{`{"prompt": "x", "expected": ["a", null]}`, "", `"expected"[1] must be a string; got null`},
		{`{"prompt": "x", "id": true}`, "", `"id" must be a string or a number; got a boolean`},
		{`{"prompt": "x", "metadata": ["a"]}`, "", `"metadata" must be an object; got a list`},
		// assert
		{`{"prompt": "x", "assert": {"type": "exact"}}`, "", `"assert" must be a list of {"type", "value"?, "weight"?, "threshold"?, "metric"?, "scale"?}; got an object`},
		{`{"prompt": "x", "assert": ["exact"]}`, "", `"assert"[0]: must be an object {"type", "value"?, "weight"?, "threshold"?, "metric"?, "scale"?}; got a string`},
		{`{"prompt": "x", "assert": [{"value": "a"}]}`, "", `"assert"[0]: "type" is missing`},
		{`{"prompt": "x", "assert": [{"type": 3}]}`, "", `"assert"[0]: "type" must be a string; got a number`},
		{`{"prompt": "x", "assert": [{"type": "exact"}, {"type": "javascript", "value": "output.length < 5"}]}`, "",
			`"assert"[1]: unknown type "javascript"; digest knows exact, includes, icontains, starts-with, regex, numeric, choice, json, json-schema, judge, refusal, each also with "not-", and promptfoo's equals, contains, contains-any, icontains-any, is-json, contains-json, llm-rubric, model-graded-closedqa, g-eval, is-refusal`},
		{`{"prompt": "x", "assert": [{"type": "exact"}, {"type": "exact", "weight": -1}]}`, "", `"assert"[1]: "weight" must be a number >= 0; got -1`},
		{`{"prompt": "x", "assert": [{"type": "exact", "weight": "2"}]}`, "", `"assert"[0]: "weight" must be a number >= 0; got a string`},
		{`{"prompt": "x", "assert": [{"type": "exact", "weight": 1e999}]}`, "", `"assert"[0]: "weight" must be a number >= 0; got 1e999`},
		{`{"prompt": "x", "assert": [{"type": "exact", "threshold": "high"}]}`, "", `"assert"[0]: "threshold" must be a number from 0 to 1; got a string`},
		{`{"prompt": "x", "assert": [{"type": "exact", "threshold": 1.5}]}`, "", `"assert"[0]: "threshold" must be a number from 0 to 1; got 1.5`},
		{`{"prompt": "x", "assert": [{"type": "regex", "value": "(?<=a)b"}]}`, "", "\"assert\"[0]: \"value\" is not a valid regular expression (Go RE2 syntax: no lookaround or backreferences): error parsing regexp: invalid named capture: `(?<=a)b`"},
		{`{"prompt": "x", "assert": [{"type": "not-regex", "value": ["^a", 5, "a)"]}]}`, "", "\"assert\"[0]: \"value\" is not a valid regular expression (Go RE2 syntax: no lookaround or backreferences): error parsing regexp: unexpected ): `a)`"},
		// openai/evals
		{`{"input": 42, "ideal": "42"}`, "", `"input" must be a string or a list of {"role","content"}; got a number`},
		{`{"input": "", "ideal": "x"}`, "", `"input" is empty`},
		{`{"input": "q", "ideal": null}`, "", `"ideal" must be a string or a list of strings; got null`},
		{`{"input": "q", "ideal": ["a", {}]}`, "", `"ideal"[1] must be a string; got an object`},
		{`{"input": [{"role": "user", "content": "q"}, {"role": "bot", "content": "a"}], "ideal": "x"}`, "", `"input"[1]: "role" must be "system", "user" or "assistant"; got "bot"`},
		// inspect
		{`{"input": "q", "target": true}`, "", `"target" must be a string or a list of strings; got a boolean`},
		{`{"input": "q", "choices": "A, B", "target": "A"}`, "", `"choices" must be a list of strings; got a string`},
		{`{"input": "q", "choices": [], "target": "A"}`, "", `"choices" is an empty list`},
		{`{"input": "q", "choices": ["a", 2], "target": "A"}`, "", `"choices"[1] must be a string; got a number`},
		{`{"input": "q", "choices": ["a", " "], "target": "A"}`, "", `"choices"[1] is empty`},
		{`{"input": "q", "choices": [` + strings.Join(many, ",") + `], "target": "A"}`, "", `"choices" has 27 entries; at most 26 (A to Z) are supported`},
		{`{"input": "q", "choices": ["Paris", "Rome"], "target": "C"}`, "", `"target" "C" is neither a choice letter (A to B) nor the text of one of the choices`},
		{`{"input": "q", "choices": ["Paris", "Rome"], "target": "Madrid"}`, "", `"target" "Madrid" is neither a choice letter (A to B) nor the text of one of the choices`},
		// promptfoo
		{`{"vars": {"q": "x"}}`, "", `a promptfoo test case needs --prompt FILE`},
		{`{"vars": ["x"]}`, "Q: {{q}}", `"vars" must be an object; got a list`},
		{`{"vars": {"question": "x"}}`, "Q: {{ q }}", `the prompt template uses {{ q }}, but "vars" has no "q"`},
		{`{"vars": {"user": "Ada"}}`, "Hi {{user.name}}", `the prompt template uses {{user.name}}, but "vars" has no "user.name"`},
		{`{"vars": {"q": " "}}`, "{{q}}", `the prompt is empty once the template is filled`},
		{`{"vars": {"q": "x"}, "description": 5}`, "{{q}}", `"description" must be a string; got a number`},
		{`{"vars": {"q": ""}}`, `[{"role": "system", "content": "{{q}}"}, {"role": "user", "content": "Q"}, {"role": "assistant", "content": "A"}, {"role": "user", "content": "{{q}}"}]`,
			`message 3 of the prompt template is empty once filled`},
		{`{"vars": {"q": "x"}, "assert": [{"type": "equals", "value": "{{answer}}"}]}`, "{{q}}", `"assert"[0]: "value": the prompt template uses {{answer}}, but "vars" has no "answer"`},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			in := "{\"prompt\": \"fine\"}\n\n" + tc.line + "\n{\"prompt\": \"never read\"}\n"
			var lines []int
			skipped, err := Read(strings.NewReader(in), Options{Name: "data.jsonl", Template: tc.template}, func(it Item) error {
				lines = append(lines, it.Line)
				return nil
			})
			var le *LineError
			if !errors.As(err, &le) {
				t.Fatalf("%s\ngot %v (%T), want a *LineError", tc.line, err, err)
			}
			if want := "data.jsonl:3: " + tc.want; err.Error() != want {
				t.Errorf("%s\ngot  %s\nwant %s", tc.line, err, want)
			}
			if le.File != "data.jsonl" || le.Line != 3 || len(skipped) != 0 || !reflect.DeepEqual(lines, []int{1}) {
				t.Errorf("got %+v, skipped %v, items on lines %v", le, skipped, lines)
			}
		})
	}
}

func TestStdinName(t *testing.T) {
	for name, want := range map[string]string{"-": "stdin:1: ", "": "dataset:1: ", "x/y.jsonl": "x/y.jsonl:1: "} {
		_, _, err := readAll("{}\n", Options{Name: name})
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("Name %q: got %v, want prefix %q", name, err, want)
		}
	}
}

func TestTemplateErrors(t *testing.T) {
	for tmpl, want := range map[string]string{
		"Q: {{ q | upper }}":         "prompt template: {{ q | upper }}: filters are not supported, only {{ name }} placeholders",
		"{% if q %}{{q}}{% endif %}": "prompt template: {% if q %}: template tags are not supported, only {{ name }} placeholders",
		"Q: {{ q ":                   "prompt template: {{ q : unclosed placeholder (no }})",
		"Q: {{}}":                    "prompt template: {{}}: empty placeholder",
		"Q: {{ q() }}":               "prompt template: {{ q() }}: not a {{ name }} placeholder",
		" \n":                        "prompt template is empty",
		`[{"role": "system", "content": "{{q}}"}]`:                                       `prompt template: a chat prompt must end with a "user" message`,
		`[{"role": "user", "content": "{{ q | x }}"}]`:                                   "prompt template, message 0: {{ q | x }}: filters are not supported, only {{ name }} placeholders",
		`[{"role": "user", "content": "{{q}}"}, {"role": "assistant", "content": "ok"}]`: `prompt template: a chat prompt must end with a "user" message`,
	} {
		called := false
		_, err := Read(strings.NewReader(`{"vars": {"q": "x"}}`), Options{Template: tmpl}, func(Item) error { called = true; return nil })
		var le *LineError
		if err == nil || errors.As(err, &le) || err.Error() != want || called {
			t.Errorf("template %q: got %v (called %v), want %q", tmpl, err, called, want)
		}
	}
	// A template that is not a chat prompt is text, even when it starts with "[".
	items, _, err := readAll(`{"vars": {"q": "hi"}}`, Options{Template: "[INST] {{q}} [/INST]"})
	if err != nil || len(items) != 1 || items[0].Messages[0].Content != "[INST] hi [/INST]" {
		t.Errorf("got %v, %v", items, err)
	}
	// CRLF and a BOM in the template file are the file's, not the prompt's.
	items, _, err = readAll(`{"vars": {"q": "hi"}}`, Options{Template: "\uFEFFLine 1\r\nQ: {{q}}\r\n"})
	if err != nil || len(items) != 1 || items[0].Messages[0].Content != "Line 1\nQ: hi" {
		t.Errorf("got %v, %v", items, err)
	}
	// Braces that are not placeholders in an assertion value are left alone.
	items, _, err = readAll(`{"vars": {"q": "hi"}, "assert": [{"type": "regex", "value": "^\\d{{2}}$"}]}`, Options{Template: "{{q}}"})
	if err != nil || len(items) != 1 || items[0].Asserts[0].Value != `^\d{{2}}$` {
		t.Errorf("got %v, %v", items, err)
	}
}

func TestSkipInvalid(t *testing.T) {
	in := strings.Join([]string{
		`{"prompt": "one"}`,
		`{"prompt": 1}`,
		`{"prompt": "three"}`,
		`{"prompt": "` + strings.Repeat("x", 200) + `"}`,
		``,
		"{\"prompt\": \"\xff\"}",
		`not json`,
		`{"input": "seven", "ideal": "7"}`,
		`{"vars": {}}`,
	}, "\n")
	items, skipped, err := readAll(in, Options{Name: "data.jsonl", SkipInvalid: true, MaxLineBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	for _, it := range items {
		got = append(got, it.Line)
	}
	if !reflect.DeepEqual(got, []int{1, 3, 8}) {
		t.Errorf("items on lines %v, want 1, 3, 8", got)
	}
	var errs []string
	for _, e := range skipped {
		errs = append(errs, e.Error())
	}
	want := []string{
		`data.jsonl:2: "prompt" must be a string or "messages" a list of {"role","content"}; got a number`,
		`data.jsonl:4: line is 214 bytes, longer than the 100-byte limit. ` + longLineHint,
		`data.jsonl:6: invalid UTF-8 at byte 13; save the file as UTF-8`,
		`data.jsonl:7: invalid JSON at byte 2: invalid character 'o' in literal null (expecting 'u')`,
		`data.jsonl:9: a promptfoo test case needs --prompt FILE`,
	}
	if !reflect.DeepEqual(errs, want) {
		t.Errorf("skipped\n%s\nwant\n%s", strings.Join(errs, "\n"), strings.Join(want, "\n"))
	}
}

func TestMaxLineBytes(t *testing.T) {
	prompt := func(n int) string { // a line of exactly n bytes
		return `{"prompt": "` + strings.Repeat("y", n-14) + `"}`
	}
	for _, tc := range []struct {
		max, n int
		eol    string
	}{
		{100, 101, "\n"}, // within bufio's buffer
		{100, 101, "\r\n"},
		{100 << 10, 100<<10 + 1, "\n"}, // gathered in chunks
		{100 << 10, 300 << 10, "\r\n"},
		{70 << 10, 70<<10 + 1, ""}, // the last line, with no line end
		{16, 17, ""},
	} {
		// The long line is line 2, between one exactly at the limit and a
		// short one, unless it is the last.
		var in string
		switch {
		case tc.max < 20:
			in = "\n" + prompt(tc.n)
		case tc.eol == "":
			in = prompt(tc.max) + "\n" + prompt(tc.n)
		default:
			in = prompt(tc.max) + "\n" + prompt(tc.n) + tc.eol + prompt(20) + tc.eol
		}
		items, skipped, err := readAll(in, Options{Name: "d.jsonl", MaxLineBytes: tc.max, SkipInvalid: true})
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("d.jsonl:2: line is %d bytes, longer than the %d-byte limit. "+longLineHint, tc.n, tc.max)
		if len(skipped) != 1 || skipped[0].Error() != want {
			t.Errorf("max %d, line %d: skipped %v, want %s", tc.max, tc.n, skipped, want)
		}
		wantItems := 2
		if tc.eol == "" {
			wantItems = 1
		}
		if tc.max < 20 {
			wantItems = 0
		}
		if len(items) != wantItems || wantItems > 0 && (items[0].Line != 1 || len(items[0].Messages[0].Content) != tc.max-14) ||
			wantItems > 1 && items[1].Line != 3 {
			t.Errorf("max %d: got %d items", tc.max, len(items))
		}
		// Without SkipInvalid the long line stops the read.
		_, _, err = readAll(in, Options{Name: "d.jsonl", MaxLineBytes: tc.max})
		if err == nil || err.Error() != want {
			t.Errorf("got %v, want %s", err, want)
		}
	}
}

// TestLongLines reads lines longer than bufio's buffer, so gathered in
// chunks, with escapes spanning the chunk borders.
func TestLongLines(t *testing.T) {
	for _, n := range []int{64<<10 - 20, 64 << 10, 64<<10 + 1, 200 << 10, 3 << 20} {
		const unit = `a\"é😀\n`
		s := strings.Repeat(unit, n/len(unit)+1)[:n]
		s = strings.TrimSuffix(s, `\`)
		for _, eol := range []string{"\n", "\r\n", ""} {
			line := `{"id": "long", "prompt": "` + s + `"}`
			var want string
			if err := json.Unmarshal([]byte(line), &struct{ Prompt *string }{&want}); err != nil {
				t.Fatal(err)
			}
			sep := eol
			if sep == "" {
				sep = "\n"
			}
			items, _, err := readAll(line+sep+`{"prompt": "next"}`+eol, Options{})
			if err != nil {
				t.Fatalf("%d bytes: %v", n, err)
			}
			if len(items) != 2 || items[0].Messages[0].Content != want || items[1].Line != 2 {
				t.Errorf("%d bytes, eol %q: wrong items", n, eol)
			}
		}
	}
}

// repeatReader reads n bytes of a repeated pattern without holding them.
type repeatReader struct {
	pattern string
	n, off  int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := 0
	for k < len(p) && r.n > 0 {
		c := copy(p[k:min(len(p), k+r.n)], r.pattern[r.off:])
		k += c
		r.n -= c
		r.off = (r.off + c) % len(r.pattern)
	}
	return k, nil
}

func TestHundredMegabyteLine(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a 100 MB line")
	}
	const size = 100 << 20
	const pattern = "All work and no play makes Jack a dull boy. "
	in := io.MultiReader(strings.NewReader(`{"id": "big", "prompt": "`), &repeatReader{pattern: pattern, n: size},
		strings.NewReader("\"}\r\n{\"prompt\": \"after\"}\n"))
	runtime.GC()
	debug.FreeOSMemory()
	rss, peakOK := resetPeakRSS()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var live uint64
	var got []string
	_, err := Read(in, Options{Name: "big.jsonl", MaxLineBytes: 128 << 20}, func(it Item) error {
		if it.ID == "big" {
			p := it.Messages[0].Content
			if len(p) != size || p[:len(pattern)] != pattern || p[size-len(pattern):] != pattern[size%len(pattern):]+pattern[:size%len(pattern)] {
				t.Errorf("prompt of %d bytes, not the %d written", len(p), size)
			}
			// The line is let go before fn is called: only the prompt is
			// live.
			runtime.GC()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			live = m.HeapAlloc - min(m.HeapAlloc, before.HeapAlloc)
		}
		got = append(got, it.ID)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if !reflect.DeepEqual(got, []string{"big", "line-2"}) {
		t.Errorf("items %v", got)
	}
	// Everything allocated: the chunks the line is gathered in (a little
	// over its size), the line joined once, and the prompt.
	if total := after.TotalAlloc - before.TotalAlloc; total > 3.4*size {
		t.Errorf("reading a %d MB line allocated %d MB in all", size>>20, total>>20)
	}
	if live > 1.2*size {
		t.Errorf("%d MB live while fn has the item, want about the prompt's %d MB", live>>20, size>>20)
	}
	t.Logf("allocated %d MB in all; %d MB live in fn", (after.TotalAlloc-before.TotalAlloc)>>20, live>>20)
	// What the process needed at its peak: the line and the prompt, twice
	// the line's size, and not the chunks it was gathered in as well.
	if peak := peakRSS(); peakOK && peak > 0 && !raceEnabled {
		t.Logf("peak resident memory %d MB over %d MB before", (peak-rss)>>20, rss>>20)
		if peak-rss > 2.3*size {
			t.Errorf("peak resident memory grew by %d MB reading a %d MB line, want about twice the line", (peak-rss)>>20, size>>20)
		}
	}
}

// raceEnabled is set under the race detector, whose shadow memory makes
// resident memory no measure of the reader's.
var raceEnabled bool

// resetPeakRSS resets Linux's record of the process's peak resident memory
// and returns the current resident memory; ok is false where it cannot.
func resetPeakRSS() (rss uint64, ok bool) {
	if os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) != nil {
		return 0, false
	}
	rss = procStatus("VmRSS:")
	return rss, rss > 0
}

func peakRSS() uint64 { return procStatus("VmHWM:") }

// procStatus reads a size in kB from /proc/self/status, in bytes.
func procStatus(key string) uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, key); ok {
			var kb uint64
			fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), &kb)
			return kb << 10
		}
	}
	return 0
}

func TestStreams(t *testing.T) {
	pr, pw := io.Pipe()
	firstSeen := make(chan struct{})
	go func() {
		pw.Write([]byte(`{"prompt": "one"}` + "\n" + `{"prompt": "two"}` + "\n"))
		select {
		case <-firstSeen:
		case <-time.After(10 * time.Second):
			pw.CloseWithError(errors.New("line 3 was needed before item 1 was handed over"))
			return
		}
		pw.Write([]byte(`{"prompt": "three"}` + "\n"))
		pw.Close()
	}()
	var lines []int
	_, err := Read(pr, Options{}, func(it Item) error {
		if it.Line == 1 {
			close(firstSeen)
		}
		lines = append(lines, it.Line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(lines, []int{1, 2, 3}) {
		t.Errorf("lines %v", lines)
	}
}

func TestFnErrorStops(t *testing.T) {
	stop := errors.New("enough")
	var lines []int
	in := "{\"prompt\": \"1\"}\n{\"prompt\": \"2\"}\n{\"prompt\": 3}\n{\"prompt\": \"4\"}\n"
	_, err := Read(strings.NewReader(in), Options{}, func(it Item) error {
		lines = append(lines, it.Line)
		if it.Line == 2 {
			return fmt.Errorf("wrapped: %w", stop)
		}
		return nil
	})
	if !errors.Is(err, stop) || !reflect.DeepEqual(lines, []int{1, 2}) {
		t.Errorf("got %v after lines %v", err, lines)
	}
}

type failingReader struct{ r io.Reader }

func (f failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, errors.New("disk on fire")
	}
	return n, err
}

func TestReaderError(t *testing.T) {
	var lines []int
	_, err := Read(failingReader{strings.NewReader("{\"prompt\": \"1\"}\n{\"prompt\": \"2\"")}, Options{Name: "d.jsonl"}, func(it Item) error {
		lines = append(lines, it.Line)
		return nil
	})
	var le *LineError
	if err == nil || err.Error() != "reading d.jsonl: disk on fire" || errors.As(err, &le) || !reflect.DeepEqual(lines, []int{1}) {
		t.Errorf("got %v after lines %v", err, lines)
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	data := "{\"prompt\": \"hi\"}\n"
	if err := os.WriteFile(filepath.Join(dir, "eval.jsonl"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(data))
	zw.Close()
	if err := os.WriteFile(filepath.Join(dir, "big.jsonl.gz"), gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o644)
	for _, name := range []string{"eval.jsonl", "big.jsonl.gz"} {
		f, err := Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(f)
		if err != nil || string(got) != data {
			t.Errorf("%s: read %q, %v", name, got, err)
		}
		if err := f.Close(); err != nil {
			t.Error(err)
		}
	}
	for path, want := range map[string]string{
		filepath.Join(dir, "evals.jsonl"):    "dataset %[1]s/evals.jsonl: no such file. Try: %[1]s/eval.jsonl or %[1]s/big.jsonl.gz",
		filepath.Join(dir, "no/x.jsonl"):     "dataset %[1]s/no/x.jsonl: no such file (no directory %[1]s/no). Try: check the path, or - to read the dataset from standard input",
		dir:                                  "dataset %[1]s: is a directory. Try: %[1]s/eval.jsonl or %[1]s/big.jsonl.gz",
		filepath.Join(dir, "sub", "x.jsonl"): "dataset %[1]s/sub/x.jsonl: no such file. Try: check the path, or - to read the dataset from standard input",
	} {
		os.Mkdir(filepath.Join(dir, "sub"), 0o755)
		_, err := Open(path)
		if want := fmt.Sprintf(want, dir); err == nil || err.Error() != want {
			t.Errorf("Open(%s):\ngot  %v\nwant %s", path, err, want)
		}
	}
	f, err := Open("-")
	if err != nil || f == nil {
		t.Fatalf("Open(-): %v", err)
	}
	if err := f.Close(); err != nil {
		t.Error(err)
	}
	// A file that claims to be gzip but is not fails on reading.
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte{0x1f, 0x8b, 0}, 0o644)
	f, err = Open(bad)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := io.ReadAll(f); err == nil || err.Error() != "not a valid gzip file: unexpected EOF" {
		t.Errorf("got %v", err)
	}
}

func TestUnquote(t *testing.T) {
	for _, s := range []string{`""`, `"plain"`, `"\n\t\r\b\f\/\\\""`, `"\u00e9\u20ac"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\ude00x"`,
		`"\ud83d\u0041"`, `"\ud83dx"`, `"a\u0000b"`, `"é😀 \u2028"`, `"\ud800\udbff\udfff"`} {
		var want string
		if err := json.Unmarshal([]byte(s), &want); err != nil {
			t.Fatal(s, err)
		}
		if got := unquote([]byte(s)); got != want {
			t.Errorf("unquote(%s) = %q, want %q", s, got, want)
		}
	}
}

// TestExampleDatasets reads the example datasets in testdata/eval.
func TestExampleDatasets(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "eval")
	tmpl, err := os.ReadFile(filepath.Join(dir, "prompt.txt"))
	if err != nil {
		t.Fatal(err)
	}
	count := func(name string) map[string]int {
		f, err := Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		formats := map[string]int{}
		_, err = Read(f, Options{Name: name, Template: string(tmpl)}, func(it Item) error {
			formats[it.Format]++
			switch {
			case name == "arithmetic.jsonl":
				if len(it.Expected) == 0 {
					t.Errorf("%s:%d has no expected answer", name, it.Line)
				}
				for _, a := range it.Asserts {
					if a.Type == "numeric" {
						formats["numeric"]++
					}
				}
			case it.Format == Inspect:
				if len(it.Choices) < 2 || len(it.Expected) != 1 || len(it.Expected[0]) != 1 {
					t.Errorf("%s:%d: choices %q, expected %q", name, it.Line, it.Choices, it.Expected)
				}
			case it.Format == Promptfoo:
				if len(it.Asserts) == 0 || strings.Contains(it.Messages[0].Content, "{{") {
					t.Errorf("%s:%d: %+v", name, it.Line, it)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return formats
	}
	if got := count("arithmetic.jsonl"); got[Native] != 10 || got["numeric"] < 2 || len(got) != 2 {
		t.Errorf("arithmetic.jsonl: %v", got)
	}
	if got := count("mixed.jsonl"); got[OpenAIEvals] < 2 || got[Inspect] < 2 || got[Native] < 2 || len(got) != 3 {
		t.Errorf("mixed.jsonl: %v", got)
	}
	if got := count("promptfoo.jsonl"); got[Promptfoo] < 3 || len(got) != 1 {
		t.Errorf("promptfoo.jsonl: %v", got)
	}
}

// BenchmarkRead reads GSM8K-style native lines; b.N lines per run.
func BenchmarkRead(b *testing.B) {
	line := `{"id": "gsm8k-1234", "prompt": "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. How many clips did Natalia sell altogether in April and May?", "expected": "72", "assert": [{"type": "numeric"}], "metadata": {"split": "test"}}` + "\n"
	r := &repeatReader{pattern: line, n: len(line) * b.N}
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	n := 0
	if _, err := Read(r, Options{}, func(Item) error { n++; return nil }); err != nil || n != b.N {
		b.Fatal(err, n)
	}
}
