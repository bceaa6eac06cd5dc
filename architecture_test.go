package main

import (
	"go/build"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/digest-cli/digest"

// layers places every package of the module: a package imports only
// packages of lower layers. Layer 0 is the foundation every layer may use
// (text safety, dates, memory helpers, the tokenizer, statistics), which
// is how report and the stores can escape what they print without
// importing anything else of digest's.
var layers = map[string]int{
	"internal/textsafe": 0, "internal/approxidate": 0, "internal/offheap": 0, "internal/memlimit": 0,
	"internal/redact": 0, "internal/stats": 0, "internal/tokenizer": 0, "internal/gittest": 0, "internal/pgtest": 0,
	"internal/forge": 0, "internal/gitattributes": 0, "internal/userdiff": 0,
	"internal/committype": 0, "internal/linediff": 0, "internal/spend": 0, "internal/calibrate": 0,
	// Release notes' formats and rules: merge messages, people, a
	// repository's release.yml, version order and bumps.
	"internal/mailmap": 0, "internal/versionsort": 0, "internal/mergemsg": 0, "internal/people": 0,
	"internal/releaseyml": 0, "internal/bump": 0, "internal/forgeapi/forgetest": 0,
	// The object store raw request and response bodies go to (--payloads).
	"internal/payloads": 0,

	"internal/store":           1,
	"internal/store/sqlstore":  2,
	"internal/store/storetest": 2,
	"internal/store/sqlite":    3,
	"internal/store/postgres":  3,
	"internal/report":          3,

	// The provider-neutral types, then one package per wire format.
	"internal/provider":           4,
	"internal/provider/openai":    5,
	"internal/provider/anthropic": 5,
	"internal/provider/offline":   5,

	"internal/engine": 5, "internal/key": 5, "internal/models": 5, "internal/dataset": 5, "internal/prompt": 5,
	"internal/lease": 5, "internal/gitobjects": 5, "internal/revision": 5, "internal/iostreams": 5,

	"internal/score": 6, "internal/history": 6, "internal/forgeapi": 6, "internal/batchrun": 6, "internal/sharedlimit": 6, "internal/fakeprovider": 6,

	// A configured model and the one place its engine is built: above the
	// engine, the models table, batch runs and shared limits it joins,
	// below the pipelines that send to it.
	"internal/target": 7,

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
	"internal/report":  {},
	"internal/store":   {},
	"internal/stats":   {},
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
