// Package committype classifies a commit the way release-notes tools do:
// by its Conventional Commits prefix when it has one, else by the area
// prefix and verbs of its subject, the paths it touches, and the subjects
// dependency bots write.
package committype

import (
	"path"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Types are the types Classify gives, in the order release notes list them.
var Types = []string{"feat", "fix", "perf", "refactor", "docs", "test", "build", "ci", "chore", "revert", "style", "other"}

// Kind is what a commit is, for release notes.
type Kind struct {
	Type     string // one of Types
	Scope    string // the part of the project, as the subject names it; "" if none
	Breaking bool   // "type!:" or a BREAKING CHANGE footer
}

// aliases are the other names people and models give the types.
var aliases = map[string]string{
	"feature": "feat", "features": "feat",
	"bugfix": "fix", "hotfix": "fix", "fixes": "fix",
	"performance": "perf",
	"refactoring": "refactor",
	"doc":         "docs", "documentation": "docs",
	"tests": "test", "testing": "test",
	"deps": "build", "dep": "build", "dependencies": "build", "dependency": "build",
	"chores":  "chore",
	"reverts": "revert",
}

// Normalize gives the type t names, lower-cased and with aliases resolved
// ("Feature" is feat, "deps" is build), and false for anything else.
func Normalize(t string) (string, bool) {
	t = strings.ToLower(strings.TrimSpace(t))
	if a, ok := aliases[t]; ok {
		return a, true
	}
	for _, known := range Types {
		if t == known {
			return t, true
		}
	}
	return "", false
}

// Valid reports whether t names a type, as Normalize reads it.
func Valid(t string) bool {
	_, ok := Normalize(t)
	return ok
}

var (
	// conventional is "type(scope)!: description".
	conventional = regexp.MustCompile(`^([A-Za-z]+)(?:\(([^()\r\n]*)\))?(!)?:\s*(\S.*)$`)
	// area is "plumbing: ...", "builtin/mv: ...", "packfile,delta: ...": a
	// path-like word before the colon, no spaces.
	area = regexp.MustCompile(`^([\w.*+-]+(?:/[\w.*+-]+)*(?:,[\w./*+-]+)*):\s+(\S.*)$`)
	// breakingFooter is the Conventional Commits footer for a breaking change.
	breakingFooter = regexp.MustCompile(`(?m)^BREAKING[ -]CHANGE:\s`)
	revert         = regexp.MustCompile(`^Revert\s+"`)
	merge          = regexp.MustCompile(`^Merge (?:pull request|branch|remote-tracking branch|tag|commit|changes|'|")`)
)

// sentenceWords are words that open a subject like an area but are prose:
// "Note: ...", "WIP: ...".
var sentenceWords = map[string]bool{
	"note": true, "notes": true, "nb": true, "warning": true, "important": true, "todo": true,
	"wip": true, "update": true, "updates": true, "release": true, "breaking": true, "merge": true,
	"security": true, "summary": true, "example": true, "question": true, "attention": true,
	"nit": true, "minor": true, "misc": true, "tmp": true, "temp": true, "draft": true, "see": true,
	"ps": true, "also": true, "fyi": true, "caution": true, "tip": true, "hack": true, "workaround": true,
}

// depScopes are the scopes bots give dependency updates.
var depScopes = map[string]bool{"deps": true, "deps-dev": true, "dev-deps": true, "dependencies": true, "dep": true}

// Classify gives the kind of the commit with this message that touched
// these paths (relative to the repository root). Rules, first that applies:
//
//  1. a Conventional Commits prefix of a known type (aliases included):
//     its type and scope; chore or build of a deps scope is build;
//  2. a subject `Revert "..."`: revert;
//  3. a merge: other, unless the pull request's title line (the body's
//     first line) classifies as something else;
//  4. a dependency bot's subject (see Dependency): build;
//  5. an area prefix ("plumbing: format/packfile, fix ...") gives the scope;
//  6. paths that are all documentation, all tests, all CI configuration or
//     all dependency manifests: docs, test, ci or build;
//  7. the subject's verbs (fix, add, speed up, refactor, bump ...);
//  8. other.
//
// The paths come before the verbs because they are the stronger evidence:
// "Fix typo in README" touching only README.md is docs, "Add tests for x"
// touching only tests is test.
func Classify(message string, paths []string) Kind {
	message = strings.TrimSpace(strings.ReplaceAll(message, "\r\n", "\n"))
	subject, body, _ := strings.Cut(message, "\n")
	subject = strings.TrimSpace(subject)
	breaking := breakingFooter.MatchString(body)
	k := classify(subject, body, paths)
	k.Breaking = k.Breaking || breaking
	return k
}

func classify(subject, body string, paths []string) Kind {
	if m := conventional.FindStringSubmatch(subject); m != nil {
		if t, ok := Normalize(m[1]); ok && t != "other" {
			scope := strings.TrimSpace(m[2])
			if depScopes[strings.ToLower(scope)] && (t == "chore" || t == "build") {
				t = "build"
			}
			return Kind{Type: t, Scope: scope, Breaking: m[3] == "!"}
		}
	}
	if revert.MatchString(subject) {
		return Kind{Type: "revert"}
	}
	if merge.MatchString(subject) {
		// Only a pull or merge request's merge carries its title; a
		// branch merge's body describes the topic, which is no title.
		hasTitle := strings.HasPrefix(subject, "Merge pull request") || strings.Contains(body, "See merge request")
		if title := prTitle(body); hasTitle && title != "" {
			if k := classify(title, "", nil); k.Type != "other" {
				return k
			}
		}
		return Kind{Type: "other"}
	}
	if _, _, _, ok := Dependency(subject); ok || groupBump.MatchString(subject) {
		return Kind{Type: "build"}
	}
	k := Kind{Type: "other"}
	text := subject
	if m := area.FindStringSubmatch(subject); m != nil && !sentenceWords[strings.ToLower(m[1])] {
		k.Scope, _, _ = strings.Cut(m[1], ",")
		text = m[2]
	}
	if t := pathsType(paths); t != "" {
		k.Type = t
		return k
	}
	if t := verbsType(text); t != "" {
		k.Type = t
	}
	return k
}

// prTitle is the line GitHub and GitLab put under a merge's subject: the
// pull request's title. A list of merged commits is no title.
func prTitle(body string) string {
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "*") || strings.HasPrefix(line, "-") || strings.HasPrefix(line, "#") ||
			strings.HasPrefix(line, "Conflicts:") || strings.HasPrefix(line, "See merge request") ||
			strings.HasPrefix(line, "This reverts") || trailer.MatchString(line) {
			return ""
		}
		return line
	}
	return ""
}

