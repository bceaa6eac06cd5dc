package userdiff

import (
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/gittest"
)

// shown is what a hunk header shows for a line: its name, or nothing.
func shown(d *Driver, line string) string {
	name, _ := d.FuncName(line)
	return name
}

func TestBuiltins(t *testing.T) {
	for name := range builtinRules {
		if len(builtinCases[name]) < 5 {
			t.Errorf("driver %s has %d cases, want typical lines of its language", name, len(builtinCases[name]))
		}
	}
	for name, cases := range builtinCases {
		d := Builtin(name)
		if d == nil {
			t.Fatalf("no built-in driver %s", name)
		}
		for _, c := range cases {
			if got := shown(d, c.line); got != c.want {
				t.Errorf("%s: %q shows %q, want %q", name, c.line, got, c.want)
			}
		}
	}
}

func TestDefaultRule(t *testing.T) {
	for line, want := range map[string]string{
		"func main() {\n":          "func main() {",
		"_start:\r\n":              "_start:",
		"$x = 1\n":                 "$x = 1",
		"\tindented\n":             "",
		"# heading\n":              "",
		"":                         "",
		strings.Repeat("a", 90):    strings.Repeat("a", NameBytes),
		strings.Repeat("b ", 45):   strings.Repeat("b ", 39) + "b", // cut, then trimmed
		"tail without newline  \t": "tail without newline",
	} {
		var d *Driver
		if got := shown(d, line); got != want {
			t.Errorf("default rule on %q: %q, want %q", line, got, want)
		}
	}
	if shown(Builtin("nosuch"), "x") != "x" || Builtin("nosuch") != nil {
		t.Error("an unknown driver is not git's default")
	}
}

// TestBuiltinsMatchGit puts each case's line above a change in a file
// that git diffs with the driver, and compares git's hunk header with the
// case: the cases are git's behaviour, not only digest's.
func TestBuiltinsMatchGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	r := gittest.New(t)
	var attrs strings.Builder
	type file struct{ driver, line, path string }
	var files []file
	names := make([]string, 0, len(builtinCases))
	for name := range builtinCases {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(&attrs, "*.%s diff=%s\n", name, name)
		for i, c := range builtinCases[name] {
			files = append(files, file{name, c.line, fmt.Sprintf("%s/%03d.%s", name, i, name)})
		}
	}
	r.Write(".gitattributes", attrs.String())
	body := func(line, last string) string { return line + "\n" + strings.Repeat("\n", 8) + last + "\n" }
	for _, f := range files {
		r.Write(f.path, body(f.line, "before"))
	}
	r.Commit("before")
	for _, f := range files {
		r.Write(f.path, body(f.line, "after"))
	}
	h := r.Commit("after")
	headers := hunkHeaders(t, r.Dir, h)
	for _, f := range files {
		want := headers[f.path]
		if got := shown(Builtin(f.driver), f.line); got != want {
			t.Errorf("%s: %q: digest shows %q, git %q", f.driver, f.line, got, want)
		}
	}
}

