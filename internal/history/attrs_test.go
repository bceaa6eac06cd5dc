package history_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	git "github.com/go-git/go-git/v5"

	"github.com/digest-cli/digest/internal/gittest"
	"github.com/digest-cli/digest/internal/history"
)

// Realistic sources, each edited below deep inside a function, a method
// or a class, where the driver's function line differs from the line git's
// default rule would name.
const cSource = `#include <stdio.h>
#include <stdlib.h>

struct buffer {
	char *data;
	size_t len;
};

static int grow(struct buffer *b, size_t want)
{
	char *p;

	if (want <= b->len)
		return 0;
	p = realloc(b->data, want);
	if (!p)
		goto fail;
	b->data = p;
	b->len = want;
	return 0;
fail:
	fprintf(stderr, "out of memory\n");
	return -1;
}

int cmd_mv(int argc,
	   const char **argv)
{
	int i, ret = 0;
	struct buffer b = { NULL, 0 };

	for (i = 1; i < argc; i++) {
		if (grow(&b, 64) < 0) {
			ret = 1;
			goto out;
		}
		printf("%s\n", argv[i]);
	}
out:
	free(b.data);
	printf("done\n");
	printf("moved %d\n", argc - 1);
	return ret;
}
`

const goSource = `package store

import (
	"errors"
	"sync"
)

var (
	ErrMissing = errors.New("missing")
	ErrClosed  = errors.New("closed")
)

type Store struct {
	mu    sync.Mutex
	items map[string]string
}

func (s *Store) Get(key string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.items == nil {
		return "", ErrClosed
	}
	v, ok := s.items[key]
	if !ok {
		return "", ErrMissing
	}
	return v, nil
}

var defaultStore = &Store{items: map[string]string{}}

func (s *Store) Put(key, value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.items == nil {
		s.items = map[string]string{}
	}
	s.items[key] = value
	s.count()
}
`

const pySource = `import os


class Cache:
    """A cache of files."""

    def __init__(self, root):
        self.root = root
        self.entries = {}

    def load(self, name):
        path = os.path.join(self.root, name)
        if name in self.entries:
            return self.entries[name]
        with open(path) as f:
            data = f.read()
        self.entries[name] = data
        return data

    async def refresh(self):
        names = list(self.entries)
        names.sort()
        for name in names:
            self.entries.pop(name)
            await self.load_async(name)
        self.log("refreshed")
        return len(self.entries)
`

const javaSource = `package org.example;

import java.util.List;

public class Inventory {
    private final List<String> items;

    public Inventory(List<String> items) {
        this.items = items;
    }

    public int count(String prefix) {
        int n = 0;
        for (String item : items) {
            if (item.startsWith(prefix)) {
                n++;
            }
        }
        return n;
    }

    private static String normalize(String s) {
        if (s == null) {
            return "";
        }
        String t = s.trim();
        t = t.toLowerCase();
        return t;
    }
}
`

const rustSource = `use std::collections::HashMap;

pub struct Registry {
    names: HashMap<String, u32>,
}

impl Registry {
    pub fn new() -> Self {
        Registry { names: HashMap::new() }
    }

    pub fn register(&mut self, name: &str) -> u32 {
        if name.is_empty() {
            return 0;
        }
        let next = self.names.len() as u32;
        let id = *self.names.entry(name.to_string()).or_insert(next);
        id
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    fn lookup(&self, name: &str) -> Option<u32> {
        if name.is_empty() {
            return None;
        }
        let found = self.names.get(name);
        found.copied()
    }
}
`

// edits applies each [old, new] replacement once.
func edits(t *testing.T, s string, pairs ...string) string {
	t.Helper()
	for i := 0; i < len(pairs); i += 2 {
		if !strings.Contains(s, pairs[i]) {
			t.Fatalf("no %q to edit", pairs[i])
		}
		s = strings.Replace(s, pairs[i], pairs[i+1], 1)
	}
	return s
}

// patchOf is digest's patch of a commit, its files' texts in order.
func patchOf(t *testing.T, r *history.Repo, hash string) string {
	t.Helper()
	var b strings.Builder
	for _, fd := range diffOf(t, r, hash, history.DiffOptions{}).Files {
		b.WriteString(fd.Text)
	}
	return b.String()
}

