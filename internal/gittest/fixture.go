package gittest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Fixture is a small history with every case summarize must handle: a root
// commit, a lockfile change, a binary file, non-UTF-8 text, a rename on a
// branch merged back, a vendored file and a diff far over 4,000 tokens.
type Fixture struct {
	*Repo
	Root, Greet, Deps, Logo, Rename, Latin1, Merge, BigTable, Vendor string
}

const readme = "# hello\n\nSay hello.\n\n## Usage\n\n    go run .\n\n## License\n\nMIT\n\n"

// NewFixture builds the fixture history; HEAD is Vendor on main.
func NewFixture(t testing.TB) *Fixture {
	t.Helper()
	return NewFixtureIn(t, t.TempDir())
}

// NewFixtureIn builds the fixture history in dir.
func NewFixtureIn(t testing.TB, dir string) *Fixture {
	t.Helper()
	r := NewAt(t, dir)
	f := &Fixture{Repo: r}
	f.Root = r.Write("README.md", readme+"A tiny program.\n").
		Write("main.go", "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n").
		Commit("Initial commit")
	f.Greet = r.Write("main.go", "package main\n\nfunc main() {\n\tprintln(greet(\"world\"))\n}\n\nfunc greet(name string) string {\n\treturn \"hello \" + name\n}\n").
		Write("main_test.go", "package main\n\nimport \"testing\"\n\nfunc TestGreet(t *testing.T) {\n\tif greet(\"x\") != \"hello x\" {\n\t\tt.Fatal(\"bad greeting\")\n\t}\n}\n").
		Commit("Add greeting helper\n\nThe helper keeps main small. It is tested.\n\nSigned-off-by: Ada Lovelace <ada@example.com>")
	f.Deps = r.Write("go.mod", "module hello\n\ngo 1.22\n\nrequire example.com/x v1.0.0\n").
		Write("go.sum", "example.com/x v1.0.0 h1:abc=\nexample.com/x v1.0.0/go.mod h1:def=\n").
		Commit("Update dependencies")
	f.Logo = r.WriteBytes("logo.png", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01")).
		Commit("Add logo")
	r.Branch("feature")
	f.Rename = r.Move("README.md", "docs/README.md").
		Write("docs/README.md", readme+"A tiny program that greets.\n").
		Commit("Move the README under docs")
	r.Checkout("main")
	f.Latin1 = r.WriteBytes("names.txt", []byte("Ren\xe9\nJos\xe9\n")).
		Commit("Add names in Latin-1")
	r.Write("docs/README.md", readme+"A tiny program that greets.\n").Remove("README.md")
	f.Merge = r.Merge("Merge branch 'feature'", f.Rename)
	var table strings.Builder
	table.WriteString("package main\n\n// table maps codes to their descriptions.\nvar table = map[int]string{\n")
	for i := range 3000 {
		fmt.Fprintf(&table, "\t%d: \"description number %d for code %x\",\n", i, i, i*7919)
	}
	table.WriteString("}\n")
	f.BigTable = r.Write("table.go", table.String()).Commit("Add the code table")
	f.Vendor = r.Write("vendor/example.com/x/x.go", "package x\n\nfunc X() {}\n").
		Write("main.go", "package main\n\nimport \"example.com/x\"\n\nfunc main() {\n\tx.X()\n\tprintln(greet(\"world\"))\n}\n\nfunc greet(name string) string {\n\treturn \"hello \" + name\n}\n").
		Commit("Call x from main\n\nVendors example.com/x.")
	return f
}

// Latin1Repo commits, after a first commit, a Latin-1 author, message and
// text file beside a binary one: bytes that are not UTF-8 wherever a
// commit carries text. It returns the repository's folder and that
// commit's hash.
func Latin1Repo(t testing.TB) (dir, hash string) {
	t.Helper()
	r := New(t)
	r.Write("a.txt", "a\n").Commit("Start")
	r.WriteBytes("names.txt", []byte("Ren\xe9\n")).WriteBytes("photo.jpg", []byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00"))
	wt, err := r.Git.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	if err := wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		t.Fatal(err)
	}
	sig := &object.Signature{Name: "Ren\xe9 Fran\xe7ois", Email: "rene@example.com", When: Epoch.Add(time.Hour)}
	h, err := wt.Commit("Ajout\xe9 des noms\n\nCaf\xe9.", &git.CommitOptions{Author: sig, Committer: sig})
	if err != nil {
		t.Fatal(err)
	}
	return r.Dir, h.String()
}

// NewTaggedFixture is the fixture in a folder named hello (the name the
// notes show), on main, with a GitHub origin (acme/hello) and v0.1.0
// tagging its third commit, Deps: Unreleased holds 5 commits, v0.1.0
// holds 3, and release notes read the same on every machine.
func NewTaggedFixture(t testing.TB) *Fixture {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "hello")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f := NewFixtureIn(t, dir)
	f.Checkout("main")
	if _, err := f.Git.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{"git@github.com:acme/hello.git"}}); err != nil {
		t.Fatal(err)
	}
	if err := f.Git.Storer.SetReference(plumbing.NewHashReference("refs/tags/v0.1.0", plumbing.NewHash(f.Deps))); err != nil {
		t.Fatal(err)
	}
	return f
}
