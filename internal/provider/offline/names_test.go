package offline

import (
	"slices"
	"strings"
	"testing"
)

func TestDefinitions(t *testing.T) {
	tests := []struct {
		name, file, hunk string
		want             []string // nil: no names for the file
	}{
		{"go: a function added below another is named itself", "args.go",
			"@@ -40,6 +40,12 @@ func OnlyDigits(s string) error {\n \treturn nil\n }\n+\n+// NoRepeats refuses duplicates.\n+func NoRepeats(v []string) error {\n+\treturn nil\n+}\n",
			[]string{"NoRepeats"}},
		{"go: a change inside the header's function", "c.go",
			"@@ -8,7 +8,7 @@ func (c *Client) Do(r *Request) error {\n \tif c == nil {\n-\t\treturn nil\n+\t\treturn ErrNil\n \t}\n",
			[]string{"Do"}},
		{"go: changes before and after a definition name both", "c.go",
			"@@ -8,7 +8,9 @@ func A() {\n-\ta()\n+\taa()\n }\n \n func B() {\n+\tb()\n }\n",
			[]string{"A", "B"}},
		{"go: a const block has no name", "c.go",
			"@@ -3,6 +3,7 @@ import (\n const (\n \tx = 1\n+\ty = 2\n )\n", nil},
		{"go: a var block has no name", "c.go",
			"@@ -3,6 +3,7 @@ const (\n var (\n \tx = 1\n+\ty = 2\n )\n", nil},
		{"go: type and generic method", "t.go",
			"@@ -1,3 +1,6 @@ package t\n+type Set[T comparable] map[T]struct{}\n+\n+func (s Set[T]) Add(v T) { s[v] = struct{}{} }\n",
			[]string{"Set", "Add"}},
		{"go: a label is no definition", "l.go",
			"@@ -5,6 +5,7 @@ func Loop() {\n outer:\n \tfor {\n+\t\tbreak outer\n \t}\n",
			[]string{"Loop"}},
		{"go: a comment-only change names nothing", "c.go",
			"@@ -5,6 +5,7 @@ func Loop() {\n+\t// spin\n \tfor {\n", nil},
		{"go: a removed function is named", "c.go",
			"@@ -20,9 +20,3 @@ func Keep() {\n }\n \n-func Drop() {\n-\tdrop()\n-}\n",
			[]string{"Drop"}},
		{"c: the function, not its return type's struct", "fetch.c",
			"@@ -210,6 +210,12 @@ static int parse(const char *s)\n \treturn 0;\n }\n \n+static struct ref *find_ref(struct ref *refs, const char *name)\n+{\n+\treturn NULL;\n+}\n",
			[]string{"find_ref"}},
		{"c: header with a struct return type", "fetch.c",
			"@@ -10,3 +10,3 @@ struct ref *get_refs(struct transport *t)\n-\tx = 1;\n+\tx = 2;\n",
			[]string{"get_refs"}},
		{"c: a static array is no function", "usage.c",
			"@@ -10,3 +10,4 @@ static const char * const usage[] = {\n \tN_(\"git add\"),\n+\tN_(\"git add -p\"),\n", nil},
		{"c: a goto label keeps the function", "x.c",
			"@@ -10,3 +10,4 @@ int run(void)\n out:\n+\tfree(buf);\n \treturn ret;\n",
			[]string{"run"}},
		{"python: a method added below another", "loader.py",
			"@@ -30,6 +30,9 @@ class Loader:\n     def load(self, path):\n         return 1\n \n+    def reload(self, path):\n+        return self.load(path)\n+\n",
			[]string{"reload"}},
		{"python: import lines are no definitions", "m.py",
			"@@ -1,3 +1,4 @@ import os\n import sys\n+import re\n", nil},
		{"js: exported function and arrow constant", "app.ts",
			"@@ -1,3 +1,7 @@ import x from 'y'\n+export async function load(url: string) {\n+}\n+export const render = (props) => {\n+}\n",
			[]string{"load", "render"}},
		{"js: a class method", "view.js",
			"@@ -10,3 +10,6 @@ class View {\n   constructor() {}\n+  async refresh(force) {\n+    return 1\n+  }\n",
			[]string{"refresh"}},
		{"java: a method, not a return statement", "Cache.java",
			"@@ -10,3 +10,8 @@ public class Cache {\n+    public Optional<String> lookup(String key) {\n+        return find(key,\n+            true);\n+    }\n",
			[]string{"lookup"}},
		{"rust: fn and impl", "lib.rs",
			"@@ -1,3 +1,8 @@ use std::io;\n+impl Display for Token {\n+    fn fmt(&self, f: &mut Formatter) -> fmt::Result {\n+        Ok(())\n+    }\n+}\n",
			[]string{"Token", "fmt"}},
		{"ruby: def in a class", "user.rb",
			"@@ -1,3 +1,6 @@ class User\n+  def admin?\n+    role == :admin\n+  end\n",
			[]string{"admin?"}},
		{"shell: a function, and no name for test_expect_success", "t1234-x.sh",
			"@@ -1,3 +1,8 @@ test_description='x'\n+setup_repo () {\n+\tgit init repo\n+}\n+\n+test_expect_success 'clone' '\n+\tgit clone repo copy\n+'\n",
			[]string{"setup_repo"}},
		{"go.mod: no names", "go.mod",
			"@@ -3,7 +3,7 @@ require (\n-\tx v1\n+\tx v2\n )\n", nil},
		{"po: no names", "po/ga.po",
			"@@ -3,7 +3,7 @@ msgid \"x\"\n-msgstr \"a\"\n+msgstr \"b\"\n", nil},
		{"adoc: no names", "Documentation/git-add.adoc",
			"@@ -3,7 +3,7 @@ include::itself[]\n-old\n+new\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			diff := "diff --git a/" + tt.file + " b/" + tt.file + "\n--- a/" + tt.file + "\n+++ b/" + tt.file + "\n" + tt.hunk
			got := definitions(diff)[tt.file]
			if !slices.Equal(got, tt.want) {
				t.Errorf("definitions = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDefinitionsNeverKeywords(t *testing.T) {
	for ext, lang := range languages {
		for kw := range lang.keywords {
			for _, line := range []string{kw + " (", kw + " x", kw + "(x) {", "\t" + kw + "(x) {", kw + " {"} {
				diff := "diff --git a/f" + ext + " b/f" + ext + "\n@@ -1 +1 @@ " + line + "\n+\tchanged()\n+" + line + "\n"
				for _, name := range definitions(diff)["f"+ext] {
					if lang.keywords[name] {
						t.Errorf("%s: %q named keyword %q", ext, line, name)
					}
				}
			}
		}
	}
}

func TestDefinitionsOnlyForCodeFiles(t *testing.T) {
	for _, p := range []string{"go.mod", "po/ga.po", "Documentation/x.adoc", "README.md", "Makefile", "config.mak.uname", "a.json", "a.yaml"} {
		diff := "diff --git a/" + p + " b/" + p + "\n@@ -1 +1 @@ func Named() {\n-x\n+func Other() {\n"
		if got := definitions(diff)[p]; got != nil {
			t.Errorf("%s: named %q", p, got)
		}
	}
	if !strings.Contains(strings.Join(definitions("diff --git a/x.go b/x.go\n@@ -1 +1 @@ func Named() {\n-\tx\n+\ty\n")["x.go"], ","), "Named") {
		t.Error("a Go file's header was not read")
	}
}