// TestDiffDriversMatchGit: with .gitattributes naming drivers for C, Go,
// Python, Java and Rust, digest's patch is git show's, byte for byte
// (but for the index lines), hunk headers included.
func TestDiffDriversMatchGit(t *testing.T) {
	r := gittest.New(t)
	r.Write(".gitattributes", "*.c diff=cpp\n*.go diff=golang\n*.py diff=python\n*.java diff=java\n*.rs diff=rust\n").
		Write("src/mv.c", cSource).Write("store/store.go", goSource).Write("cache.py", pySource).
		Write("src/main/java/Inventory.java", javaSource).Write("src/registry.rs", rustSource).Commit("sources")
	h := r.Write("src/mv.c", edits(t, cSource, "\tprintf(\"done\\n\");\n", "\tprintf(\"finished\\n\");\n",
		"\tb->len = want;\n\treturn 0;\n", "\tb->len = want;\n\tb->data[0] = 0;\n\treturn 0;\n")).
		Write("store/store.go", edits(t, goSource, "\ts.count()\n", "\ts.count()\n\ts.notify(key)\n",
			"\t\treturn \"\", ErrMissing\n", "\t\treturn \"\", errors.Join(ErrMissing, errors.New(key))\n")).
		Write("cache.py", edits(t, pySource, "        return len(self.entries)\n", "        return sorted(self.entries)\n",
			"        self.entries[name] = data\n", "        self.entries[name] = data.strip()\n")).
		Write("src/main/java/Inventory.java", edits(t, javaSource, "        return n;\n", "        return Math.max(n, 0);\n",
			"        return t;\n", "        return t.strip();\n")).
		Write("src/registry.rs", edits(t, rustSource, "        found.copied()\n", "        found.copied().filter(|id| *id > 0)\n",
			"        id\n    }\n", "        self.log(id);\n        id\n    }\n")).
		Commit("edit deep inside")
	want := withoutIndexLines(gitShow(t, r.Dir, h))
	got := patchOf(t, open(t, r.Dir), h)
	if got != want {
		t.Errorf("patch differs from git show\n got %q\nwant %q", got, want)
	}
	// The drivers' names, not the default rule's, are in the headers.
	for _, header := range []string{"@@ int cmd_mv(int argc,\n", "@@ static int grow(struct buffer *b, size_t want)\n",
		"@@ func (s *Store) Put(key, value string) {\n", "@@ def load(self, name):\n", "@@ async def refresh(self):\n",
		"@@ public int count(String prefix) {\n", "@@ private static String normalize(String s) {\n",
		"@@ fn lookup(&self, name: &str) -> Option<u32> {\n", "@@ pub fn register(&mut self, name: &str) -> u32 {\n"} {
		if !strings.Contains(got, header) {
			t.Errorf("no hunk header %q in\n%s", header, got)
		}
	}
}

// filePatches splits a git patch into each file's part, by its new path.
func filePatches(patch string) map[string]string {
	parts := map[string]string{}
	var name string
	for _, l := range strings.SplitAfter(patch, "\n") {
		if header, ok := strings.CutPrefix(l, "diff --git "); ok {
			_, name, _ = strings.Cut(strings.TrimSuffix(header, "\n"), " b/")
		}
		parts[name] += l
	}
	return parts
}

// TestDiffAttributesMarkBinary: -diff, binary and a driver configured
// binary skip a text file as binary, as git prints "Binary files ...
// differ" for it; the diff attribute set shows a file with NUL bytes as
// text, as git does.
func TestDiffAttributesMarkBinary(t *testing.T) {
	r := gittest.New(t)
	r.Write(".gitattributes", "*.dat -diff\n*.min.js binary\n*.img diff=image\nforced.txt diff\n")
	setConfig(t, r, "image", "binary", "true")
	h0 := r.Write("a.dat", "one\n").Write("app.min.js", "var a=1;\n").Write("logo.img", "text really\n").
		Write("forced.txt", "nul \x00 here\n").Write("plain.txt", "plain\n").Commit("files")
	h := r.Write("a.dat", "two\n").Write("app.min.js", "var a=2;\n").Write("logo.img", "still text\n").
		Write("forced.txt", "nul \x00 there\n").Write("plain.txt", "plain too\n").Commit("edit")
	repo := open(t, r.Dir)
	for _, hash := range []string{h0, h} {
		gitParts := filePatches(gitShow(t, r.Dir, hash))
		for _, fd := range diffOf(t, repo, hash, history.DiffOptions{}).Files {
			gitPart := gitParts[fd.Path]
			switch fd.Path {
			case "a.dat", "app.min.js", "logo.img":
				if fd.Skip != history.SkipBinary || fd.Text != "" || !strings.Contains(gitPart, "Binary files ") {
					t.Errorf("%s: skip %q, text %q; git: %q", fd.Path, fd.Skip, fd.Text, gitPart)
				}
			default:
				if fd.Skip != "" || fd.Text != withoutIndexLines(gitPart) {
					t.Errorf("%s: skip %q, text %q; git %q", fd.Path, fd.Skip, fd.Text, gitPart)
				}
			}
		}
	}
}

