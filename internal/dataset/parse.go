package dataset

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/digest-cli/digest/internal/provider"
)

// shapes is what a line that matches no format is told.
const shapes = `not a dataset item; expected one of: {"prompt": "..."} or {"messages": [{"role", "content"}]} (native), ` +
	`{"input", "ideal"} (openai/evals), {"input", "target"} or {"input", "choices", "target"} (inspect), ` +
	`{"vars": {...}} with --prompt FILE (promptfoo)`

// ChoiceInstruction ends the prompt of a multiple-choice item, after its
// lettered choices.
const ChoiceInstruction = "Answer with the letter of the correct choice."

// parser turns one line into an Item.
type parser struct {
	tmpl *template
}

func (p *parser) parse(line []byte, n int) (Item, error) {
	it := Item{Line: n}
	if !utf8.Valid(line) {
		return it, fmt.Errorf("invalid UTF-8 at byte %d; save the file as UTF-8", invalidAt(line))
	}
	if !json.Valid(line) {
		return it, syntaxError(line)
	}
	raw := trimValue(line)
	if !isObject(raw) {
		msg := fmt.Sprintf("a line must be a JSON object; got %s", kind(raw))
		if isArray(raw) {
			msg += " (digest eval reads JSON Lines: one object per line, not a JSON array)"
		}
		return it, errors.New(msg)
	}
	o := members(raw)
	var err error
	switch {
	case o.has("prompt") || o.has("messages"):
		it.Format = Native
		err = native(&it, o)
	case o.has("input") && o.has("ideal"):
		it.Format = OpenAIEvals
		err = openaiEvals(&it, o)
	case o.has("input") && (o.has("target") || o.has("choices")):
		it.Format = Inspect
		err = inspect(&it, o)
	case o.has("vars"):
		it.Format = Promptfoo
		err = p.promptfoo(&it, o)
	default:
		err = noShape(o)
	}
	if err != nil {
		return it, err
	}
	if err := common(&it, o, it.Format == Promptfoo); err != nil {
		return it, err
	}
	return it, nil
}

// common reads the fields every format may carry: id, metadata and, where
// the format has none of its own, assert.
func common(it *Item, o object, promptfoo bool) error {
	if v, ok := o.opt("id"); ok {
		switch {
		case isString(v):
			it.ID = unquote(v)
		case isNumber(v):
			it.ID = string(v)
		default:
			return fmt.Errorf(`"id" must be a string or a number; got %s`, kind(v))
		}
	}
	if it.ID == "" && promptfoo {
		if v, ok := o.opt("description"); ok {
			if !isString(v) {
				return fmt.Errorf(`"description" must be a string; got %s`, kind(v))
			}
			it.ID = strings.TrimSpace(unquote(v))
		}
	}
	if strings.TrimSpace(it.ID) == "" {
		it.ID = "line-" + strconv.Itoa(it.Line)
	}
	if v, ok := o.opt("metadata"); ok {
		if !isObject(v) {
			return fmt.Errorf(`"metadata" must be an object; got %s`, kind(v))
		}
		if err := json.Unmarshal(v, &it.Metadata); err != nil {
			return fmt.Errorf(`"metadata": %v`, err)
		}
	}
	if !promptfoo {
		if v, ok := o.opt("assert"); ok {
			as, err := parseAsserts(v, nil)
			if err != nil {
				return err
			}
			it.Asserts = as
		}
	}
	return nil
}

// native: {"id"?, "system"?, "prompt" | "messages", "expected"?, "assert"?, "metadata"?}
func native(it *Item, o object) error {
	var system []string
	if v, ok := o.opt("system"); ok {
		if !isString(v) {
			return fmt.Errorf(`"system" must be a string; got %s`, kind(v))
		}
		if s := unquote(v); strings.TrimSpace(s) != "" {
			system = append(system, s)
		}
	}
	// A null "prompt" or "messages" is as good as absent, but one is needed.
	pv, hasPrompt := o.opt("prompt")
	mv, hasMessages := o.opt("messages")
	switch {
	case hasPrompt && hasMessages:
		return errors.New(`a line has either "prompt" or "messages", not both`)
	case !hasPrompt && !hasMessages:
		return errors.New(`"prompt" must be a string or "messages" a list of {"role","content"}; got null`)
	case hasPrompt:
		if !isString(pv) {
			return fmt.Errorf(`"prompt" must be a string or "messages" a list of {"role","content"}; got %s`, kind(pv))
		}
		s := unquote(pv)
		if strings.TrimSpace(s) == "" {
			return errors.New(`"prompt" is empty`)
		}
		it.Messages = []provider.Message{{Role: "user", Content: s}}
	default:
		if !isArray(mv) {
			return fmt.Errorf(`"prompt" must be a string or "messages" a list of {"role","content"}; got %s`, kind(mv))
		}
		sys, msgs, err := messages("messages", mv, false, "expected")
		if err != nil {
			return err
		}
		system = append(system, sys...)
		it.Messages = msgs
	}
	it.System = strings.Join(system, "\n\n")
	if v, ok := o.opt("expected"); ok {
		exp, err := answers("expected", v)
		if err != nil {
			return err
		}
		it.Expected = exp
	}
	return nil
}

