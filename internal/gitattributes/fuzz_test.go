package gitattributes

import (
	"fmt"
	"strings"
	"testing"
)

// FuzzParse: any file text parses, with warnings for what git ignores and
// never a panic; any path can be looked up in it; and a last line naming
// the path exactly (quoted, its wildcards escaped) decides its attribute.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"*.c diff=cpp\n*.go diff=golang\n",
		"[attr]bin -diff -merge\n*.png bin\n*.jpg binary\n",
		"\"a b\\t\\\"c\\\".txt\" diff=quoted\n\"\\377\\101\" -diff\n\"unterminated diff\n",
		"/src/**/gen/*.go !diff\n**/x/** -diff\nx/ diff=dir\n!neg diff\n",
		"[!a-c]?[[:alpha:]]*.[ch] diff=cpp\n[[:bad:]] diff\n[a- diff\n\\#x diff=hash\n",
		"# comment\n\r\n\t \n*\tdiff=tab\r\n" + strings.Repeat("x", 2050) + " diff\n",
		"*.c -diff=x !diff=y di$ff\n[attr] x\n[attr]-x y\n",
	} {
		f.Add(seed, "src/gen/a.go")
	}
	f.Fuzz(func(t *testing.T, text, path string) {
		file, _ := Parse(text, "", true)
		if v := Lookup([]*File{file}, path, "diff"); v.State != Valued && v.Text != "" {
			t.Fatalf("%s carries a text %q", v, v.Text)
		}
		if !plainPath(path) {
			return
		}
		text = strings.ReplaceAll(text, "\x00", "") + "\n" + exactLine(path, "diff=fuzz")
		file, _ = Parse(text, "", true)
		if got := Lookup([]*File{file}, path, "diff"); got != (Value{State: Valued, Text: "fuzz"}) {
			t.Fatalf("the last line names %q exactly, yet its diff is %s", path, got)
		}
	})
}

// plainPath: a path a tree can hold, short enough for one line.
func plainPath(p string) bool {
	return p != "" && len(p) < 500 && !strings.ContainsRune(p, 0) && !strings.HasPrefix(p, "/") &&
		!strings.HasSuffix(p, "/") && !strings.Contains(p, "//")
}

// exactLine is an attributes line that matches path alone: anchored, its
// wildcards escaped, in C quotes.
func exactLine(path, attrs string) string {
	var b strings.Builder
	b.WriteString(`"/`)
	for i := 0; i < len(path); i++ {
		c := path[i]
		switch {
		case c == '*' || c == '?' || c == '[':
			b.WriteString(`\\`)
			b.WriteByte(c)
		case c == '\\':
			b.WriteString(`\\\\`)
		case c == '"':
			b.WriteString(`\"`)
		case c < ' ' || c == 0x7f:
			fmt.Fprintf(&b, `\%03o`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteString(`" `)
	b.WriteString(attrs)
	return b.String()
}
