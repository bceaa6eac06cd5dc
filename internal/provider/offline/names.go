package offline

import (
	"path"
	"regexp"
	"strings"
)

// language is what the offline summary knows of one programming language:
// how its definitions are written, so that a hunk is named after the
// function or type it changes, and which words are keywords and never names.
type language struct {
	// top are definitions at the start of a line; a line there that starts
	// with a letter and matches none ends the definition above it, as git's
	// own hunk headers assume.
	top []*regexp.Regexp
	// nested are indented definitions: methods and inner classes.
	nested []*regexp.Regexp
	// comment starts a line that documents rather than changes code.
	comment  []string
	keywords map[string]bool
	labels   bool // "name:" alone on a line is a label, not a definition
}

func words(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

var (
	cComment    = []string{"//", "/*", "*"}
	hashComment = []string{"#"}

	golang = &language{
		top: []*regexp.Regexp{
			regexp.MustCompile(`^func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)`),
			// Variables and constants are data, not code a reader
			// looks for; they end the function above them all the same.
			regexp.MustCompile(`^type\s+([A-Za-z_]\w*)`),
		},
		comment:  cComment,
		keywords: words("break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var"),
		labels:   true,
	}
	clang = &language{
		top: []*regexp.Regexp{
			// The name right before the parameter list, whatever the return
			// type: "struct ref *find_ref(" is find_ref, not ref.
			regexp.MustCompile(`^[^=;(]*?(?:^|[\s*&:~])([A-Za-z_]\w*)\s*\([^;]*$`),
			regexp.MustCompile(`^(?:typedef\s+)?(?:struct|union|enum|class|namespace)\s+([A-Za-z_]\w*)\s*(?:[{:].*)?$`),
		},
		comment:  cComment,
		keywords: words("auto break case char const continue default do double else enum extern float for goto if inline int long register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while bool class namespace template typename new delete this operator public private protected virtual using try catch throw defined __attribute__ alignof typeof"),
		labels:   true,
	}
	python = &language{
		top: []*regexp.Regexp{
			regexp.MustCompile(`^(?:async\s+)?def\s+([A-Za-z_]\w*)`),
			regexp.MustCompile(`^class\s+([A-Za-z_]\w*)`),
		},
		nested: []*regexp.Regexp{
			regexp.MustCompile(`^\s+(?:async\s+)?def\s+([A-Za-z_]\w*)`),
			regexp.MustCompile(`^\s+class\s+([A-Za-z_]\w*)`),
		},
		comment:  hashComment,
		keywords: words("and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield None True False"),
	}
	javascript = &language{
		top: []*regexp.Regexp{
			regexp.MustCompile(`^(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?(?:async\s+)?(?:function\*?|class|interface|enum|type|namespace)\s+([A-Za-z_$][\w$]*)`),
			regexp.MustCompile(`^(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^=]+)?=\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*(?::[^=]+)?=>|[A-Za-z_$][\w$]*\s*=>)`),
		},
		nested: []*regexp.Regexp{
			regexp.MustCompile(`^\s+(?:export\s+)?(?:async\s+)?function\*?\s+([A-Za-z_$][\w$]*)`),
			regexp.MustCompile(`^\s+(?:(?:static|async|get|set|public|private|protected|readonly|override)\s+)*([A-Za-z_$][\w$]*)\s*\([^()]*\)\s*(?::\s*[^={};]+)?\{\s*$`),
		},
		comment:  cComment,
		keywords: words("break case catch class const continue debugger default delete do else export extends finally for function if import in instanceof let new return super switch this throw try typeof var void while with yield async await static get set of interface type enum namespace declare abstract implements"),
		labels:   true,
	}
	java = &language{
		top: []*regexp.Regexp{
			regexp.MustCompile(`^(?:(?:public|protected|private|abstract|final|static|sealed|non-sealed|strictfp)\s+)*(?:class|interface|enum|record|@interface)\s+([A-Za-z_$][\w$]*)`),
		},
		nested: []*regexp.Regexp{
			regexp.MustCompile(`^\s+(?:(?:public|protected|private|abstract|final|static|sealed|strictfp)\s+)*(?:class|interface|enum|record)\s+([A-Za-z_$][\w$]*)`),
			// A method: a type, then the name and its parameters, on a line
			// that is not a statement. Which word is the type is checked by
			// javaMethod, so that "return foo(" names nothing.
			javaMethod,
		},
		comment:  cComment,
		keywords: words("abstract assert boolean break byte case catch char class const continue default do double else enum extends final finally float for goto if implements import instanceof int interface long native new package private protected public return short static strictfp super switch synchronized this throw throws transient try void volatile while var record yield"),
		labels:   true,
	}
	javaMethod = regexp.MustCompile(`^\s+(?:(?:public|protected|private|static|final|abstract|synchronized|native|default|strictfp)\s+)*(?:<[^>]+>\s+)?([\w.$]+)(?:<[^()]*>)?(?:\[\])*\s+([A-Za-z_$][\w$]*)\s*\([^;]*$`)
	rust       = &language{
		top: []*regexp.Regexp{
			regexp.MustCompile(`^(?:pub(?:\([^)]*\))?\s+)?(?:(?:const|async|unsafe|extern(?:\s+"[^"]*")?)\s+)*fn\s+([A-Za-z_]\w*)`),
			regexp.MustCompile(`^(?:pub(?:\([^)]*\))?\s+)?(?:struct|enum|trait|union|type|mod|static|const)\s+([A-Za-z_]\w*)`),
			regexp.MustCompile(`^(?:unsafe\s+)?impl(?:<[^>]*>)?\s+(?:[\w:<>, ]+\s+for\s+)?(?:[\w]+::)*([A-Za-z_]\w*)`),
			regexp.MustCompile(`^macro_rules!\s*([A-Za-z_]\w*)`),
		},
		nested: []*regexp.Regexp{
			regexp.MustCompile(`^\s+(?:pub(?:\([^)]*\))?\s+)?(?:(?:const|async|unsafe|extern(?:\s+"[^"]*")?)\s+)*fn\s+([A-Za-z_]\w*)`),
		},
		comment:  cComment,
		keywords: words("as async await break const continue crate dyn else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while"),
		labels:   true,
	}
	ruby = &language{
		top: []*regexp.Regexp{
			regexp.MustCompile(`^def\s+(?:self\.)?([A-Za-z_]\w*[?!=]?)`),
			regexp.MustCompile(`^(?:class|module)\s+(?:\w+::)*([A-Z]\w*)`),
		},
		nested: []*regexp.Regexp{
			regexp.MustCompile(`^\s+def\s+(?:self\.)?([A-Za-z_]\w*[?!=]?)`),
			regexp.MustCompile(`^\s+(?:class|module)\s+(?:\w+::)*([A-Z]\w*)`),
		},
		comment:  hashComment,
		keywords: words("BEGIN END alias and begin break case class def do else elsif end ensure false for if in module next nil not or redo rescue retry return self super then true undef unless until when while yield"),
	}
	shell = &language{
		top: []*regexp.Regexp{
			regexp.MustCompile(`^(?:function\s+)?([A-Za-z_][\w-]*)\s*\(\s*\)`),
			regexp.MustCompile(`^function\s+([A-Za-z_][\w-]*)`),
		},
		nested: []*regexp.Regexp{
			regexp.MustCompile(`^\s+(?:function\s+)?([A-Za-z_][\w-]*)\s*\(\s*\)\s*\{?\s*$`),
		},
		comment:  hashComment,
		keywords: words("if then else elif fi case esac for while until do done in function select time local export readonly declare return exit"),
	}
)

// languages maps a file's extension to its language. Files of any other
// kind get no names: words in their hunk headers are not definitions.
var languages = map[string]*language{
	".go": golang,
	".c":  clang, ".h": clang, ".cc": clang, ".cpp": clang, ".cxx": clang, ".hpp": clang, ".hh": clang,
	".py": python, ".pyi": python,
	".js": javascript, ".mjs": javascript, ".cjs": javascript, ".jsx": javascript,
	".ts": javascript, ".tsx": javascript, ".mts": javascript, ".cts": javascript,
	".java": java,
	".rs":   rust,
	".rb":   ruby,
	".sh":   shell, ".bash": shell, ".zsh": shell,
}

var label = regexp.MustCompile(`^[A-Za-z_]\w*:\s*(?://.*|/\*.*)?$`)

// topName is what a line that starts with a letter defines: a name, or ""
// for any other statement at the top of a file (an import, a const block).
func (l *language) topName(line string) string {
	for _, re := range l.top {
		m := re.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if name := m[len(m)-1]; !l.keywords[name] {
			return name
		}
		return ""
	}
	return ""
}

// defines reports whether a line of code starts a definition, and its name
// ("" for a top-level statement that is no definition).
func (l *language) defines(line string) (string, bool) {
	if line == "" {
		return "", false
	}
	if c := line[0]; c == '_' || c == '$' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') {
		if l.labels && label.MatchString(line) {
			return "", false
		}
		return l.topName(line), true
	}
	for _, re := range l.nested {
		m := re.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if re == javaMethod && l.keywords[m[1]] {
			continue // "return foo(", "new Foo(": a statement
		}
		if name := m[len(m)-1]; !l.keywords[name] {
			return name, true
		}
	}
	return "", false
}

