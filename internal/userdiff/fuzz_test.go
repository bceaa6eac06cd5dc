package userdiff

import (
	"strings"
	"testing"
)

// FuzzFuncName: on any line, every built-in driver answers as its
// expressions do without the first-byte filter, and a name is always part
// of the line, at most NameBytes long.
func FuzzFuncName(f *testing.F) {
	for _, cases := range builtinCases {
		for _, c := range cases[:min(len(cases), 4)] {
			f.Add(c.line)
		}
	}
	f.Add("\t\t  \t")
	f.Add("\xff\xfeint x(void)")
	f.Fuzz(func(t *testing.T, line string) {
		for name := range builtinRules {
			d := Builtin(name)
			got, ok := d.FuncName(line)
			want, wantOK := (&Driver{funcs: &funcRules{rules: d.funcs.rules}}).FuncName(line)
			if got != want || ok != wantOK {
				t.Fatalf("%s on %q: %q %v with the filter, %q %v without", name, line, got, ok, want, wantOK)
			}
			if len(got) > NameBytes || !strings.Contains(line, got) {
				t.Fatalf("%s on %q: name %q", name, line, got)
			}
		}
	})
}

// FuzzConfigure: any configured expression is translated and compiled, or
// refused with a one-line warning; either way the driver then answers for
// any line, without a panic.
func FuzzConfigure(f *testing.F) {
	for _, seed := range []string{`^[\t ]*(fn [a-z]+)`, `^([]a-c]+)x`, `^(\w+)\s*=`, `a{,2}(b+)`, `^(x)|y)`, "!^skip\n^([a-z]+)",
		`^\(def\) \([a-z]*\)+`, `^*\([A-Z]*\)$`, `x\{2\}`, `[[:upper:]][[=a=]][[.-.]]`, `\<x\>`, `(a)\1`, `a**`, `a*?+`, `[a-`, `\`, "!x"} {
		f.Add(seed, "def abc = x")
	}
	f.Fuzz(func(t *testing.T, expr, line string) {
		for _, key := range []string{"xfuncname", "funcname"} {
			ds, warnings := Configure([]Setting{{"f", key, expr}})
			for _, w := range warnings {
				if strings.Contains(w, "\n") {
					t.Fatalf("%s %q: warning of several lines: %q", key, expr, w)
				}
			}
			if name, _ := ds.Lookup("f").FuncName(line); len(name) > NameBytes || !strings.Contains(line, name) {
				t.Fatalf("%s %q on %q: name %q", key, expr, line, name)
			}
		}
	})
}
