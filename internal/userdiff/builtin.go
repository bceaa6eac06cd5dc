package userdiff

import (
	"regexp"
	"strings"
	"sync"
)

// The built-in drivers a diff=NAME attribute can name without any
// configuration, each a list of Go expressions (leftmost-longest, as
// POSIX matches) tried in order; "!" before one negates it. Where a rule
// has a group, the group is the name shown; otherwise the whole match.
//
// They are written for digest from each language's declarations, and
// checked against the hunk headers of git 2.39 on typical code
// (TestBuiltinsMatchGit): where git's rule has a quirk that shows in
// headers, the quirk is kept, so that digest's diff is git's. The Java,
// C# and Objective-C rules, for one, pass over any line starting with a
// statement keyword even when the keyword only begins a longer word
// ("double" starts with "do").

// blank is the indentation the rules allow before a declaration.
const blank = `[ \t]`

// keywordStart is a line that starts (after indentation) with one of the
// words, or with a longer word they begin.
func keywordStart(words ...string) string {
	return `!^` + blank + `*(?:` + strings.Join(words, "|") + `)`
}

// modifiers is any run of the words, each followed by blanks.
func modifiers(words ...string) string {
	return `(?:(?:` + strings.Join(words, "|") + `)` + blank + `+)*`
}

var builtinRules = map[string]struct {
	icase bool
	rules []string
}{
	// A C or C++ declaration starts in the first column: a function, a
	// struct, a global; a label or access specifier alone on its line does
	// not count.
	"cpp": {rules: []string{
		`!^` + blank + `*[A-Za-z_]\w*:[[:space:]]*(?:$|//|/\*)`,
		`^(?:::[[:space:]]*)?[A-Za-z_].*`,
	}},
	// func (methods included) and struct or interface types.
	"golang": {rules: []string{
		`^` + blank + `*(func.*)`,
		`^` + blank + `*(type` + blank + `.*(?:struct|interface)` + blank + `*(?:\{` + blank + `*)?)`,
	}},
	"python": {rules: []string{
		`^` + blank + `*((?:class|(?:async` + blank + `+)?def)` + blank + `.*)$`,
	}},
	"java": {rules: []string{
		keywordStart("catch", "do", "for", "if", "instanceof", "new", "return", "switch", "throw", "while"),
		// A type: lowercase modifiers, the kind, a plain name and a blank.
		`^` + blank + `*(` + `(?:[a-z]+` + blank + `+)*(?:class|enum|interface|record)` + blank + `+[A-Za-z][\w$]*` + blank + `+.*)$`,
		// A method: type words (generics, arrays, qualified names), a name, '(' and no ';'.
		`^` + blank + `*((?:[A-Za-z_<>&][\w\[\]?&<>.,]*` + blank + `+)+[A-Za-z_]\w*` + blank + `*\([^;]*)$`,
	}},
	"rust": {rules: []string{
		`^` + blank + `*(` +
			`(?:pub(?:\([^)]+\))?` + blank + `+)?` +
			`(?:(?:async|const|unsafe|extern` + blank + `+"[^"]+")` + blank + `+)?` +
			`(?:struct|enum|union|mod|trait|fn|impl|macro_rules!)[< \t]+[^;]*)$`,
	}},
	"ruby": {rules: []string{
		`^` + blank + `*((?:class|module|def)` + blank + `.*)$`,
	}},
	"php": {rules: []string{
		`^` + blank + `*(` + modifiers("public", "protected", "private", "static", "abstract", "final") + `function.*)$`,
		`^` + blank + `*((?:(?:final|abstract)` + blank + `+)?class.*|(?:enum|interface|trait).*)$`,
	}},
	"csharp": {rules: []string{
		keywordStart("do", "while", "for", "if", "else", "instanceof", "new", "return", "switch", "case", "throw", "catch", "using"),
		// A method or constructor: modifiers, a type, a name, then (...) to the end.
		`^` + blank + `*(` + modifiers("static", "public", "internal", "private", "protected", "new", "virtual", "sealed", "override", "unsafe", "async") +
			`[\]\[<>@.~_[:alnum:]]+` + blank + `+[<>@._[:alnum:]]+` + blank + `*\(.*\))` + blank + `*$`,
		// A property: modifiers, a type and a name alone on the line.
		`^` + blank + `*(` + modifiers("static", "public", "internal", "private", "protected", "new", "virtual", "sealed", "override", "unsafe") +
			`[\]\[<>@.~_[:alnum:]]+` + blank + `+[@._[:alnum:]]+)` + blank + `*$`,
		`^` + blank + `*(` + modifiers("static", "public", "internal", "private", "protected", "new", "unsafe", "sealed", "abstract", "partial") +
			`(?:class|enum|interface|struct|record)` + blank + `+.*)$`,
		`^` + blank + `*(namespace` + blank + `+.*)$`,
	}},
	// name() in POSIX form, or the function keyword with its compound
	// command's opening: git shows the former without what follows.
	"bash": {rules: []string{
		`^` + blank + `*(` +
			`[A-Za-z_]\w*` + blank + `*\(` + blank + `*\)` +
			`|function` + blank + `+[A-Za-z_]\w*(?:` + blank + `*\(` + blank + `*\)|` + blank + `+)` + blank + `*(?:\{|\(\(?|\[\[))`,
	}},
	// A selector line; a property (ending in ':' or ';') is not one.
	"css": {rules: []string{
		`![:;][[:space:]]*$`,
		`^[:\[@.#]?[_A-Za-z0-9].*$`,
	}},
	"html": {rules: []string{
		`^` + blank + `*(<[Hh][1-6](?:` + blank + `.*)?>.*)$`,
	}},
	"markdown": {rules: []string{
		`^ {0,3}#{1,6}` + blank + `.*`,
	}},
	"tex": {rules: []string{
		`^(\\(?:(?:sub)*section|chapter|part)\*?\{.*)$`,
	}},
	// The first group of a sub's rule is its prototype: git shows the
	// prototype alone for a sub that has one.
	"perl": {rules: []string{
		`^package .*`,
		`^sub [[:alnum:]_':]+` + blank + `*(\([^)]*\)` + blank + `*)?(?::[^;#]*)?(?:\{` + blank + `*)?(?:#.*)?$`,
		`^(BEGIN|END|INIT|CHECK|UNITCHECK|AUTOLOAD|DESTROY)` + blank + `*(?:\{` + blank + `*)?(?:#.*)?$`,
		`^=head[0-9] .*`,
	}},
	"kotlin": {rules: []string{
		`^` + blank + `*((?:[a-z]+` + blank + `+)*(?:fun|class|interface)` + blank + `+.*)$`,
	}},
	"objc": {rules: []string{
		keywordStart("do", "for", "if", "else", "return", "switch", "while"),
		// A method: - or +, the return type in parentheses, the selector.
		`^` + blank + `*([-+]` + blank + `*\(` + blank + `*[A-Za-z_][\w* \t]*\)` + blank + `*[A-Za-z_].*)$`,
		// A C function: words, a name and '(' without a ';'.
		`^` + blank + `*((?:[A-Za-z_]\w*` + blank + `+)+[A-Za-z_]\w*` + blank + `*\([^;]*)$`,
		`^(@(?:implementation|interface|protocol)` + blank + `.*)$`,
	}},
	// Fortran ignores case; a comment line (C or * in the first column, or
	// !) and a MODULE PROCEDURE statement are no declarations.
	"fortran": {icase: true, rules: []string{
		`!^(?:[C*]|` + blank + `*!)`,
		`!^` + blank + `*MODULE` + blank + `+PROCEDURE` + blank,
		`^` + blank + `*((?:END` + blank + `+)?(?:PROGRAM|MODULE|BLOCK` + blank + `+DATA|(?:[^!'" \t]+` + blank + `+)*(?:SUBROUTINE|FUNCTION))` + blank + `+[A-Z].*)$`,
	}},
	"pascal": {rules: []string{
		`^((?:(?:class` + blank + `+)?(?:procedure|function)|constructor|destructor|interface|implementation|initialization|finalization)` + blank + `*.*)$`,
		`^(.*=` + blank + `*(?:class|record).*)$`,
	}},
}

// builtins compiles each built-in driver once, when first named.
var builtins = func() map[string]func() *Driver {
	m := make(map[string]func() *Driver, len(builtinRules))
	for name, b := range builtinRules {
		m[name] = sync.OnceValue(func() *Driver {
			f := &funcRules{}
			for _, expr := range b.rules {
				negate := strings.HasPrefix(expr, "!")
				expr = strings.TrimPrefix(expr, "!")
				if b.icase {
					expr = "(?i)" + expr
				}
				re := regexp.MustCompile(expr)
				re.Longest()
				f.rules = append(f.rules, funcRule{re: re, negate: negate})
			}
			f.filter = filterFor(f.rules)
			return &Driver{Name: name, funcs: f}
		})
	}
	return m
}()

// Builtin returns git's built-in driver of that name, or nil.
func Builtin(name string) *Driver {
	if b, ok := builtins[name]; ok {
		return b()
	}
	return nil
}
