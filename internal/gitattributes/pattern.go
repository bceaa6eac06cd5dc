package gitattributes

import "strings"

// pattern is a line's path pattern, as git reads it for attributes.
type pattern struct {
	text string // without a trailing '/'
	// literal is the length of text's prefix without wildcards: git
	// compares it as it is before matching the rest.
	literal int
	// basename: text has no slash, and matches a file's name at any depth
	// below the attributes file's directory. Otherwise text is matched
	// against the path relative to that directory.
	basename bool
	// dirOnly: text ended in '/', so only directories match, never a file.
	dirOnly bool
}

// parsePattern reads a pattern; negative is set for "!pattern", which git
// refuses in attributes files.
func parsePattern(s string) (p pattern, negative bool) {
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i] // a quoted \000 ends the pattern, as in git's C string
	}
	if strings.HasPrefix(s, "!") {
		return pattern{}, true
	}
	if strings.HasSuffix(s, "/") {
		s = s[:len(s)-1]
		p.dirOnly = true
	}
	p.text = s
	p.basename = !strings.Contains(s, "/")
	p.literal = strings.IndexAny(s, `*?[\`)
	if p.literal < 0 {
		p.literal = len(s)
	}
	return p, false
}

// matches reports whether the file at path (whose name starts at base)
// matches, for an attributes file in directory dir that holds path.
func (p *pattern) matches(path string, base int, dir string) bool {
	if p.dirOnly {
		return false
	}
	if p.basename {
		name := path[base:]
		switch {
		case p.literal == len(p.text):
			return name == p.text
		case p.text[0] == '*' && !strings.ContainsAny(p.text[1:], `*?[\`):
			return strings.HasSuffix(name, p.text[1:]) // "*.go", the common case
		}
		return wildmatch(p.text, name, false)
	}
	name := path
	if dir != "" {
		name = path[len(dir)+1:]
	}
	text, literal := p.text, p.literal
	if strings.HasPrefix(text, "/") {
		text, literal = text[1:], literal-1
	}
	// git compares the literal prefix, then matches the rest as a pattern
	// of its own: a "**" just after the prefix counts as at its start.
	if literal > 0 {
		if literal > len(name) || name[:literal] != text[:literal] {
			return false
		}
		text, name = text[literal:], name[literal:]
		if text == "" && name == "" {
			return true
		}
	}
	return wildmatch(text, name, true)
}

// result is the outcome of matching part of a pattern: besides a match or
// not, two verdicts that end the search early, which keeps matching a
// pattern of many stars against a long name from taking exponential time.
type result uint8

const (
	noMatch result = iota
	match
	// noMatchAnywhere: the name ran out; no later start of a star can help.
	noMatchAnywhere
	// noMatchBeyondSlash: a single star would have to cross a slash; only
	// an enclosing "**" may try further.
	noMatchBeyondSlash
)

// wildmatch matches name against a glob as git does: with pathname set a
// wildcard never matches a slash but for "**" between slashes (or at
// either end), which matches any number of directories.
func wildmatch(glob, name string, pathname bool) bool {
	return wild(glob, name, pathname) == match
}

func wild(glob, name string, pathname bool) result {
	i, j := 0, 0
	for ; i < len(glob); i, j = i+1, j+1 {
		g := glob[i]
		if j == len(name) && g != '*' {
			return noMatchAnywhere
		}
		switch g {
		case '\\':
			i++
			if i == len(glob) || name[j] != glob[i] {
				return noMatch
			}
		case '?':
			if pathname && name[j] == '/' {
				return noMatch
			}
		case '[':
			hit, end, ok := bracket(glob, i, name[j])
			if !ok {
				return noMatchAnywhere
			}
			if !hit || pathname && name[j] == '/' {
				return noMatch
			}
			i = end
		case '*':
			var r result
			var done bool
			if i, j, r, done = star(glob, name, i, j, pathname); done {
				return r
			}
		default:
			if name[j] != g {
				return noMatch
			}
		}
	}
	if j < len(name) {
		return noMatch
	}
	return match
}

// star matches the run of stars at glob[i] and what follows. Either it
// decides (done), or it leaves glob[i] and name[j] at a slash each, for
// the caller to match and step past.
func star(glob, name string, i, j int, pathname bool) (int, int, result, bool) {
	start := i
	for i < len(glob) && glob[i] == '*' {
		i++
	}
	crossesSlashes := !pathname
	if pathname && i-start > 1 {
		atStart := start == 0 || glob[start-1] == '/'
		atEnd := i == len(glob) || glob[i] == '/' || glob[i] == '\\' && i+1 < len(glob) && glob[i+1] == '/'
		if atStart && atEnd {
			// "**/" may match no directory at all.
			if i < len(glob) && glob[i] == '/' && wild(glob[i+1:], name[j:], pathname) == match {
				return i, j, match, true
			}
			crossesSlashes = true
		}
	}
	if i == len(glob) {
		if !crossesSlashes && strings.IndexByte(name[j:], '/') >= 0 {
			return i, j, noMatch, true
		}
		return i, j, match, true
	}
	if !crossesSlashes && glob[i] == '/' {
		// One star then a slash: the star is the rest of this directory's name.
		k := strings.IndexByte(name[j:], '/')
		if k < 0 {
			return i, j, noMatch, true
		}
		return i, j + k, noMatch, false
	}
	next := glob[i]
	literal := next != '*' && next != '?' && next != '[' && next != '\\'
	for j < len(name) {
		if literal {
			// What lies before the next occurrence of a literal is the star's.
			for j < len(name) && (crossesSlashes || name[j] != '/') && name[j] != next {
				j++
			}
			if j == len(name) || name[j] != next {
				return i, j, noMatch, true
			}
		}
		r := wild(glob[i:], name[j:], pathname)
		if r != noMatch {
			if !crossesSlashes || r != noMatchBeyondSlash {
				return i, j, r, true
			}
		} else if !crossesSlashes && name[j] == '/' {
			return i, j, noMatchBeyondSlash, true
		}
		j++
	}
	return i, j, noMatchAnywhere, true
}

// bracket matches c against the bracket expression at glob[i] ('['),
// returning the index of its closing ']'. ok is false for an expression
// without an end or with an unknown [:class:]: such a pattern matches
// nothing, as in git.
func bracket(glob string, i int, c byte) (hit bool, end int, ok bool) {
	i++
	negated := false
	if i < len(glob) && (glob[i] == '!' || glob[i] == '^') {
		negated = true
		i++
	}
	var prev byte // the last single character, which may start a range; 0 for none
	for first := true; ; first = false {
		if i >= len(glob) {
			return false, 0, false
		}
		g := glob[i]
		if g == ']' && !first {
			break
		}
		switch {
		case g == '\\':
			i++
			if i == len(glob) {
				return false, 0, false
			}
			g = glob[i]
			hit = hit || c == g
		case g == '-' && prev != 0 && i+1 < len(glob) && glob[i+1] != ']':
			i++
			hi := glob[i]
			if hi == '\\' {
				i++
				if i == len(glob) {
					return false, 0, false
				}
				hi = glob[i]
			}
			hit = hit || prev <= c && c <= hi
			g = 0
		case g == '[' && i+1 < len(glob) && glob[i+1] == ':':
			close := strings.IndexByte(glob[i+2:], ']')
			if close < 0 {
				return false, 0, false
			}
			close += i + 2
			if close-(i+2) < 1 || glob[close-1] != ':' {
				// Not a class after all: a literal '['.
				hit = hit || c == '['
				break
			}
			in, known := inClass(glob[i+2:close-1], c)
			if !known {
				return false, 0, false
			}
			hit = hit || in
			i, g = close, 0
		default:
			hit = hit || c == g
		}
		prev = g
		i++
	}
	return hit != negated, i, true
}

// inClass reports whether c is in the named POSIX class, in the C locale.
func inClass(name string, c byte) (in, known bool) {
	upper, lower, digit := 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9'
	graph := '!' <= c && c <= '~'
	switch name {
	case "alnum":
		return upper || lower || digit, true
	case "alpha":
		return upper || lower, true
	case "blank":
		return c == ' ' || c == '\t', true
	case "cntrl":
		return c < ' ' || c == 0x7f, true
	case "digit":
		return digit, true
	case "graph":
		return graph, true
	case "lower":
		return lower, true
	case "print":
		return graph || c == ' ', true
	case "punct":
		return graph && !upper && !lower && !digit, true
	case "space":
		return c == ' ' || '\t' <= c && c <= '\r', true
	case "upper":
		return upper, true
	case "xdigit":
		return digit || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F', true
	}
	return false, false
}
