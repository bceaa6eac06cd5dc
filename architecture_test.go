package main

import (
	"bytes"
	"go/build"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/digest-cli/digest"

// layers places every package of the module: a package imports only
// packages of lower layers. Layer 0 is the foundation every layer may use
// (text safety, dates, memory helpers, the tokenizer, statistics), which
// is how the report writers and the stores can escape what they print without
// importing anything else of digest's.
var layers = map[string]int{
	"internal/textsafe": 0, "internal/approxidate": 0, "internal/offheap": 0, "internal/memlimit": 0,
	"internal/redact": 0, "internal/stats": 0, "internal/tokenizer": 0, "internal/gittest": 0, "internal/pgtest": 0, "internal/hostiletest": 0, "internal/leaktest": 0, "internal/goldentest": 0,
	"internal/forge": 0, "internal/gitattributes": 0, "internal/userdiff": 0,
	"internal/committype": 0, "internal/linediff": 0, "internal/spend": 0, "internal/calibrate": 0,
	// Release notes' formats and rules: merge messages, people, a
	// repository's release.yml, version order and bumps.
	"internal/mailmap": 0, "internal/versionsort": 0, "internal/mergemsg": 0, "internal/people": 0,
	"internal/releaseyml": 0, "internal/bump": 0, "internal/forgeapi/forgetest": 0,
	// The object store raw request and response bodies go to (--payloads).
	"internal/payloads": 0,
	// The manual's pages (digest help TOPIC) and their rendering.
	"internal/help": 0,

	"internal/store":           1,
	"internal/store/sqlstore":  2,
	"internal/store/storetest": 2,
	"internal/store/sqlite":    3,
	"internal/store/postgres":  3,
	// A summarize run's release notes, and an eval run's reports, both
	// writing their JSON through jsonout.
	"internal/jsonout":    2,
	"internal/changelog":  3,
	"internal/evalreport": 3,

	// The provider-neutral types, then one package per wire format.
	"internal/provider":           4,
	"internal/provider/openai":    5,
	"internal/provider/anthropic": 5,
	"internal/provider/offline":   5,

	"internal/engine": 5, "internal/key": 5, "internal/models": 5, "internal/dataset": 5, "internal/prompt": 5,
	"internal/lease": 5, "internal/gitobjects": 5, "internal/revision": 5, "internal/iostreams": 5,

	// A promptfoo config read into a dataset: above dataset, whose types it fills.
	"internal/dataset/promptfoo": 6,

	"internal/score": 6, "internal/history": 6, "internal/forgeapi": 6, "internal/batchrun": 6, "internal/sharedlimit": 6, "internal/fakeprovider": 6,

	// A configured model and the one place its engine is built: above the
	// engine, the models table, batch runs and shared limits it joins,
	// below the pipelines that send to it.
	"internal/target": 7,
	// Benchmarks of real digest processes against one database: tests
	// alone, which run the built binary and import the fake provider.
	"internal/fleetbench": 7,

	"internal/summarize": 8, "internal/eval": 8,
	"internal/cmdutil": 9,
	"cmd":              10,
	"":                 11, // main
}

// upward are the imports allowed to point up or sideways, each with why.
var upward = map[[2]string]string{
	// The offline model reads the prompt a hosted model would be sent.
	{"internal/provider/offline", "internal/prompt"}: "the offline model parses digest's own prompt",
}

// only restricts what some packages import at all, beyond their layer.
var only = map[string][]string{
	// The engine paces and retries any provider: it knows their common types only.
	"internal/engine": {"internal/provider"},
	// The provider-neutral types depend on nothing of digest's but the foundation.
	"internal/provider": {},
	// A target joins what a configured model is paced, priced and batched
	// by; cmd, not it, reads flags and builds clients.
	"internal/target": {"internal/batchrun", "internal/engine", "internal/models", "internal/provider", "internal/sharedlimit", "internal/store"},
	// The factory's type knows no provider or database: cmd builds it.
	"internal/cmdutil": {"internal/engine", "internal/iostreams", "internal/provider", "internal/store"},
	// The promptfoo import turns a config into dataset lines, and knows no more.
	"internal/dataset/promptfoo": {"internal/dataset"},
	// Release notes and eval reports share only how their JSON is written.
	"internal/changelog":  {"internal/jsonout"},
	"internal/evalreport": {"internal/jsonout"},
	"internal/jsonout":    {},
	"internal/store":      {},
	"internal/stats":      {},
}

// TestArchitecture fails when a package imports one above it, when the
// engine or the provider types import more than they may, when a package
// but offheap imports unsafe, or when a new package has no place in the
// table.
func TestArchitecture(t *testing.T) {
	imports := map[string][]string{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != ".") {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			return nil
		}
		pkg, err := build.ImportDir(path, 0)
		if _, none := err.(*build.NoGoError); none {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.ToSlash(path)
		if name == "." {
			name = ""
		}
		for _, imp := range pkg.Imports {
			if imp == "unsafe" && name != "internal/offheap" {
				t.Errorf("%s imports unsafe: memory the collector does not see is internal/offheap's alone", name)
			}
			if rest, ok := strings.CutPrefix(imp, module); ok {
				imports[name] = append(imports[name], strings.TrimPrefix(rest, "/"))
			}
		}
		if _, ok := imports[name]; !ok {
			imports[name] = nil
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(imports) < 30 {
		t.Fatalf("found %d packages: the walk missed the tree", len(imports))
	}
	for pkg, deps := range imports {
		layer, ok := layers[pkg]
		if !ok {
			t.Errorf("package %q has no layer: place it in the layers table", pkg)
			continue
		}
		for _, dep := range deps {
			if _, allowed := upward[[2]string{pkg, dep}]; allowed {
				continue
			}
			if layers[dep] >= layer {
				t.Errorf("%s (layer %d) imports %s (layer %d): a package imports only those below it", pkg, layer, dep, layers[dep])
			}
			if allowed, restricted := only[pkg]; restricted && layers[dep] > 0 && !slices.Contains(allowed, dep) {
				t.Errorf("%s imports %s: it may import only %v and the foundation", pkg, dep, allowed)
			}
		}
	}
	for pkg := range layers {
		if _, ok := imports[pkg]; !ok {
			t.Errorf("the layers table names %q, which is not a package", pkg)
		}
	}
}

// topLevel is everything the repository's top level may hold.
var topLevel = []string{"cmd", "internal", "testdata", "main.go", "go.mod", "go.sum", ".goreleaser.yaml", "README.md",
	"CHANGELOG.md", "architecture_test.go", ".ci", ".gitignore"}

// maxTracked is the largest file tracked outside testdata.
const maxTracked = 1 << 20

// TestNothingCompiledIsTracked fails when git tracks an executable binary
// (a `go test -c` output, a built digest), a file over 1 MiB outside
// testdata, or anything at the top level beyond topLevel.
func TestNothingCompiledIsTracked(t *testing.T) {
	out, err := exec.Command("git", "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout (%v): nothing to check", err)
	}
	files := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if len(files) < 100 {
		t.Fatalf("git tracks %d files: the listing missed the tree", len(files))
	}
	for _, f := range files {
		top, _, _ := strings.Cut(f, "/")
		if !slices.Contains(topLevel, top) {
			t.Errorf("%s is tracked at the top level, which holds only %s", top, strings.Join(topLevel, " "))
		}
		fi, err := os.Lstat(f)
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the work tree, or a symlink
		}
		if fi.Size() > maxTracked && top != "testdata" && !strings.Contains(f, "/testdata/") {
			t.Errorf("%s is %d bytes: files over 1 MiB belong in testdata, or out of the repository", f, fi.Size())
		}
		if head, err := readHead(f); err == nil && isExecutable(head) {
			t.Errorf("%s is a compiled executable: build outputs are never committed (git rm --cached %s)", f, f)
		}
	}
}

// TestExecutablesAreRecognized: the check above knows a compiled binary
// (this test's own) from the sources beside it.
func TestExecutablesAreRecognized(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]bool{self: true, "README.md": false, "go.sum": false, "architecture_test.go": false} {
		head, err := readHead(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := isExecutable(head); got != want {
			t.Errorf("isExecutable(%s) = %v, want %v", path, got, want)
		}
	}
}

// readHead is the first bytes of a file, enough for its magic number.
func readHead(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	head := make([]byte, 4)
	n, err := io.ReadFull(f, head)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		err = nil
	}
	return head[:n], err
}

// isExecutable reports whether head starts an ELF, Mach-O or PE file.
func isExecutable(head []byte) bool {
	for _, magic := range [][]byte{{0x7f, 'E', 'L', 'F'}, {0xfe, 0xed, 0xfa, 0xce}, {0xfe, 0xed, 0xfa, 0xcf},
		{0xce, 0xfa, 0xed, 0xfe}, {0xcf, 0xfa, 0xed, 0xfe}, {0xca, 0xfe, 0xba, 0xbe}, {'M', 'Z'}} {
		if bytes.HasPrefix(head, magic) {
			return true
		}
	}
	return false
}
