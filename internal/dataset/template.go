package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/digest-cli/digest/internal/provider"
)

// template is a promptfoo prompt: plain text with {{ var }} placeholders, or
// a chat prompt, a JSON list of {"role", "content"} whose contents have them.
//
// Only plain placeholders are supported: {{name}}, {{ name }} and dotted
// paths into object vars, {{ user.name }}. Nunjucks filters ({{ x | upper }})
// and tags ({% if %}) are template errors rather than text sent as is.
type template struct {
	text []piece     // a plain-text prompt
	chat []chatPiece // a chat prompt; nil for plain text
}

type chatPiece struct {
	role  string
	parts []piece
}

// piece is literal text followed by a placeholder (path nil for the last).
type piece struct {
	lit  string
	path []string
	raw  string // the placeholder as written, for messages
}

// parseTemplate reads a --prompt template.
func parseTemplate(src string) (*template, error) {
	src = strings.TrimPrefix(src, "\uFEFF")
	src = strings.ReplaceAll(src, "\r\n", "\n")
	src = strings.TrimRight(src, "\n")
	if strings.TrimSpace(src) == "" {
		return nil, fmt.Errorf("prompt template is empty")
	}
	t := &template{}
	if chat, ok := chatTemplate(src); ok {
		for i, m := range chat {
			parts, err := parsePieces(m.Content)
			if err != nil {
				return nil, fmt.Errorf("prompt template, message %d: %w", i, err)
			}
			t.chat = append(t.chat, chatPiece{role: m.Role, parts: parts})
		}
		if last := t.chat[len(t.chat)-1]; !hasUser(chat) || last.role != "user" {
			return nil, fmt.Errorf(`prompt template: a chat prompt must end with a "user" message`)
		}
		return t, nil
	}
	parts, err := parsePieces(src)
	if err != nil {
		return nil, fmt.Errorf("prompt template: %w", err)
	}
	t.text = parts
	return t, nil
}

// chatTemplate recognizes promptfoo's JSON chat prompt format.
func chatTemplate(src string) ([]provider.Message, bool) {
	s := strings.TrimSpace(src)
	if !strings.HasPrefix(s, "[") || !json.Valid([]byte(s)) {
		return nil, false
	}
	var msgs []struct {
		Role    *string `json:"role"`
		Content *string `json:"content"`
	}
	if err := json.Unmarshal([]byte(s), &msgs); err != nil || len(msgs) == 0 {
		return nil, false
	}
	out := make([]provider.Message, len(msgs))
	for i, m := range msgs {
		if m.Role == nil || m.Content == nil {
			return nil, false
		}
		switch *m.Role {
		case "system", "user", "assistant":
		default:
			return nil, false
		}
		out[i] = provider.Message{Role: *m.Role, Content: *m.Content}
	}
	return out, true
}

// parsePieces splits text at its placeholders.
func parsePieces(s string) ([]piece, error) {
	var out []piece
	for {
		open := strings.Index(s, "{{")
		if tag := strings.Index(s, "{%"); tag >= 0 && (open < 0 || tag < open) {
			end := strings.Index(s[tag:], "%}")
			shownTag := s[tag:]
			if end >= 0 {
				shownTag = s[tag : tag+end+2]
			}
			return nil, fmt.Errorf("%s: template tags are not supported, only {{ name }} placeholders", clip(shownTag))
		}
		if open < 0 {
			return append(out, piece{lit: s}), nil
		}
		end := strings.Index(s[open+2:], "}}")
		if end < 0 {
			return nil, fmt.Errorf("%s: unclosed placeholder (no }})", clip(s[open:]))
		}
		raw := s[open : open+2+end+2]
		inner := strings.TrimSpace(s[open+2 : open+2+end])
		path, err := placeholderPath(inner)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", raw, err)
		}
		out = append(out, piece{lit: s[:open], path: path, raw: raw})
		s = s[open+2+end+2:]
	}
}

