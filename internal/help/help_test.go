package help

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestEveryTopicHasItsPage: each topic listed has its page, and each page
// is listed, so none is unreachable from `digest help`.
func TestEveryTopicHasItsPage(t *testing.T) {
	pages, err := fs.Glob(files, "topics/*.md")
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, tp := range Topics() {
		listed = append(listed, "topics/"+tp.Name+".md")
		md, err := Markdown(tp.Name)
		if err != nil || !strings.HasPrefix(md, "# ") {
			t.Errorf("topic %s: %v; want a page starting with its title", tp.Name, err)
		}
	}
	slices.Sort(listed)
	if !slices.Equal(pages, listed) {
		t.Errorf("pages %v, listed topics %v: each page needs its line in topics, and each line its page", pages, listed)
	}
	if _, err := Markdown("nosuch"); err == nil || !strings.Contains(err.Error(), "Try: one of commits") {
		t.Errorf("an unknown topic: %v", err)
	}
}

// citedTest is a test, benchmark or fuzz target's name as the pages cite
// it (a subtest's path after the slash is not checked).
var citedTest = regexp.MustCompile(`\b(Test|Benchmark|Fuzz)[A-Z][A-Za-z0-9_]*`)

// TestCitedTestsExist fails when a page names a test, benchmark or fuzz
// target that no _test.go file of the repository declares: a promise
// whose test was renamed or removed is a promise nothing checks.
func TestCitedTestsExist(t *testing.T) {
	root := filepath.Join("..", "..")
	declared := map[string]bool{}
	decl := regexp.MustCompile(`(?m)^func (?:\([^)]*\) )?((?:Test|Benchmark|Fuzz)[A-Za-z0-9_]*)\(`)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != root) {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllSubmatch(b, -1) {
			declared[string(m[1])] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(declared) < 500 {
		t.Fatalf("found %d tests: the walk missed the tree", len(declared))
	}
	for _, tp := range Topics() {
		md, _ := Markdown(tp.Name)
		for _, name := range citedTest.FindAllString(md, -1) {
			if !declared[name] {
				t.Errorf("digest help %s cites %s, which no test file declares", tp.Name, name)
			}
		}
	}
}

// TestPagesRender: every page lays out for a terminal, in colour and
// without, with no Markdown fences or heading marks left and no line
// wider than the terminal.
func TestPagesRender(t *testing.T) {
	for _, tp := range Topics() {
		md, _ := Markdown(tp.Name)
		for _, color := range []bool{true, false} {
			out, err := Render(md, 100, color)
			if err != nil {
				t.Fatalf("%s: %v", tp.Name, err)
			}
			if strings.Contains(out, "```") || strings.Contains(out, "\n# ") {
				t.Errorf("%s (colour %v): Markdown left in the page", tp.Name, color)
			}
			if color != strings.Contains(out, "\x1b[") {
				t.Errorf("%s: colour %v, escape sequences %v", tp.Name, color, !color)
			}
		}
	}
}