// code reports whether a changed line changes code: blank lines and
// comments change none, so a comment above a new function is the new
// function's, not the one before it.
func (l *language) code(line string) bool {
	t := strings.TrimSpace(line)
	if t == "" {
		return false
	}
	for _, c := range l.comment {
		if strings.HasPrefix(t, c) {
			return false
		}
	}
	return true
}

var (
	diffFile   = regexp.MustCompile(`^diff --git a/.* b/(.*)$`)
	hunkHeader = regexp.MustCompile(`^@@ [^@]* @@(?: (.*))?$`)
)

// definitions names, for each code file in the diff, the definitions its
// changed lines fall in. A hunk starts in the definition its @@ header names
// and moves into each one it passes, so a function added below another is
// named itself, not the one above it.
func definitions(diff string) map[string][]string {
	out := map[string][]string{}
	var file string
	var lang *language
	inHunk := false
	current := ""
	for _, line := range strings.Split(diff, "\n") {
		if m := diffFile.FindStringSubmatch(line); m != nil {
			file, lang, inHunk = m[1], languages[strings.ToLower(path.Ext(m[1]))], false
			continue
		}
		if lang == nil {
			continue
		}
		if m := hunkHeader.FindStringSubmatch(line); m != nil {
			current, inHunk = "", true
			if name, ok := lang.defines(m[1]); ok {
				current = name
			}
			continue
		}
		if !inHunk || line == "" {
			continue
		}
		mark, text := line[0], line[1:]
		if mark != ' ' && mark != '+' && mark != '-' {
			continue // "\ No newline at end of file", digest's cut note
		}
		if name, ok := lang.defines(text); ok {
			current = name
		}
		if mark != ' ' && current != "" && lang.code(text) {
			add(out, file, current)
		}
	}
	return out
}

func add(out map[string][]string, file, name string) {
	for _, n := range out[file] {
		if n == name {
			return
		}
	}
	out[file] = append(out[file], name)
}
