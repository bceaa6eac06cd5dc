// Package gitattributes reads .gitattributes files and answers what an
// attribute is for a file, as git decides it: patterns matched the way git
// matches them for attributes, macros (git's own "binary" among them), and
// git's precedence between files and lines.
package gitattributes

import (
	"fmt"
	"strings"
)

// State is what the lines that apply to a file say of an attribute.
type State uint8

const (
	// Unspecified: no line names the attribute, or the deciding one says
	// "!attr".
	Unspecified State = iota
	// Set: "attr".
	Set
	// Unset: "-attr".
	Unset
	// Valued: "attr=value"; the value is in Value.Text.
	Valued
)

// Value is an attribute's state for one file.
type Value struct {
	State State
	Text  string // for Valued
}

func (v Value) String() string {
	switch v.State {
	case Set:
		return "set"
	case Unset:
		return "unset"
	case Valued:
		return "=" + v.Text
	}
	return "unspecified"
}

// File is one attributes file, parsed.
type File struct {
	dir    string // its directory relative to the root, "" for the root
	rules  []rule
	macros []macro
}

// rule is a pattern line: the attributes it assigns to the files it matches.
type rule struct {
	pattern pattern
	assigns []assignment
}

// macro is an "[attr]name ..." line: setting name assigns the rest.
type macro struct {
	name    string
	assigns []assignment
}

type assignment struct {
	name  string
	value Value
}

// maxLineBytes is git's limit on a line (ATTR_MAX_LINE_LENGTH): longer
// lines are ignored with a warning.
const maxLineBytes = 2048

// blanks separate a line's fields, as git splits them.
const blanks = " \t\r\n"

// builtin holds the macro git defines before reading any file.
var builtin = &File{macros: []macro{{name: "binary", assigns: []assignment{
	{"diff", Value{State: Unset}}, {"merge", Value{State: Unset}}, {"text", Value{State: Unset}},
}}}}

// Parse reads the text of an attributes file in directory dir (relative to
// the root, with slashes; "" for the root and for $GIT_DIR/info/attributes).
// Macro definitions count only where git allows them, the root's file and
// info/attributes (macros); elsewhere they are ignored. A line git would
// ignore is left out with a warning ("line 3: ...") and the rest is kept,
// as git does.
func Parse(text, dir string, macros bool) (*File, []string) {
	f := &File{dir: strings.Trim(dir, "/")}
	var warnings []string
	// git reads a file as a C string: a NUL byte ends it.
	if i := strings.IndexByte(text, 0); i >= 0 {
		text = text[:i]
	}
	text = strings.TrimPrefix(text, "\uFEFF")
	for n := 1; text != ""; n++ {
		line, rest, _ := strings.Cut(text, "\n")
		text = rest
		if problem := f.parseLine(line, macros); problem != "" {
			warnings = append(warnings, fmt.Sprintf("line %d: %s", n, problem))
		}
	}
	return f, warnings
}

// parseLine adds one line to the file, or says why git ignores it.
func (f *File) parseLine(line string, macrosAllowed bool) string {
	s := strings.TrimLeft(line, blanks)
	if s == "" || s[0] == '#' {
		return ""
	}
	if len(line) >= maxLineBytes {
		return fmt.Sprintf("a line of %d bytes, over git's limit of %d, is ignored", len(line), maxLineBytes-1)
	}
	var name, states string
	if unquoted, rest, ok := unquoteC(s); ok {
		name, states = unquoted, rest
	} else {
		end := strings.IndexAny(s, blanks)
		if end < 0 {
			end = len(s)
		}
		name, states = s[:end], s[end:]
	}
	isMacro := false
	const macroPrefix = "[attr]"
	if len(name) > len(macroPrefix) && strings.HasPrefix(name, macroPrefix) {
		if !macrosAllowed {
			return fmt.Sprintf("macro %s is only allowed in the top-level .gitattributes and info/attributes; the line is ignored", name)
		}
		isMacro = true
		name = strings.TrimLeft(name[len(macroPrefix):], blanks)
		if end := strings.IndexAny(name, blanks); end >= 0 {
			name = name[:end]
		}
		if !validName(name) {
			return fmt.Sprintf("%q is not a valid attribute name; the line is ignored", name)
		}
	}
	var assigns []assignment
	for states = strings.TrimLeft(states, blanks); states != ""; states = strings.TrimLeft(states, blanks) {
		end := strings.IndexAny(states, blanks)
		if end < 0 {
			end = len(states)
		}
		a, ok := parseAssignment(states[:end])
		if !ok {
			return fmt.Sprintf("%q is not a valid attribute name; the line is ignored", a.name)
		}
		assigns = append(assigns, a)
		states = states[end:]
	}
	if isMacro {
		f.macros = append(f.macros, macro{name: name, assigns: assigns})
		return ""
	}
	p, negative := parsePattern(name)
	if negative {
		return "negative patterns are ignored in git attributes; the line is ignored. Try: \\! for a literal leading !"
	}
	f.rules = append(f.rules, rule{pattern: p, assigns: assigns})
	return ""
}