func placeholderPath(inner string) ([]string, error) {
	if inner == "" {
		return nil, fmt.Errorf("empty placeholder")
	}
	if strings.Contains(inner, "|") {
		return nil, fmt.Errorf("filters are not supported, only {{ name }} placeholders")
	}
	path := strings.Split(inner, ".")
	for _, p := range path {
		if !isIdent(p) {
			return nil, fmt.Errorf("not a {{ name }} placeholder")
		}
	}
	return path, nil
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case i > 0 && c >= '0' && c <= '9':
		default:
			return false
		}
	}
	return true
}

// clip shortens a piece of template for a message.
func clip(s string) string {
	if len(s) <= 40 {
		return s
	}
	n := 40
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

// render fills the template with a test case's vars.
func (t *template) render(vars object) (system string, msgs []provider.Message, err error) {
	if t.chat == nil {
		s, err := fill(t.text, vars)
		if err != nil {
			return "", nil, err
		}
		return "", []provider.Message{{Role: "user", Content: s}}, nil
	}
	var sys []string
	for i, m := range t.chat {
		s, err := fill(m.parts, vars)
		if err != nil {
			return "", nil, err
		}
		if m.role == "system" {
			if strings.TrimSpace(s) != "" {
				sys = append(sys, s)
			}
			continue
		}
		if strings.TrimSpace(s) == "" {
			return "", nil, fmt.Errorf("message %d of the prompt template is empty once filled", i)
		}
		msgs = append(msgs, provider.Message{Role: m.role, Content: s})
	}
	return strings.Join(sys, "\n\n"), msgs, nil
}

// renderString fills the placeholders of an assertion value; a value whose
// braces are not placeholders (a regex's \d{{2}}, say) is left alone.
func renderString(s string, vars object) (string, error) {
	parts, err := parsePieces(s)
	if err != nil {
		return s, nil
	}
	return fill(parts, vars)
}

func fill(parts []piece, vars object) (string, error) {
	var sb strings.Builder
	for _, p := range parts {
		sb.WriteString(p.lit)
		if p.path == nil {
			continue
		}
		v, ok := lookup(vars, p.path)
		if !ok {
			return "", fmt.Errorf(`the prompt template uses %s, but "vars" has no %q`, p.raw, strings.Join(p.path, "."))
		}
		switch {
		case isString(v):
			sb.WriteString(unquote(v))
		case isNull(v):
			// Nunjucks renders null as nothing.
		default:
			var buf bytes.Buffer
			if err := json.Compact(&buf, v); err != nil {
				sb.Write(v)
			} else {
				sb.Write(buf.Bytes())
			}
		}
	}
	return sb.String(), nil
}

func lookup(vars object, path []string) ([]byte, bool) {
	v, ok := vars.get(path[0])
	for _, k := range path[1:] {
		if !ok || !isObject(v) {
			return nil, false
		}
		v, ok = members(v).get(k)
	}
	return v, ok
}

// Template is a prompt template with {{ var }} placeholders, as promptfoo
// writes them: plain text for one user message, or a chat, a JSON list of
// {"role", "content"} messages. A promptfoo config fills one per test.
type Template struct{ t *template }

// ParseTemplate reads a prompt template; the error names the placeholder
// digest cannot fill (it runs no Nunjucks filters or tags).
func ParseTemplate(src string) (*Template, error) {
	t, err := parseTemplate(src)
	if err != nil {
		return nil, err
	}
	return &Template{t}, nil
}

// IsChat reports whether src is a chat template: a JSON list of messages
// with a role and content each.
func IsChat(src string) bool {
	_, ok := chatTemplate(src)
	return ok
}

// Render fills t with vars, a JSON object, into the system text and the
// conversation. It is an error when a placeholder has no var, a message is
// empty once filled, or no user message is left with text.
func (t *Template) Render(vars []byte) (system string, msgs []provider.Message, err error) {
	system, msgs, err = t.t.render(members(vars))
	if err == nil && !hasUser(msgs) {
		err = errors.New("the prompt is empty once the vars are filled in")
	}
	return system, msgs, err
}

// RenderValue fills the placeholders of an assertion value, a string or
// the strings of a list (in place), with vars, a JSON object; braces that
// are not placeholders (a regex's \d{{2}}, say) are left alone.
func RenderValue(v any, vars []byte) (any, error) {
	o := members(vars)
	return renderValue(v, func(s string) (string, error) { return renderString(s, o) })
}