// setConfig sets diff.DRIVER.KEY in the repository's configuration.
func setConfig(t *testing.T, r *gittest.Repo, driver, key, value string) {
	t.Helper()
	cfg, err := r.Git.Config()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Raw.Section("diff").Subsection(driver).SetOption(key, value)
	if err := r.Git.SetConfig(cfg); err != nil {
		t.Fatal(err)
	}
}

// TestUserDriverMatchesGit: a driver of the repository's configuration,
// whose xfuncname negates lines before it picks function lines, gives
// git's hunk headers; the name is its first group.
func TestUserDriverMatchesGit(t *testing.T) {
	r := gittest.New(t)
	setConfig(t, r, "conf", "xfuncname", "!^[ \t]*#\n\\[([a-z]+)\\]")
	r.Write(".gitattributes", "*.conf diff=conf\n")
	body := "[server]\nhost = a\n# [commented]\nport = 1\na = 1\nb = 2\nc = 3\nd = 4\n[client]\nretries = 3\n# [old]\ne = 5\nf = 6\ng = 7\nh = 8\ni = 9\nj = 10\nk = 11\nl = 12\n"
	r.Write("app.conf", body).Commit("conf")
	h := r.Write("app.conf", edits(t, body, "d = 4\n", "d = 40\n", "l = 12\n", "l = 120\n")).Commit("edit")
	want := withoutIndexLines(gitShow(t, r.Dir, h))
	got := patchOf(t, open(t, r.Dir), h)
	if got != want {
		t.Errorf("patch differs from git show\n got %q\nwant %q", got, want)
	}
	if !strings.Contains(got, "@@ server\n") || !strings.Contains(got, "@@ client\n") {
		t.Errorf("hunk headers do not name the sections:\n%s", got)
	}
}

// TestBareCloneReadsHEADAttributes: a bare repository has no work tree, so
// the attributes are those of HEAD's tree, even those committed after the
// commit diffed; its patch is the work tree's (git 2.39 itself reads no
// .gitattributes in a bare repository).
func TestBareCloneReadsHEADAttributes(t *testing.T) {
	r := gittest.New(t)
	r.Write("cache.py", pySource).Write("lib/src/mv.c", cSource).Commit("sources")
	h := r.Write("cache.py", edits(t, pySource, "        return len(self.entries)\n", "        return sorted(self.entries)\n")).
		Write("lib/src/mv.c", edits(t, cSource, "\treturn ret;\n", "\treturn ret ? 1 : 0;\n")).Commit("edit")
	r.Write(".gitattributes", "*.py diff=python\n").Write("lib/.gitattributes", "*.c diff=cpp\n").Commit("attributes")
	bare := t.TempDir()
	if _, err := git.PlainClone(bare, true, &git.CloneOptions{URL: r.Dir}); err != nil {
		t.Fatal(err)
	}
	want := withoutIndexLines(gitShow(t, r.Dir, h))
	got := patchOf(t, open(t, bare), h)
	if got != want {
		t.Errorf("bare clone's patch differs from git show in the work tree\n got %q\nwant %q", got, want)
	}
	if !strings.Contains(got, "@@ async def refresh(self):\n") || !strings.Contains(got, "@@ int cmd_mv(int argc,\n") {
		t.Errorf("the bare clone did not use HEAD's attributes:\n%s", got)
	}
}