// openaiEvals: {"input": string | [messages], "ideal": string | [strings]}
func openaiEvals(it *Item, o object) error {
	if err := input(it, o, true); err != nil {
		return err
	}
	v, ok := o.opt("ideal")
	if !ok {
		return errors.New(`"ideal" must be a string or a list of strings; got null`)
	}
	exp, err := answers("ideal", v)
	if err != nil {
		return err
	}
	it.Expected = exp
	return nil
}

// inspect: {"input", "target"?, "choices"?, "id"?, "metadata"?}
func inspect(it *Item, o object) error {
	if err := input(it, o, false); err != nil {
		return err
	}
	if v, ok := o.opt("target"); ok {
		exp, err := answers("target", v)
		if err != nil {
			return err
		}
		it.Expected = exp
	}
	v, ok := o.opt("choices")
	if !ok {
		return nil
	}
	if !isArray(v) {
		return fmt.Errorf(`"choices" must be a list of strings; got %s`, kind(v))
	}
	els := elements(v)
	if len(els) == 0 {
		return errors.New(`"choices" is an empty list`)
	}
	if len(els) > 26 {
		return fmt.Errorf(`"choices" has %d entries; at most 26 (A to Z) are supported`, len(els))
	}
	for i, el := range els {
		if !isString(el) {
			return fmt.Errorf(`"choices"[%d] must be a string; got %s`, i, kind(el))
		}
		c := unquote(el)
		if strings.TrimSpace(c) == "" {
			return fmt.Errorf(`"choices"[%d] is empty`, i)
		}
		it.Choices = append(it.Choices, c)
	}
	for i, t := range it.Expected {
		l, ok := choiceLetter(t, it.Choices)
		if !ok {
			return fmt.Errorf(`"target" %q is neither a choice letter (A to %c) nor the text of one of the choices`, t, 'A'+len(it.Choices)-1)
		}
		it.Expected[i] = l
	}
	// The choices follow the question in the last user message.
	var sb strings.Builder
	for i, c := range it.Choices {
		fmt.Fprintf(&sb, "\n%c) %s", 'A'+i, c)
	}
	for i := len(it.Messages) - 1; i >= 0; i-- {
		if it.Messages[i].Role == "user" {
			it.Messages[i].Content += "\n" + sb.String() + "\n\n" + ChoiceInstruction
			break
		}
	}
	return nil
}

// choiceLetter maps a multiple-choice target to its letter: "A" (or "a")
// stays, a choice's text becomes its letter.
func choiceLetter(t string, choices []string) (string, bool) {
	t = strings.TrimSpace(t)
	if len(t) == 1 {
		c := t[0] &^ 0x20 // upper case
		if c >= 'A' && int(c-'A') < len(choices) {
			if t[0] >= 'A' && t[0] <= 'Z' || !hasChoice(t, choices) {
				return string(c), true
			}
		}
	}
	for i, c := range choices {
		if strings.TrimSpace(c) == t {
			return string(rune('A' + i)), true
		}
	}
	return "", false
}

func hasChoice(t string, choices []string) bool {
	for _, c := range choices {
		if strings.TrimSpace(c) == t {
			return true
		}
	}
	return false
}