// hunkHeaders runs git show on a commit and returns each file's (first)
// hunk header name.
func hunkHeaders(t *testing.T, dir, commit string, config ...string) map[string]string {
	t.Helper()
	args := []string{"-C", dir}
	for _, c := range config {
		args = append(args, "-c", c)
	}
	cmd := exec.Command("git", append(args, "show", "--no-renames", "--no-color", "--format=", commit)...)
	cmd.Env = gittest.GitEnv(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	headers := map[string]string{}
	var path string
	for _, l := range strings.Split(string(out), "\n") {
		if p, ok := strings.CutPrefix(l, "+++ b/"); ok {
			path = p
		} else if strings.HasPrefix(l, "@@ ") {
			_, name, _ := strings.Cut(l[3:], " @@")
			headers[path] = strings.TrimPrefix(name, " ")
		}
	}
	return headers
}

func TestConfigure(t *testing.T) {
	ds, warnings := Configure([]Setting{
		{"neg", "xfuncname", "!^[ \t]*(static|inline)\n^[ \t]*([a-z]+) *\\("},
		{"basic", "funcname", "^\\(sec\\)tion \\([0-9]\\+\\)"},
		{"both", "funcname", "^old"},
		{"both", "xFuncName", "^new(.*)"}, // keys ignore case; the last rule given wins
		{"img", "binary", "true"},
		{"txt", "binary", "false"},
		{"auto", "binary", "auto"},
		{"cpp", "binary", "yes"}, // changes the built-in driver, keeping its rule
		{"golang", "xfuncname", "^package (.*)"},
	})
	if len(warnings) > 0 {
		t.Fatalf("warnings: %q", warnings)
	}
	for _, tt := range []struct {
		driver, line, want string
		ok                 bool
	}{
		{"neg", "static f(x)", "", false},
		{"neg", "  run (x)", "run", true},
		{"neg", "Run(x)", "", false},
		{"basic", "section 12 here", "sec", true},
		{"basic", "section x", "", false},
		{"both", "new thing", " thing", true},
		{"both", "old thing", "", false},
		{"golang", "package main", "main", true},
		{"golang", "func main() {", "", false},
		{"cpp", "int main(void)", "int main(void)", true},
		{"cpp", "out:", "", false},
		{"img", "anything", "anything", true}, // no rule: the default
	} {
		name, ok := ds.Lookup(tt.driver).FuncName(tt.line)
		if name != tt.want || ok != tt.ok {
			t.Errorf("%s on %q: %q, %v; want %q, %v", tt.driver, tt.line, name, ok, tt.want, tt.ok)
		}
	}
	for driver, want := range map[string]Content{"img": Binary, "txt": Text, "auto": ByContent, "cpp": Binary, "golang": ByContent, "neg": ByContent} {
		if got := ds.Lookup(driver).Content; got != want {
			t.Errorf("%s: content %d, want %d", driver, got, want)
		}
	}
	if Builtin("cpp").Content != ByContent {
		t.Error("configuring cpp changed the built-in driver itself")
	}
	if ds.Lookup("python") != Builtin("python") || ds.Lookup("nosuch") != nil {
		t.Error("lookup of an unconfigured name is not the built-in driver or nil")
	}
}

func TestConfigureWarns(t *testing.T) {
	for _, tt := range []struct {
		setting Setting
		want    string
	}{
		{Setting{"w", "xfuncname", `^\<func`}, `diff.w.xfuncname: "^\\<func": \< (GNU's start of a word) has no equivalent digest can match. Try: \b`},
		{Setting{"w", "xfuncname", "^a\n!^b"}, `diff.w.xfuncname: the last expression "!^b" is negated`},
		{Setting{"w", "xfuncname", "^(a"}, `diff.w.xfuncname: "^(a": a '(' is never closed. Try:`},
		{Setting{"w", "xfuncname", "^[a"}, `diff.w.xfuncname: "^[a": a '[' is never closed. Try:`},
		{Setting{"w", "xfuncname", `^(a)\1`}, `diff.w.xfuncname: "^(a)\\1": \1 refers back to a group`},
		{Setting{"w", "xfuncname", "*a"}, `diff.w.xfuncname: "*a": "*" has nothing before it to repeat. Try:`},
		{Setting{"w", "funcname", `^a\{x`}, `diff.w.funcname: "^a\\{x": a \{ starts no interval. Try:`},
		{Setting{"w", "xfuncname", "[[:word:]]"}, `diff.w.xfuncname: "[[:word:]]": [:word:] is not a character class. Try:`},
		{Setting{"w", "binary", "maybe"}, `diff.w.binary: "maybe" is not a boolean; files of diff=w are text or binary by their content. Try: true, false or auto`},
	} {
		ds, warnings := Configure([]Setting{tt.setting})
		if len(warnings) != 1 || !strings.HasPrefix(warnings[0], tt.want) || strings.Contains(warnings[0], "\n") {
			t.Errorf("%+v: warnings %q, want one line starting %q", tt.setting, warnings, tt.want)
			continue
		}
		// The driver keeps git's default rule instead.
		if name, ok := ds.Lookup("w").FuncName("abc"); name != "abc" || !ok {
			t.Errorf("%+v: after the warning, %q %v, want the default rule", tt.setting, name, ok)
		}
	}
}

// TestUserRulesMatchGit configures the same expressions in git and in
// digest and compares the hunk headers of lines where POSIX and Go read
// an expression differently if taken as it is.
func TestUserRulesMatchGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	rules := []struct{ key, expr string }{
		{"xfuncname", `^[\t ]*(fn [a-z]+)`},          // a backslash in brackets is itself
		{"xfuncname", `^([]a-c]+)x`},                 // ']' first in brackets is a member
		{"xfuncname", `^(\w+)\s*=`},                  // GNU's \w and \s
		{"xfuncname", `^a{,2}(b+)`},                  // glibc's {,n}
		{"xfuncname", `^(x)|y)`},                     // an unmatched ')' is itself
		{"xfuncname", "!^skip\n^([a-z]+)"},           // negation, then the rule
		{"xfuncname", `^(a|ab)(c|bcd)(d*)`},          // leftmost-longest overall
		{"funcname", `^\(def\) \([a-z]*\)+ (x)`},     // basic: \( \) groups, + ( ) plain
		{"funcname", `^*\([A-Z][A-Z]*\)$`},           // basic: a leading '*' is a star character
		{"funcname", `^x\{2\}\(.*\)`},                // basic interval
		{"xfuncname", "^([[:upper:]][[:digit:]]+)$"}, // classes
	}
	lines := []string{"\tfn abc", "\\fn abc", "  fn x", "]ax", "b]cx", "dx", "name = 1", "name=2", "= 3", "abbb", "aaabbb", "x", "y)", "y",
		"skip me", "keep me", "abcd", "abcdd", "def abc+ (x)", "def abc (x)", "*ABC", "ABC", "xxyz", "xyz", "A12", "a12"}
	r := gittest.New(t)
	var attrs strings.Builder
	var config []string
	var settings []Setting
	for i, rule := range rules {
		name := fmt.Sprintf("u%d", i)
		fmt.Fprintf(&attrs, "*.%s diff=%s\n", name, name)
		config = append(config, fmt.Sprintf("diff.%s.%s=%s", name, rule.key, rule.expr))
		settings = append(settings, Setting{name, rule.key, rule.expr})
	}
	ds, warnings := Configure(settings)
	if len(warnings) > 0 {
		t.Fatalf("warnings: %q", warnings)
	}
	r.Write(".gitattributes", attrs.String())
	body := func(line, last string) string { return line + "\n" + strings.Repeat("\n", 8) + last + "\n" }
	for pass, last := range []string{"before", "after"} {
		for i := range rules {
			for j, line := range lines {
				r.Write(fmt.Sprintf("%03d.u%d", j, i), body(line, last))
			}
		}
		if pass == 0 {
			r.Commit("before")
		}
	}
	headers := hunkHeaders(t, r.Dir, r.Commit("after"), config...)
	for i, rule := range rules {
		for j, line := range lines {
			want := headers[fmt.Sprintf("%03d.u%d", j, i)]
			if got := shown(ds.Lookup(fmt.Sprintf("u%d", i)), line); got != want {
				t.Errorf("%s %q on %q: digest %q, git %q", rule.key, rule.expr, line, got, want)
			}
		}
	}
}

// TestFilterKeepsEveryMatch: the first-byte filter of each built-in
// driver never turns away a line its expressions would take.
func TestFilterKeepsEveryMatch(t *testing.T) {
	for name := range builtinRules {
		d := Builtin(name)
		unfiltered := &Driver{funcs: &funcRules{rules: d.funcs.rules}}
		for _, cases := range builtinCases {
			for _, c := range cases {
				a, aok := d.FuncName(c.line)
				b, bok := unfiltered.FuncName(c.line)
				if a != b || aok != bok {
					t.Errorf("%s on %q: %q %v with the filter, %q %v without", name, c.line, a, aok, b, bok)
				}
			}
		}
	}
}