// trailer is a git trailer line: "Signed-off-by: ...", "Fixes: ...".
var trailer = regexp.MustCompile(`^(?:[A-Za-z]+(?:-[A-Za-z]+)+|Fixes|Closes|Resolves|Refs|Cc|Bug|Issue):\s`)

// verbRules map what a subject says to a type. Where several match, the
// one that starts first wins, and at the same start the longer match:
// "avoid allocations" is perf, "avoid a crash" is fix.
var verbRules = []struct {
	typ string
	re  *regexp.Regexp
}{
	{"test", regexp.MustCompile(`(?i)\b(?:add|adds|added|improve|improves|fix|fixes|fixed|extend|extends)\s+(?:\S+\s+){0,2}?tests?\b`)},
	{"perf", regexp.MustCompile(`(?i)\b(?:speed(?:s|ed)?[ -]?up|faster|optimi[sz](?:e|es|ed|ing|ation)|reduce[sd]? (?:the )?(?:allocations?|memory|allocs)|fewer allocations|avoid(?:s|ed)? (?:an? )?(?:allocations?|copying|copies)|perf|performance)\b`)},
	{"build", regexp.MustCompile(`(?i)\b(?:bump(?:s|ed)?|upgrade[sd]?|update[sd]? (?:the )?(?:dependency|dependencies|deps|module|go\.mod|go version|toolchain)|go\.mod)\b`)},
	{"refactor", regexp.MustCompile(`(?i)\b(?:(?:stop|avoid)(?:s|ped|ed)? using|convert(?:s|ed)?|migrate[sd]?|refactor(?:s|ed|ing)?|clean(?:s|ed)?[ -]?up|cleanup|simplif(?:y|ies|ied)|rename[sd]?|move[sd]?|split(?:s)?|extract(?:s|ed)?|restructure[sd]?|reorgani[sz]e[sd]?|deduplicate[sd]?|consolidate[sd]?|unif(?:y|ies|ied)|inline[sd]?|(?:remove[sd]?|drop(?:s|ped)?) (?:the )?(?:unused|dead|redundant|obsolete)|stub(?:s|bed)? out)\b`)},
	{"fix", regexp.MustCompile(`(?i)\b(?:fix(?:es|ed|ing)?|correct(?:s|ed)?|resolve[sd]?|prevent(?:s|ed)?|avoid(?:s|ed)?|handle[sd]?|repair(?:s|ed)?|ensure[sd]?|guard(?:s|ed)?|reject(?:s|ed)?|validate[sd]?|verif(?:y|ies|ied)|hono(?:u)?r(?:s|ed)?|respect(?:s|ed)?|restore[sd]?|plug(?:s|ged)? (?:a |the )?leaks?|crash(?:es)?|panic(?:s)?|leak(?:s)?|race(?:s)?|regression|bug)\b`)},
	{"feat", regexp.MustCompile(`(?i)\b(?:add(?:s|ed)?|introduce[sd]?|support(?:s|ed)?|implement(?:s|ed)?|allow(?:s|ed)?|^new|teach(?:es)?|learn(?:s|ed)?|enable[sd]?|expose[sd]?|wire[sd]? up)\b`)},
	{"docs", regexp.MustCompile(`(?i)\b(?:document(?:s|ed)?|docs?|documentation|readme|typos?|godoc)\b`)},
	{"style", regexp.MustCompile(`(?i)\b(?:gofmt|goimports|gofumpt|whitespace|formatting|code style|re-?indent(?:s|ed)?|lint(?:er|ing)?)\b`)},
	{"chore", regexp.MustCompile(`(?i)\b(?:release v?\d|prepare (?:for )?(?:the )?release|bump version|version bump)`)},
}

