// Package userdiff is git's diff drivers: for a file's `diff=NAME`
// attribute, the rule that finds the function line a hunk header names,
// and whether the driver declares its files binary. Drivers come built in
// (cpp, golang, python, java, rust, ... written here for digest) or from a
// repository's configuration: diff.NAME.xfuncname, diff.NAME.funcname and
// diff.NAME.binary.
package userdiff

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// NameBytes is the size of git's buffer for a hunk header's function
// name: longer names are cut.
const NameBytes = 80

// Content is what a driver declares of its files' content.
type Content int8

const (
	// ByContent: a file is binary if git's content rule says so (a NUL byte
	// early on).
	ByContent Content = iota
	// Text: a file is text whatever it holds (the "diff" attribute set, or
	// diff.NAME.binary false).
	Text
	// Binary: a file is binary whatever it holds ("-diff", "binary", or
	// diff.NAME.binary true).
	Binary
)

// Driver is one diff driver. The nil *Driver is git's default: content
// decides, and the default function-line rule applies.
type Driver struct {
	Name    string
	Content Content
	// funcs finds function lines; nil for git's default rule.
	funcs *funcRules
}

// AsText and AsBinary are the drivers git gives the "diff" attribute set
// and unset: neither has a function-line rule of its own.
var (
	AsText   = &Driver{Name: "diff", Content: Text}
	AsBinary = &Driver{Name: "-diff", Content: Binary}
)

// HasFuncRule reports whether the driver has a function-line rule of its
// own: git takes the rule of a change's old side when it has one, else the
// new side's, else the default.
func (d *Driver) HasFuncRule() bool { return d != nil && d.funcs != nil }

// FuncName reports whether line (with or without its newline) is a
// function line, and the name a hunk header shows for it: cut to NameBytes
// and without trailing white space, as git shows it.
func (d *Driver) FuncName(line string) (string, bool) {
	if !d.HasFuncRule() {
		return defaultFuncName(line)
	}
	return d.funcs.name(line)
}

// defaultFuncName is git's rule without a driver: a line that starts with
// a letter, '_' or '$'.
func defaultFuncName(line string) (string, bool) {
	if line == "" {
		return "", false
	}
	if c := line[0]; !(c == '_' || c == '$' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
		return "", false
	}
	return trimName(line[:min(len(line), NameBytes)]), true
}

// trimName drops the trailing white space git's isspace knows.
func trimName(s string) string { return strings.TrimRight(s, " \t\r\n") }

// funcRules is a driver's function-line rule: expressions tried in order
// on each line; the first that matches decides, and a negated one says the
// line is not a function line.
type funcRules struct {
	rules []funcRule
	// filter, when set, turns away lines no positive expression matches.
	filter lineFilter
}

type funcRule struct {
	re     *regexp.Regexp
	negate bool
}

func (f *funcRules) name(line string) (string, bool) {
	// The line is matched without its newline (nor the CR before one).
	if strings.HasSuffix(line, "\n") {
		line = strings.TrimSuffix(line[:len(line)-1], "\r")
	}
	if f.filter != nil && !f.filter.pass(line) {
		return "", false
	}
	for _, r := range f.rules {
		if r.negate {
			if r.re.MatchString(line) {
				return "", false
			}
			continue
		}
		m := r.re.FindStringSubmatchIndex(line)
		if m == nil {
			continue
		}
		// The first group names the function when it took part in the
		// match; otherwise the whole match does.
		start, end := m[0], m[1]
		if len(m) >= 4 && m[2] >= 0 {
			start, end = m[2], m[3]
		}
		return trimName(line[start:min(end, start+NameBytes)]), true
	}
	return "", false
}

// Setting is one diff.NAME.KEY entry of a repository's configuration, in
// the order the configuration gives them.
type Setting struct {
	Driver, Key, Value string
}

// Drivers are the diff drivers a repository may name: git's built-in ones,
// as its configuration changes them, and those it defines.
type Drivers struct {
	defined map[string]*Driver
}

// Lookup returns the driver a diff=name attribute selects, or nil when
// there is none of that name: git then uses its default.
func (ds *Drivers) Lookup(name string) *Driver {
	if ds != nil {
		if d, ok := ds.defined[name]; ok {
			return d
		}
	}
	return Builtin(name)
}

// pending is a driver's configuration read so far: git keeps the last
// function rule given (funcname or xfuncname alike) and the last binary.
type pending struct {
	key, expr string // the function rule, and the key it came from
	extended  bool
	content   Content
	hasRule   bool
}

// Configure reads the diff.* settings of a repository's configuration. A
// setting digest cannot honour (an expression Go cannot match as git
// would, a binary value that is not a boolean) is left out with a
// one-line warning; the driver then has git's default rule.
func Configure(settings []Setting) (*Drivers, []string) {
	byName := map[string]*pending{}
	var order []string
	var warnings []string
	for _, s := range settings {
		p := byName[s.Driver]
		if p == nil {
			p = &pending{content: -1}
			byName[s.Driver] = p
			order = append(order, s.Driver)
		}
		key := "diff." + s.Driver + "." + s.Key
		switch strings.ToLower(s.Key) {
		case "xfuncname", "funcname":
			p.key, p.expr, p.extended, p.hasRule = key, s.Value, strings.EqualFold(s.Key, "xfuncname"), true
		case "binary":
			c, err := parseBinary(s.Value)
			if err != nil {
				warnings = append(warnings, fmt.Sprintf("%s: %v; files of diff=%s are text or binary by their content. Try: true, false or auto", key, err, s.Driver))
				continue
			}
			p.content = c
		}
	}
	ds := &Drivers{defined: map[string]*Driver{}}
	for _, name := range order {
		p := byName[name]
		d := &Driver{Name: name}
		if b := Builtin(name); b != nil {
			*d = *b // the configuration changes a built-in driver, not replaces it
		}
		if p.content >= 0 {
			d.Content = p.content
		}
		if p.hasRule {
			funcs, err := compileUser(p.expr, p.extended)
			if err != nil {
				warnings = append(warnings, fmt.Sprintf("%s: %v; hunk headers of diff=%s files use git's default rule", p.key, err, name))
			}
			d.funcs = funcs
		}
		ds.defined[name] = d
	}
	return ds, warnings
}

// parseBinary reads git's boolean, or "auto". An empty value counts as
// true: a bare "binary" key, which git reads as true, reaches digest as "".
func parseBinary(v string) (Content, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "true", "yes", "on":
		return Binary, nil
	case "false", "no", "off":
		return Text, nil
	case "auto":
		return ByContent, nil
	}
	if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
		if n != 0 {
			return Binary, nil
		}
		return Text, nil
	}
	return 0, fmt.Errorf("%q is not a boolean", v)
}

// compileUser compiles a configured rule: one POSIX expression a line, a
// leading '!' negating it, as git reads diff.NAME.xfuncname.
func compileUser(value string, extended bool) (*funcRules, error) {
	lines := strings.Split(value, "\n")
	f := &funcRules{}
	for i, line := range lines {
		negate := strings.HasPrefix(line, "!")
		if negate {
			line = line[1:]
			if i == len(lines)-1 {
				return nil, fmt.Errorf("the last expression %q is negated, so no line could be a function line. Try: end with an expression that is not negated", "!"+line)
			}
		}
		expr, err := translate(line, extended)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", line, err)
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			return nil, fmt.Errorf("%q: %v. Try: a POSIX extended regular expression", line, err)
		}
		re.Longest()
		f.rules = append(f.rules, funcRule{re: re, negate: negate})
	}
	f.filter = filterFor(f.rules)
	return f, nil
}
