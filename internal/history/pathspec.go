package history

import (
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Pathspec selects paths like the arguments after `git log --`: a directory
// selects everything under it, a file itself, and *, ? and [...] glob across
// directories as in git. git's magic is understood: exclusion (":!x",
// ":^x", ":(exclude)x"), ":(icase)", ":(glob)" (where * stops at a slash
// and ** crosses them), ":(literal)", and ":/" or ":(top)" for the root.
// A path matches when it matches some included spec (or there are only
// exclusions) and no excluded one. Specs are kept relative to the
// repository root.
type Pathspec struct {
	specs []string // canonical forms, sorted: the pathspec's identity in the cache
	items []specItem
}

// specItem is one compiled spec.
type specItem struct {
	pattern string // relative to the root; lower-cased under icase
	exclude bool
	icase   bool
	re      *regexp.Regexp // nil: pattern is a literal path
}

// ParsePathspec validates and compiles path arguments relative to the
// repository root.
func ParsePathspec(args []string) (Pathspec, error) {
	return ParsePathspecIn(args, "")
}

// CheckPathspec reports what is wrong with path arguments wherever they are
// given (unknown magic, a glob that does not compile); where they lead is
// for ParsePathspecIn to say, in each repository.
func CheckPathspec(args []string) error {
	for _, a := range args {
		m, rel, err := parseMagic(a)
		if err != nil {
			return err
		}
		if !m.literal && strings.ContainsAny(rel, "*?[") {
			if _, err := globRegexp(rel, m.glob, m.icase); err != nil {
				return fmt.Errorf("path %q: %v. Try: a valid glob such as '*.go' or 'docs/*'", a, err)
			}
		}
	}
	return nil
}

// magic is what a spec's prefix asks for.
type magic struct {
	top, exclude, icase, glob, literal bool
}

// parseMagic splits a spec into its magic and its path: the long form
// ":(top,exclude,icase,glob,literal)path" and the short ":/", ":!", ":^"
// (combined, and ended by an optional ":").
func parseMagic(arg string) (magic, string, error) {
	var m magic
	if !strings.HasPrefix(arg, ":") {
		return m, arg, nil
	}
	rest := arg[1:]
	if long, ok := strings.CutPrefix(rest, "("); ok {
		words, p, ok := strings.Cut(long, ")")
		if !ok {
			return m, "", fmt.Errorf("path %q: magic without its closing ')'. Try: :(exclude)PATH", arg)
		}
		for _, w := range strings.Split(words, ",") {
			switch strings.TrimSpace(w) {
			case "top":
				m.top = true
			case "exclude":
				m.exclude = true
			case "icase":
				m.icase = true
			case "glob":
				m.glob = true
			case "literal":
				m.literal = true
			case "":
			default:
				if strings.HasPrefix(w, "attr:") {
					return m, "", fmt.Errorf("path %q: attribute magic is not supported. Try: name the paths themselves", arg)
				}
				return m, "", fmt.Errorf("path %q: unknown magic %q. Try: top, exclude, icase, glob or literal", arg, w)
			}
		}
		if m.glob && m.literal {
			return m, "", fmt.Errorf("path %q: glob and literal cannot be combined. Try: one of them", arg)
		}
		return m, p, nil
	}
	i := 0
	for ; i < len(rest); i++ {
		switch rest[i] {
		case '/':
			m.top = true
			continue
		case '!', '^':
			m.exclude = true
			continue
		}
		break
	}
	rest = rest[i:]
	rest = strings.TrimPrefix(rest, ":")
	return m, rest, nil
}

// ParsePathspecIn validates and compiles path arguments given in dir, a
// directory of the work tree relative to its root ("" for the root), as
// git takes them from where it runs: "." is dir, "../x" a sibling of it.
// A path with top magic (":/", ":(top)") is relative to the root wherever
// it is given.
func ParsePathspecIn(args []string, dir string) (Pathspec, error) {
	return parsePathspec(args, dir, nil)
}

// Pathspec compiles path arguments given in workDir (an absolute directory;
// "" for the root) as git takes them there: relative to workDir when it
// lies in the work tree, and absolute paths inside the work tree as the
// paths they name.
func (r *Repo) Pathspec(args []string, workDir string) (Pathspec, error) {
	dir := ""
	if workDir != "" {
		dir, _ = r.InWorkTree(workDir)
	}
	var roots []string
	if r.workTree() {
		roots = append(roots, r.path)
		if real, err := filepath.EvalSymlinks(r.path); err == nil && real != r.path {
			roots = append(roots, real)
		}
	}
	return parsePathspec(args, dir, roots)
}

// parsePathspec is ParsePathspecIn that also reads absolute paths under
// one of roots, the work tree's spellings.
func parsePathspec(args []string, dir string, roots []string) (Pathspec, error) {
	var p Pathspec
	everything := false // "." from the root among the included specs
	for _, a := range args {
		m, rel, err := parseMagic(a)
		if err != nil {
			return Pathspec{}, err
		}
		if strings.HasPrefix(rel, "/") {
			inside, ok := underRoot(rel, roots)
			if !ok {
				return Pathspec{}, fmt.Errorf("path %q is outside the repository. Try: a path inside it, relative to where digest runs (or to the root with :/)", a)
			}
			rel, m.top = inside, true
		}
		if !m.top && dir != "" {
			rel = path.Join(dir, rel)
		}
		spec := strings.TrimSuffix(path.Clean(strings.TrimPrefix(rel, "./")), "/")
		if spec == ".." || strings.HasPrefix(spec, "../") || strings.HasPrefix(spec, "/") {
			return Pathspec{}, fmt.Errorf("path %q is outside the repository. Try: a path inside it, relative to where digest runs (or to the root with :/)", a)
		}
		if spec == "." || spec == "" {
			if !m.exclude {
				everything = true
				continue
			}
			spec = ""
		}
		it := specItem{pattern: spec, exclude: m.exclude, icase: m.icase}
		if it.icase {
			it.pattern = strings.ToLower(spec)
		}
		if !m.literal && strings.ContainsAny(spec, "*?[") {
			if it.re, err = globRegexp(it.pattern, m.glob, m.icase); err != nil {
				return Pathspec{}, fmt.Errorf("path %q: %v. Try: a valid glob such as '*.go' or 'docs/*'", a, err)
			}
		}
		p.items = append(p.items, it)
		p.specs = append(p.specs, canonical(m, spec))
	}
	if everything {
		// The whole tree, less any exclusions: with none, no filter at all.
		var kept []specItem
		var specs []string
		for i, it := range p.items {
			if it.exclude {
				kept, specs = append(kept, it), append(specs, p.specs[i])
			}
		}
		p.items, p.specs = kept, specs
	}
	sort.Strings(p.specs)
	return p, nil
}

// underRoot turns an absolute path into one relative to the first root it
// lies under, with slashes.
func underRoot(abs string, roots []string) (string, bool) {
	for _, root := range roots {
		rel, err := filepath.Rel(root, filepath.FromSlash(abs))
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		return filepath.ToSlash(rel), true
	}
	return "", false
}

// canonical is a spec's form in the cache key: a plain path as it always
// was, magic spelled out in git's long form.
func canonical(m magic, spec string) string {
	var words []string
	for _, w := range []struct {
		on   bool
		name string
	}{{m.exclude, "exclude"}, {m.icase, "icase"}, {m.glob, "glob"}, {m.literal, "literal"}} {
		if w.on {
			words = append(words, w.name)
		}
	}
	if len(words) == 0 {
		return spec
	}
	return ":(" + strings.Join(words, ",") + ")" + spec
}

// globRegexp compiles a glob. Without pathname semantics (git's default
// for pathspecs) * and ? match '/' too; with them (glob magic) they stop at
// it and "**" crosses directories, as in .gitignore.
func globRegexp(glob string, pathname, icase bool) (*regexp.Regexp, error) {
	var b strings.Builder
	if icase {
		b.WriteString("(?i)")
	}
	b.WriteString("^")
	for i := 0; i < len(glob); i++ {
		switch c := glob[i]; c {
		case '*':
			switch {
			case !pathname:
				b.WriteString(".*")
			case strings.HasPrefix(glob[i:], "**/"):
				b.WriteString("(?:.*/)?") // "**/x": x in any directory, the root included
				i += 2
			case strings.HasPrefix(glob[i:], "**"):
				b.WriteString(".*")
				i++
			default:
				b.WriteString("[^/]*")
			}
		case '?':
			if pathname {
				b.WriteString("[^/]")
			} else {
				b.WriteString(".") // in git's pathspecs, as with *, this matches '/' too
			}
		case '[':
			end := strings.IndexByte(glob[i:], ']')
			if end < 0 {
				return nil, fmt.Errorf("unclosed '['")
			}
			class := glob[i+1 : i+end]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + class + "]")
			i += end
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("(/.*)?$")
	return regexp.Compile(b.String())
}

// Empty reports whether the pathspec selects everything.
func (p Pathspec) Empty() bool { return len(p.items) == 0 }

// String is the canonical form, used to key summaries of a filtered diff
// apart from summaries of the whole commit.
func (p Pathspec) String() string { return strings.Join(p.specs, "\n") }

// Match reports whether name is selected.
func (p Pathspec) Match(name string) bool {
	if name == "" {
		return false
	}
	included, anyIncluded := false, false
	for _, it := range p.items {
		if it.exclude {
			if it.matches(name) {
				return false
			}
			continue
		}
		anyIncluded = true
		included = included || it.matches(name)
	}
	return included || !anyIncluded
}

func (it specItem) matches(name string) bool {
	if it.re != nil {
		return it.re.MatchString(name)
	}
	if it.icase {
		name = strings.ToLower(name)
	}
	return it.pattern == "" || name == it.pattern || strings.HasPrefix(name, it.pattern+"/")
}