func verbsType(text string) string {
	best, bestAt, bestLen := "", len(text)+1, 0
	for _, r := range verbRules {
		loc := r.re.FindStringIndex(text)
		if loc == nil {
			continue
		}
		if n := loc[1] - loc[0]; loc[0] < bestAt || loc[0] == bestAt && n > bestLen {
			best, bestAt, bestLen = r.typ, loc[0], n
		}
	}
	return best
}

// pathsType is the type every path agrees on: all docs, all tests, all CI
// configuration or all dependency manifests; "" when they do not agree or
// any is code.
func pathsType(paths []string) string {
	t := ""
	for _, p := range paths {
		k := pathType(p)
		if k == "" || t != "" && k != t {
			return ""
		}
		t = k
	}
	return t
}

var (
	ciDirs       = []string{".github/workflows/", ".github/actions/", ".circleci/", ".ci/", "ci/", ".buildkite/", ".gitlab/ci/"}
	ciFiles      = map[string]bool{".gitlab-ci.yml": true, ".travis.yml": true, "azure-pipelines.yml": true, "Jenkinsfile": true, "appveyor.yml": true, ".appveyor.yml": true, ".drone.yml": true, "cloudbuild.yaml": true, ".github/dependabot.yml": true, ".github/renovate.json": true, "renovate.json": true}
	testDirs     = map[string]bool{"test": true, "tests": true, "t": true, "testdata": true, "__tests__": true, "spec": true}
	docDirs      = map[string]bool{"docs": true, "doc": true, "Documentation": true}
	docExts      = map[string]bool{".md": true, ".markdown": true, ".rst": true, ".adoc": true, ".asciidoc": true}
	docPrefixes  = []string{"README", "CHANGELOG", "LICENSE", "LICENCE", "COPYING", "AUTHORS", "CONTRIBUTING", "NOTICE", "CODE_OF_CONDUCT", "SECURITY"}
	manifests    = map[string]bool{"go.mod": true, "go.sum": true, "go.work": true, "go.work.sum": true, "package.json": true, "package-lock.json": true, "npm-shrinkwrap.json": true, "yarn.lock": true, "pnpm-lock.yaml": true, "Cargo.toml": true, "Cargo.lock": true, "poetry.lock": true, "Pipfile": true, "Pipfile.lock": true, "uv.lock": true, "Gemfile": true, "Gemfile.lock": true, "pom.xml": true, "composer.json": true, "composer.lock": true}
	testSuffixes = []string{"_test.go", "_test.py", "_spec.rb", "_test.rb", "Test.java", "Tests.java", "_test.rs"}
)

