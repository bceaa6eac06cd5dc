package gitattributes

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/gittest"
)

func parse(t *testing.T, text, dir string, macros bool) *File {
	t.Helper()
	f, warnings := Parse(text, dir, macros)
	if len(warnings) > 0 {
		t.Fatalf("Parse(%q): warnings %q", text, warnings)
	}
	return f
}

func TestLookupPrecedence(t *testing.T) {
	root := parse(t, "*.c diff=cpp\n*.c diff=c2\n*.h diff=cpp -diff\n*.h !diff\n*.txt diff\n*.bin binary\n*.gen binary diff=gen\n", "", true)
	sub := parse(t, "*.c diff=sub\n", "src", false)
	deep := parse(t, "x.c !diff\n", "src/deep", false)
	info := parse(t, "/src/info.c diff=info\n", "", true)
	stack := []*File{root, sub, deep, info}
	for _, tt := range []struct{ path, want string }{
		{"a.c", "=c2"},           // the later line of a file wins
		{"a.h", "unspecified"},   // "!diff" decides: unspecified, not the line before
		{"a.txt", "set"},         // "diff" alone
		{"a.bin", "unset"},       // the built-in macro binary is -diff
		{"a.gen", "=gen"},        // the later assignment on a line wins over the macro's
		{"src/a.c", "=sub"},      // a deeper directory's file wins
		{"src/deep/a.c", "=sub"}, // ... where it names the attribute
		{"src/deep/x.c", "unspecified"},
		{"src/info.c", "=info"},  // info/attributes wins over every file
		{"other/src/a.c", "=c2"}, // src/.gitattributes holds only src/
		{"README", "unspecified"},
	} {
		if got := Lookup(stack, tt.path, "diff").String(); got != tt.want {
			t.Errorf("diff of %s = %s, want %s", tt.path, got, tt.want)
		}
	}
}

func TestMacros(t *testing.T) {
	root := parse(t, "[attr]code diff=cpp text\n[attr]binary diff=redefined\n*.c code\n*.img binary\n*.x -code\n[attr]chain code\n*.y chain\n", "", true)
	for _, tt := range []struct{ path, want string }{
		{"a.c", "=cpp"},
		{"a.img", "=redefined"}, // the repository's macro replaces git's built-in one
		{"a.x", "unspecified"},  // an unset macro assigns nothing
		{"a.y", "=cpp"},         // a macro that sets a macro
	} {
		if got := Lookup([]*File{root}, tt.path, "diff").String(); got != tt.want {
			t.Errorf("diff of %s = %s, want %s", tt.path, got, tt.want)
		}
	}
	// A deeper line of higher precedence decides an attribute the macro
	// assigns: the macro does not override it.
	sub := parse(t, "*.c -diff\n", "lib", false)
	if got := Lookup([]*File{root, sub}, "lib/a.c", "diff").String(); got != "unset" {
		t.Errorf("lib/a.c: %s, want unset", got)
	}
	// Macros are only defined at the top: git ignores them elsewhere.
	f, warnings := Parse("[attr]mine diff=x\n*.c mine\n", "lib", false)
	if len(warnings) != 1 || !strings.Contains(warnings[0], "line 1: macro [attr]mine is only allowed") {
		t.Errorf("warnings %q", warnings)
	}
	if got := Lookup([]*File{f}, "lib/a.c", "diff").String(); got != "unspecified" {
		t.Errorf("a macro from a subdirectory's file applied: %s", got)
	}
}