// TestNestedAttributesOverrideRoot: a directory's .gitattributes overrides
// the root's for the files below it, and $GIT_DIR/info/attributes
// overrides both, as in git.
func TestNestedAttributesOverrideRoot(t *testing.T) {
	r := gittest.New(t)
	r.Write(".gitattributes", "*.c diff=cpp\n*.py diff=python\n").
		Write("legacy/.gitattributes", "*.c !diff\n").
		Write("gen/.gitattributes", "*.c -diff\n").
		Write("scripts/.gitattributes", "*.c diff=python\n")
	if err := os.MkdirAll(filepath.Join(r.Dir, ".git", "info"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(r.Dir, ".git", "info", "attributes"), []byte("scripts/override.py -diff\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"mv.c", "legacy/mv.c", "gen/mv.c", "scripts/mv.c"} {
		r.Write(p, cSource)
	}
	r.Write("scripts/override.py", pySource).Write("scripts/kept.py", pySource).Commit("sources")
	for _, p := range []string{"mv.c", "legacy/mv.c", "gen/mv.c", "scripts/mv.c"} {
		r.Write(p, edits(t, cSource, "\treturn ret;\n", "\treturn ret ? 1 : 0;\n"))
	}
	for _, p := range []string{"scripts/override.py", "scripts/kept.py"} {
		r.Write(p, edits(t, pySource, "        return len(self.entries)\n", "        return sorted(self.entries)\n"))
	}
	h := r.Commit("edit")
	gitParts := filePatches(gitShow(t, r.Dir, h))
	for _, fd := range diffOf(t, open(t, r.Dir), h, history.DiffOptions{}).Files {
		gitPart := gitParts[fd.Path]
		if fd.Path == "gen/mv.c" || fd.Path == "scripts/override.py" {
			if fd.Skip != history.SkipBinary || !strings.Contains(gitPart, "Binary files ") {
				t.Errorf("%s: skip %q; git: %q", fd.Path, fd.Skip, gitPart)
			}
			continue
		}
		if fd.Text != withoutIndexLines(gitPart) {
			t.Errorf("%s differs from git show\n got %q\nwant %q", fd.Path, fd.Text, withoutIndexLines(gitPart))
		}
	}
	headers := map[string]string{"mv.c": "@@ int cmd_mv(int argc,\n", "legacy/mv.c": "@@ out:\n", "scripts/kept.py": "@@ async def refresh(self):\n"}
	for _, fd := range diffOf(t, open(t, r.Dir), h, history.DiffOptions{}).Files {
		if want, ok := headers[fd.Path]; ok && !strings.Contains(fd.Text, want) {
			t.Errorf("%s: no %q in\n%s", fd.Path, want, fd.Text)
		}
	}
}

// TestBadDriverWarnsAndFallsBack: an xfuncname Go cannot match as git
// would is named in one warning, and its files get the default rule.
func TestBadDriverWarnsAndFallsBack(t *testing.T) {
	r := gittest.New(t)
	setConfig(t, r, "words", "xfuncname", `^\<func`)
	r.Write(".gitattributes", "*.w diff=words\n*.y bogus\n[attr]x diff\n")
	r.Write("sub/.gitattributes", "[attr]y -diff\n!neg diff\n")
	body := "func one\n" + strings.Repeat("\tline\n", 8)
	r.Write("a.w", body).Write("sub/b.w", body).Commit("one")
	h := r.Write("a.w", body+"\tmore\n").Write("sub/b.w", body+"\tmore\n").Commit("two")
	repo := open(t, r.Dir)
	d := diffOf(t, repo, h, history.DiffOptions{})
	if !strings.Contains(d.Files[0].Text, "@@ -7,3 +7,4 @@ func one\n") {
		t.Errorf("the default rule was not used:\n%s", d.Files[0].Text)
	}
	want := []string{
		`diff.words.xfuncname: "^\\<func": \< (GNU's start of a word) has no equivalent digest can match. Try: \b`,
		"sub/.gitattributes: line 1: macro [attr]y is only allowed in the top-level .gitattributes",
		"sub/.gitattributes: line 2: negative patterns are ignored",
	}
	warnings := repo.Warnings()
	if len(warnings) != len(want) {
		t.Fatalf("warnings %q, want %d", warnings, len(want))
	}
	for i, w := range warnings {
		if !strings.HasPrefix(w, want[i]) || strings.Contains(w, "\n") {
			t.Errorf("warning %q, want one line starting %q", w, want[i])
		}
	}
}