// pathType is what one path holds: "docs", "test", "ci", "build" for a
// dependency manifest or vendored code, or "" for anything else.
func pathType(p string) string {
	p = strings.TrimPrefix(p, "./")
	base := path.Base(p)
	for _, d := range ciDirs {
		if strings.HasPrefix(p, d) {
			return "ci"
		}
	}
	if ciFiles[p] || ciFiles[base] && path.Dir(p) == "." {
		return "ci"
	}
	dirs := strings.Split(path.Dir(p), "/")
	for _, d := range dirs {
		if testDirs[d] {
			return "test"
		}
	}
	for _, s := range testSuffixes {
		if strings.HasSuffix(base, s) {
			return "test"
		}
	}
	if strings.HasPrefix(base, "test_") && strings.HasSuffix(base, ".py") || strings.Contains(base, ".spec.") || strings.Contains(base, ".test.") {
		return "test"
	}
	for _, d := range dirs {
		if docDirs[d] {
			return "docs"
		}
	}
	if manifests[base] || strings.HasPrefix(base, "requirements") && strings.HasSuffix(base, ".txt") || strings.HasPrefix(base, "build.gradle") || dirs[0] == "vendor" {
		return "build"
	}
	if docExts[strings.ToLower(path.Ext(base))] {
		return "docs"
	}
	for _, pre := range docPrefixes {
		if strings.HasPrefix(strings.ToUpper(base), pre) {
			return "docs"
		}
	}
	return ""
}

// subArea is the "format/packfile, " before a capitalized change.
var subArea = regexp.MustCompile(`^[\w.-]+(?:/[\w.-]+)*, ([A-Z].*)$`)

// Description is the subject without the prefix Classify reads its type
// or scope from ("fix(api)!: handle x" -> "Handle x", "builtin/mv: fix
// y" -> "Fix y"): release notes show the type and scope apart, so the
// text need not repeat them. Other subjects come back as they are.
func Description(subject string) string {
	subject = strings.TrimSpace(subject)
	rest := ""
	if m := conventional.FindStringSubmatch(subject); m != nil {
		if t, ok := Normalize(m[1]); ok && t != "other" {
			rest = m[4]
		}
	}
	if m := area.FindStringSubmatch(subject); rest == "" && m != nil && !sentenceWords[strings.ToLower(m[1])] {
		rest = m[2]
		// go-git's "plumbing: format/packfile, Add X": a sub-area, then the change.
		if sub := subArea.FindStringSubmatch(rest); sub != nil {
			rest = sub[1]
		}
	}
	if rest == "" {
		return subject
	}
	r, size := utf8.DecodeRuneInString(rest)
	return string(unicode.ToUpper(r)) + rest[size:]
}