// promptfoo: {"vars": {...}, "assert"?: [...], "description"?} with the template.
func (p *parser) promptfoo(it *Item, o object) error {
	if p.tmpl == nil {
		return errors.New("a promptfoo test case needs --prompt FILE")
	}
	v, _ := o.get("vars")
	if !isObject(v) {
		return fmt.Errorf(`"vars" must be an object; got %s`, kind(v))
	}
	vars := members(v)
	sys, msgs, err := p.tmpl.render(vars)
	if err != nil {
		return err
	}
	if !hasUser(msgs) {
		return errors.New(`the prompt is empty once the template is filled`)
	}
	it.System, it.Messages = sys, msgs
	if av, ok := o.opt("assert"); ok {
		as, err := parseAsserts(av, func(s string) (string, error) { return renderString(s, vars) })
		if err != nil {
			return err
		}
		it.Asserts = as
	}
	return nil
}

// hasUser reports whether a conversation has a user message with text.
func hasUser(msgs []provider.Message) bool {
	for _, m := range msgs {
		if m.Role == "user" && strings.TrimSpace(m.Content) != "" {
			return true
		}
	}
	return false
}

// input reads openai/evals' and inspect's "input": a string (one user
// message) or a list of messages.
func input(it *Item, o object, evals bool) error {
	v, _ := o.get("input")
	switch {
	case isString(v):
		s := unquote(v)
		if strings.TrimSpace(s) == "" {
			return errors.New(`"input" is empty`)
		}
		it.Messages = []provider.Message{{Role: "user", Content: s}}
		return nil
	case isArray(v):
		answerKey := "target"
		if evals {
			answerKey = "ideal"
		}
		sys, msgs, err := messages("input", v, evals, answerKey)
		if err != nil {
			return err
		}
		it.System, it.Messages = strings.Join(sys, "\n\n"), msgs
		return nil
	}
	return fmt.Errorf(`"input" must be a string or a list of {"role","content"}; got %s`, kind(v))
}

// messages reads a conversation. System messages must lead (they become the
// item's system prompt), except in openai/evals, where a system message
// anywhere joins the system prompt and one named "example_user" or
// "example_assistant" (its few-shot convention) is a user or assistant turn.
// The conversation must end with a user message.
func messages(key string, raw []byte, evals bool, answerKey string) (system []string, msgs []provider.Message, err error) {
	els := elements(raw)
	if len(els) == 0 {
		return nil, nil, fmt.Errorf("%q is an empty list", key)
	}
	for i, el := range els {
		at := fmt.Sprintf("%q[%d]", key, i)
		if !isObject(el) {
			return nil, nil, fmt.Errorf(`%s must be an object {"role","content"}; got %s`, at, kind(el))
		}
		m := members(el)
		rv, ok := m.get("role")
		if !ok {
			return nil, nil, fmt.Errorf(`%s: "role" is missing`, at)
		}
		if !isString(rv) {
			return nil, nil, fmt.Errorf(`%s: "role" must be "system", "user" or "assistant"; got %s`, at, kind(rv))
		}
		role := unquote(rv)
		if role == "developer" { // OpenAI's newer name for system
			role = "system"
		}
		switch role {
		case "system", "user", "assistant":
		default:
			return nil, nil, fmt.Errorf(`%s: "role" must be "system", "user" or "assistant"; got %q`, at, role)
		}
		content, err := messageContent(at, m)
		if err != nil {
			return nil, nil, err
		}
		if role == "system" && evals {
			if nv, ok := m.opt("name"); ok && isString(nv) {
				switch unquote(nv) {
				case "example_user":
					role = "user"
				case "example_assistant":
					role = "assistant"
				}
			}
		}
		if role == "system" {
			if len(msgs) > 0 && !evals {
				return nil, nil, fmt.Errorf(`%s: a "system" message must come before the conversation`, at)
			}
			if strings.TrimSpace(content) != "" {
				system = append(system, content)
			}
			continue
		}
		if strings.TrimSpace(content) == "" {
			return nil, nil, fmt.Errorf(`%s: "content" is empty`, at)
		}
		msgs = append(msgs, provider.Message{Role: role, Content: content})
	}
	if !hasUser(msgs) {
		return nil, nil, fmt.Errorf(`%q has no "user" message`, key)
	}
	if last := msgs[len(msgs)-1]; last.Role != "user" {
		// Providers differ on a trailing assistant turn (Anthropic continues
		// it, OpenAI answers after it), so models would not be compared on
		// the same question.
		return nil, nil, fmt.Errorf(`%q must end with a "user" message, not %q (an answer to check belongs in %q)`, key, last.Role, answerKey)
	}
	return system, msgs, nil
}

