package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// FuzzRead reads arbitrary bytes as a dataset, with an arbitrary promptfoo
// template, and checks what Read promises: no panic; items in line order,
// each on a non-blank line and with a user message; every bad line a
// *LineError naming that line; SkipInvalid reading every line the strict
// read would have, in the same order. The seed corpus is in
// testdata/fuzz/FuzzRead.
func FuzzRead(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, tmpl string) {
		const max = 512
		lines := splitLines(data, max)
		_, tmplErr := parseTemplate(tmpl)
		if tmpl == "" {
			tmplErr = nil
		}
		var strict []Item
		_, err := Read(bytes.NewReader(data), Options{Name: "f.jsonl", Template: tmpl, MaxLineBytes: max}, func(it Item) error {
			strict = append(strict, it)
			return nil
		})
		if tmplErr != nil {
			if err == nil || err.Error() != tmplErr.Error() || len(strict) > 0 {
				t.Fatalf("template %q: got %v and %d items, want %v", tmpl, err, len(strict), tmplErr)
			}
			return
		}
		stop := len(lines) + 1 // the line the strict read stopped at
		if err != nil {
			var le *LineError
			if !errors.As(err, &le) {
				t.Fatalf("got %T %v, want a *LineError", err, err)
			}
			if le.File != "f.jsonl" || le.Line < 1 || le.Line > len(lines) || lines[le.Line-1].blank {
				t.Fatalf("error %v names no non-blank line (%d lines)", err, len(lines))
			}
			if !strings.HasPrefix(err.Error(), fmt.Sprintf("f.jsonl:%d: ", le.Line)) {
				t.Fatalf("error %q does not start with its file and line", err)
			}
			stop = le.Line
		}
		var want []int // the non-blank lines before the stop
		for i, l := range lines[:stop-1] {
			if !l.blank {
				want = append(want, i+1)
			}
		}
		if got := itemLines(strict); !reflect.DeepEqual(got, want) {
			t.Fatalf("items on lines %v, want %v", got, want)
		}
		for _, it := range strict {
			checkItem(t, it, lines[it.Line-1].text, max)
		}

		var all []Item
		skipped, err := Read(bytes.NewReader(data), Options{Name: "f.jsonl", Template: tmpl, MaxLineBytes: max, SkipInvalid: true}, func(it Item) error {
			all = append(all, it)
			return nil
		})
		if err != nil {
			t.Fatalf("SkipInvalid: %v", err)
		}
		var got, nonBlank []int
		for i, l := range lines {
			if !l.blank {
				nonBlank = append(nonBlank, i+1)
			}
		}
		got = itemLines(all)
		for i, le := range skipped {
			got = append(got, le.Line)
			if i > 0 && le.Line <= skipped[i-1].Line || le.File != "f.jsonl" {
				t.Fatalf("skipped out of order: %v", skipped)
			}
			if len(lines[le.Line-1].text) > max && le.Msg != fmt.Sprintf("line is %d bytes, longer than the %d-byte limit. "+longLineHint, len(lines[le.Line-1].text), max) {
				t.Fatalf("line %d of %d bytes: %s", le.Line, len(lines[le.Line-1].text), le.Msg)
			}
		}
		slices.Sort(got)
		if !reflect.DeepEqual(got, nonBlank) {
			t.Fatalf("items and skipped lines %v, want every non-blank line %v", got, nonBlank)
		}
		if stop <= len(lines) && (len(skipped) == 0 || skipped[0].Line != stop) {
			t.Fatalf("the strict read stopped at line %d, SkipInvalid skipped %v", stop, skipped)
		}
		if len(strict) > 0 && !reflect.DeepEqual(all[:len(strict)], strict) {
			t.Fatalf("SkipInvalid read the first lines differently")
		}
	})
}

type fuzzLine struct {
	text  []byte
	blank bool
}

// splitLines splits a dataset as the reader promises to: at "\n", without
// a "\r" before it, without a byte order mark on line 1. A line over max
// bytes is never blank: it is an error for its length.
func splitLines(data []byte, max int) []fuzzLine {
	if len(data) == 0 {
		return nil
	}
	parts := bytes.Split(data, []byte("\n"))
	if len(parts[len(parts)-1]) == 0 {
		parts = parts[:len(parts)-1]
	}
	out := make([]fuzzLine, len(parts))
	for i, p := range parts {
		p = bytes.TrimSuffix(p, []byte("\r"))
		text := p
		if i == 0 {
			p = bytes.TrimPrefix(p, []byte("\uFEFF"))
		}
		out[i] = fuzzLine{text: text, blank: len(bytes.TrimSpace(p)) == 0 && len(text) <= max}
	}
	return out
}

func itemLines(items []Item) []int {
	var out []int
	for _, it := range items {
		out = append(out, it.Line)
	}
	return out
}

func checkItem(t *testing.T, it Item, line []byte, max int) {
	t.Helper()
	if it.Line < 1 || it.ID == "" || len(line) > max {
		t.Fatalf("line %d: item %+v", it.Line, it)
	}
	switch it.Format {
	case Native, OpenAIEvals, Inspect, Promptfoo:
	default:
		t.Fatalf("line %d: format %q", it.Line, it.Format)
	}
	users := 0
	if len(it.Messages) == 0 || it.Messages[len(it.Messages)-1].Role != "user" {
		t.Fatalf("line %d: the conversation does not end with a user message: %+v", it.Line, it.Messages)
	}
	for _, m := range it.Messages {
		if strings.TrimSpace(m.Content) == "" {
			t.Fatalf("line %d: empty message in %+v", it.Line, it.Messages)
		}
		switch m.Role {
		case "user":
			users++
		case "assistant":
		default:
			t.Fatalf("line %d: role %q", it.Line, m.Role)
		}
	}
	if users == 0 {
		t.Fatalf("line %d: no user message in %+v", it.Line, it.Messages)
	}
	for _, a := range it.Asserts {
		if _, ok := AssertionType(a.Type, a.Value != nil); !ok || a.Weight < 0 {
			t.Fatalf("line %d: assertion %+v", it.Line, a)
		}
	}
	if len(it.Choices) > 0 {
		for _, e := range it.Expected {
			if len(e) != 1 || e[0] < 'A' || int(e[0]-'A') >= len(it.Choices) {
				t.Fatalf("line %d: expected %q of choices %q", it.Line, it.Expected, it.Choices)
			}
		}
	}
	// The in-place JSON reading agrees with encoding/json.
	if it.Format == Native {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(bytes.TrimPrefix(line, []byte("\uFEFF")), &fields); err != nil {
			t.Fatalf("line %d was read, but encoding/json says %v", it.Line, err)
		}
		if raw, ok := fields["prompt"]; ok {
			var p string
			if err := json.Unmarshal(raw, &p); err != nil || p != it.Messages[0].Content {
				t.Fatalf("line %d: prompt %q, encoding/json reads %q (%v)", it.Line, it.Messages[0].Content, p, err)
			}
		}
	}
}