// parseAssignment reads "attr", "-attr", "!attr" or "attr=value".
func parseAssignment(field string) (assignment, bool) {
	name, text, valued := strings.Cut(field, "=")
	var a assignment
	switch {
	case name != "" && name[0] == '-':
		a = assignment{name[1:], Value{State: Unset}}
	case name != "" && name[0] == '!':
		a = assignment{name[1:], Value{State: Unspecified}}
	case valued:
		a = assignment{name, Value{State: Valued, Text: text}}
	default:
		a = assignment{name, Value{State: Set}}
	}
	return a, validName(a.name)
}

// validName is git's rule for attribute names: letters, digits, '-', '.'
// and '_', not starting with '-'.
func validName(name string) bool {
	if name == "" || name[0] == '-' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '-' || c == '.' || c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// unquoteC reads a pattern in C-style double quotes, as git writes paths
// with blanks or unusual bytes, returning it and the text after the
// closing quote. ok is false when s does not start with a well-formed
// quoted string: git then reads the pattern unquoted.
func unquoteC(s string) (unquoted, rest string, ok bool) {
	if s == "" || s[0] != '"' {
		return "", "", false
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			return b.String(), s[i+1:], true
		case '\\':
		default:
			b.WriteByte(c)
			continue
		}
		i++
		if i == len(s) {
			return "", "", false
		}
		switch c = s[i]; c {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\', '"':
			b.WriteByte(c)
		case '0', '1', '2', '3':
			if i+2 >= len(s) || !isOctal(s[i+1]) || !isOctal(s[i+2]) {
				return "", "", false
			}
			b.WriteByte((c-'0')<<6 | (s[i+1]-'0')<<3 | (s[i+2] - '0'))
			i += 2
		default:
			return "", "", false
		}
	}
	return "", "", false
}

func isOctal(c byte) bool { return '0' <= c && c <= '7' }

// Lookup is the value of attribute name for the file at path (relative to
// the root, with slashes), given the attributes files in increasing
// precedence: the root's .gitattributes, those of the directories down to
// the file's, then $GIT_DIR/info/attributes. Files of directories that do
// not hold path are passed over. git's built-in macro "binary" (-diff
// -merge -text) is always defined, and may be redefined.
//
// As git does, the last line that matches and names the attribute decides,
// in the file of highest precedence; a macro set on a line assigns its
// attributes there, unless a line of higher precedence decided them.
func Lookup(files []*File, path, name string) Value {
	base := strings.LastIndexByte(path, '/') + 1
	d := decider{files: files, want: name}
	for i := len(files) - 1; i >= 0 && !d.done; i-- {
		f := files[i]
		if f == nil || !holds(f.dir, path) {
			continue
		}
		for j := len(f.rules) - 1; j >= 0 && !d.done; j-- {
			r := &f.rules[j]
			if r.pattern.matches(path, base, f.dir) {
				d.assign(r.assigns)
			}
		}
	}
	return d.value
}

// holds reports whether the file at path lies under dir.
func holds(dir, path string) bool {
	return dir == "" || len(path) > len(dir) && path[len(dir)] == '/' && path[:len(dir)] == dir
}

// decider collects the attributes decided so far for one file, highest
// precedence first: only the first decision of each attribute counts.
type decider struct {
	files   []*File
	want    string
	decided []string
	value   Value
	done    bool
}

// assign applies a line's assignments, last first, expanding the macros it
// sets; the expansion of macros that set macros ends, as git's does,
// because each attribute is decided once.
func (d *decider) assign(assigns []assignment) {
	for k := len(assigns) - 1; k >= 0 && !d.done; k-- {
		a := assigns[k]
		if d.isDecided(a.name) {
			continue
		}
		d.decided = append(d.decided, a.name)
		if a.name == d.want {
			d.value, d.done = a.value, true
			return
		}
		if a.value.State == Set {
			if m := d.macro(a.name); m != nil {
				d.assign(m.assigns)
			}
		}
	}
}

func (d *decider) isDecided(name string) bool {
	for _, n := range d.decided {
		if n == name {
			return true
		}
	}
	return false
}

// macro is the definition of name that counts: the last in the file of
// highest precedence, else git's built-in one.
func (d *decider) macro(name string) *macro {
	for i := len(d.files) - 1; i >= -1; i-- {
		f := builtin
		if i >= 0 {
			f = d.files[i]
		}
		if f == nil {
			continue
		}
		for j := len(f.macros) - 1; j >= 0; j-- {
			if f.macros[j].name == name {
				return &f.macros[j]
			}
		}
	}
	return nil
}