// messageContent reads "content": a string, or a list of text parts
// ({"type": "text", "text": ...}, as OpenAI and inspect write them), joined
// by newlines.
func messageContent(at string, m object) (string, error) {
	cv, ok := m.get("content")
	if !ok {
		return "", fmt.Errorf(`%s: "content" is missing`, at)
	}
	if isString(cv) {
		return unquote(cv), nil
	}
	if !isArray(cv) {
		return "", fmt.Errorf(`%s: "content" must be a string; got %s`, at, kind(cv))
	}
	var parts []string
	for j, el := range elements(cv) {
		if !isObject(el) {
			return "", fmt.Errorf(`%s: "content"[%d] must be a {"type": "text", "text"} part; got %s`, at, j, kind(el))
		}
		p := members(el)
		tv, _ := p.get("type")
		if !isString(tv) || unquote(tv) != "text" {
			t := kind(tv)
			if isString(tv) {
				t = strconv.Quote(unquote(tv))
			}
			return "", fmt.Errorf(`%s: "content"[%d]: only "text" parts are supported; got %s`, at, j, t)
		}
		xv, _ := p.get("text")
		if !isString(xv) {
			return "", fmt.Errorf(`%s: "content"[%d]: "text" must be a string; got %s`, at, j, kind(xv))
		}
		parts = append(parts, unquote(xv))
	}
	return strings.Join(parts, "\n"), nil
}

// answers reads expected, ideal or target: a string, or a list of strings,
// any of which is acceptable. Numbers are taken as written ("expected": 72);
// empty answers are dropped.
func answers(key string, v []byte) ([]string, error) {
	one := func(el []byte) (string, bool) {
		switch {
		case isString(el):
			return unquote(el), true
		case isNumber(el):
			return string(el), true
		}
		return "", false
	}
	if !isArray(v) {
		s, ok := one(v)
		if !ok {
			return nil, fmt.Errorf("%q must be a string or a list of strings; got %s", key, kind(v))
		}
		if strings.TrimSpace(s) == "" {
			return nil, nil
		}
		return []string{s}, nil
	}
	var out []string
	for i, el := range elements(v) {
		s, ok := one(el)
		if !ok {
			return nil, fmt.Errorf("%q[%d] must be a string; got %s", key, i, kind(el))
		}
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out, nil
}

// noShape explains a line that matches no format, naming the keys it has.
func noShape(o object) error {
	if len(o) == 0 {
		return errors.New(shapes + "; got an empty object")
	}
	var keys []string
	seen := map[string]bool{}
	for _, f := range o {
		if seen[string(f.key)] {
			continue
		}
		seen[string(f.key)] = true
		if len(keys) == 8 {
			keys = append(keys, "...")
			break
		}
		keys = append(keys, quoteKey(string(f.key)))
	}
	msg := shapes + "; got keys " + strings.Join(keys, ", ")
	if o.has("question") && o.has("answer") {
		msg += ` (for GSM8K-style lines, rename "question" to "prompt" and put the number after "####" in "expected")`
	} else if o.has("input") {
		msg += ` ("input" needs "ideal", "target" or "choices")`
	}
	return errors.New(msg)
}

// syntaxError describes a line that is not valid JSON.
func syntaxError(line []byte) error {
	var v struct{}
	err := json.Unmarshal(line, &v)
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return fmt.Errorf("invalid JSON: %v", err)
	}
	if se.Offset >= int64(len(line)) && strings.HasPrefix(se.Error(), "unexpected end") {
		msg := "invalid JSON: the line ends before the value does"
		if t := trimValue(line); len(t) == 1 && (t[0] == '{' || t[0] == '[') {
			msg += " (digest eval reads JSON Lines: each object on one line, not pretty-printed JSON)"
		}
		return errors.New(msg)
	}
	return fmt.Errorf("invalid JSON at byte %d: %v", se.Offset, se)
}

// invalidAt is the 1-based byte offset of the first invalid UTF-8 sequence.
func invalidAt(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i + 1
		}
		i += n
	}
	return len(b)
}

// CheckLine reads line, one item in any of the formats Read knows, and
// returns the error Read would report for it, or nil: a dataset made from
// another format checks each of its lines before they are read.
func CheckLine(line []byte) error {
	var p parser
	_, err := p.parse(line, 1)
	return err
}