func TestParseIgnoresWhatGitIgnores(t *testing.T) {
	text := "# comment\n\n   \n!*.c diff=cpp\n*.go di$ff=golang\n" + strings.Repeat("x", 2100) + " diff=long\n*.py diff=python\r\n\"a b.c\" diff=quoted\n\"bad\\q.c\" diff=unquoted\n"
	f, warnings := Parse(text, "", true)
	want := []string{"line 4: negative patterns", "line 5: \"di$ff\" is not a valid attribute name", "line 6: a line of 2110 bytes"}
	if len(warnings) != len(want) {
		t.Fatalf("warnings %q, want %d", warnings, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(warnings[i], w) {
			t.Errorf("warning %q, want %q...", warnings[i], w)
		}
	}
	for path, v := range map[string]string{"a.c": "unspecified", "a.go": "unspecified", "a.py": "=python", "a b.c": "=quoted", `"badq.c"`: "=unquoted"} {
		if got := Lookup([]*File{f}, path, "diff").String(); got != v {
			t.Errorf("diff of %s = %s, want %s", path, got, v)
		}
	}
}

// TestLookupMatchesGitCheckAttr asks `git check-attr` and Lookup the same
// questions over files in three directories and info/attributes, with the
// pattern forms git distinguishes: base names, anchored paths, "**",
// brackets, escapes, quoting and directory-only patterns.
func TestLookupMatchesGitCheckAttr(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	files := map[string]string{
		".gitattributes": `a** diff=astar
*.c diff=cpp
/top.py diff=python
docs/**/*.md diff=markdown
**/gen/** -diff
a/**/b diff=ab
x*y diff=xy
lib/*.go diff=golang
[[:upper:]]*.txt diff=upper
[!a-c]?.rs diff=rust
\#hash diff=hash
"with space.c" diff=spaced
build/ diff=dironly
*.[ch]pp diff=cpp2
/x/a** diff=xastar
[attr]gen -diff
*.pb.go gen
`,
		"src/.gitattributes":      "*.c diff=src\nsub/*.c diff=srcsub\n/root.c diff=srcroot\nmain.c !diff\n",
		"src/deep/.gitattributes": "*.c diff=deep\n*.h diff=deeph\n",
		".git/info/attributes":    "src/deep/override.c diff=info\n",
	}
	paths := []string{
		"a.c", "top.py", "sub/top.py", "docs/x.md", "docs/a/b/x.md", "docs.md", "gen/x.go", "a/gen/b/x.go",
		"a/b", "a/x/y/b", "ab", "x-y", "x/y", "dir/xzy", "lib/a.go", "lib/sub/a.go", "sub/lib/a.go", "README.txt",
		"readme.txt", "d1.rs", "a1.rs", "dd1.rs", "#hash", "with space.c", "build", "build/x.c", "a.cpp", "a.hpp",
		"abc", "a/x", "x/abc", "x/a/b/c", "x.pb.go", "src/a.c", "src/sub/a.c", "src/root.c", "src/x/root.c",
		"src/main.c", "src/deep/a.c", "src/deep/main.c", "src/deep/a.h", "src/deep/override.c", "src/deep/sub/a.c",
	}
	dir := t.TempDir()
	stack := []*File{}
	byDir := map[string]*File{}
	for name, text := range files {
		full := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := exec.Command("git", "init", "-q", dir)
	run.Env = gittest.GitEnv(t)
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	// git init keeps the info/attributes written before it.
	for _, d := range []string{"", "src", "src/deep"} {
		byDir[d] = parse(t, files[filepath.ToSlash(filepath.Join(d, ".gitattributes"))], d, d == "")
	}
	info := parse(t, files[".git/info/attributes"], "", true)

	cmd := exec.Command("git", "-C", dir, "check-attr", "--stdin", "diff")
	cmd.Env = gittest.GitEnv(t)
	cmd.Stdin = strings.NewReader(strings.Join(paths, "\n") + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(paths) {
		t.Fatalf("git check-attr answered %d lines for %d paths:\n%s", len(lines), len(paths), out)
	}
	for i, path := range paths {
		stack = stack[:0]
		for _, d := range []string{"", "src", "src/deep"} {
			if holds(d, path) {
				stack = append(stack, byDir[d])
			}
		}
		stack = append(stack, info)
		want := strings.TrimPrefix(lines[i], unquotedPath(lines[i])+": diff: ")
		if want != "set" && want != "unset" && want != "unspecified" {
			want = "=" + want
		}
		if got := Lookup(stack, path, "diff").String(); got != want {
			t.Errorf("%s: diff %s, git check-attr says %s", path, got, want)
		}
	}
}

// unquotedPath is the path check-attr printed at the start of its line.
func unquotedPath(line string) string {
	path, _, _ := strings.Cut(line, ": diff: ")
	return path
}

func TestWildmatch(t *testing.T) {
	for _, tt := range []struct {
		glob, name string
		pathname   bool
		want       bool
	}{
		{"*.c", "a.c", true, true},
		{"*.c", "d/a.c", true, false},
		{"*.c", "d/a.c", false, true},
		{"**/a", "a", true, true},
		{"**/a", "x/y/a", true, true},
		{"x/**", "x/y/z", true, true},
		{"x/**", "x", true, false},
		{"x/**/y", "x/y", true, true},
		{"x**", "x/y", true, false}, // "**" not between slashes is one star
		{"[a-c]", "b", false, true},
		{"[]a]", "]", false, true},
		{"[!]a]", "b", false, true},
		{"[[:digit:]x]", "7", false, true},
		{"[[:nope:]]", "n", false, false},
		{"[a-", "a", false, false},
		{"a\\*", "a*", false, true},
		{"a\\", "a", false, false},
		{"*a*a*a*a*a*a*a*a*a*b", strings.Repeat("a", 200), false, false}, // must not take exponential time
	} {
		if got := wildmatch(tt.glob, tt.name, tt.pathname); got != tt.want {
			t.Errorf("wildmatch(%q, %q, %v) = %v, want %v", tt.glob, tt.name, tt.pathname, got, tt.want)
		}
	}
}

// BenchmarkLookup is one file's diff attribute under git.git's root
// .gitattributes (24 lines) and a subdirectory's: digest asks it for
// each side of each changed file.
func BenchmarkLookup(b *testing.B) {
	root, _ := Parse(`* whitespace=trail,space
*.[ch] whitespace=indent,trail,space,incomplete diff=cpp
*.sh whitespace=indent,trail,space,incomplete text eol=lf
*.perl text eol=lf diff=perl
*.pl text eol=lf diff=perl
*.pm text eol=lf diff=perl
*.py text eol=lf diff=python
*.bat text eol=crlf
CODE_OF_CONDUCT.md -whitespace
/Documentation/**/*.adoc text eol=lf whitespace=trail,space,incomplete
/command-list.txt text eol=lf
/GIT-VERSION-GEN text eol=lf
/mergetools/* text eol=lf
/t/oid-info/* text eol=lf
/Documentation/git-merge.adoc conflict-marker-size=32
/Documentation/git-merge-file.adoc conflict-marker-size=32
/Documentation/gitk.adoc conflict-marker-size=32
/Documentation/user-manual.adoc conflict-marker-size=32
/t/t????-*.sh conflict-marker-size=32
/templates/hooks/*.sample whitespace=indent,trail,space,incomplete text eol=lf
`, "", true)
	sub, _ := Parse("t[0-9][0-9][0-9][0-9]/* -whitespace\n/chainlint/*.expect eol=lf\n", "t", false)
	stack := []*File{root, sub}
	paths := []string{"builtin/mv.c", "t/t1234-x.sh", "Documentation/git-log.adoc", "README.md", "t/t5100/patch0001"}
	for i := 0; b.Loop(); i++ {
		Lookup(stack, paths[i%len(paths)], "diff")
	}
}
