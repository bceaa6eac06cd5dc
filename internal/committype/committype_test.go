package committype

import (
	"slices"
	"testing"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		message string
		paths   []string
		want    Kind
	}{
		// Conventional Commits, as cobra and its kin write them.
		{"feat: add NoDuplicateArgs validator", []string{"args.go", "args_test.go"}, Kind{Type: "feat"}},
		{"fix: correct flag parsing for persistent flags", []string{"command.go"}, Kind{Type: "fix"}},
		{"fix(completion): escape special characters in fish", []string{"fish_completions.go"}, Kind{Type: "fix", Scope: "completion"}},
		{"feat(bash)!: drop bash completion v1", []string{"bash_completions.go"}, Kind{Type: "feat", Scope: "bash", Breaking: true}},
		{"refactor!: remove deprecated Command.SetOutput", []string{"command.go"}, Kind{Type: "refactor", Breaking: true}},
		{"docs: fix typo in user guide", []string{"site/content/user_guide.md"}, Kind{Type: "docs"}},
		{"docs(readme): mention the Go version supported", []string{"README.md"}, Kind{Type: "docs", Scope: "readme"}},
		{"test: cover Find with hidden subcommands", []string{"command_test.go"}, Kind{Type: "test"}},
		{"ci: run golangci-lint on pull requests", []string{".github/workflows/test.yml"}, Kind{Type: "ci"}},
		{"build: require Go 1.21", []string{"go.mod"}, Kind{Type: "build"}},
		{"chore: tidy up the Makefile", []string{"Makefile"}, Kind{Type: "chore"}},
		{"perf: avoid recomputing flag sets on every call", []string{"command.go"}, Kind{Type: "perf"}},
		{"style: gofmt", []string{"command.go"}, Kind{Type: "style"}},
		{"revert: \"feat: add NoDuplicateArgs\"", []string{"args.go"}, Kind{Type: "revert"}},
		{"Feat: Capitalised type is still a type", nil, Kind{Type: "feat"}},
		{"FIX(Parser): shouting works too", nil, Kind{Type: "fix", Scope: "Parser"}},
		{"feature: alias for feat", nil, Kind{Type: "feat"}},
		{"fix: handle nil context\n\nBREAKING CHANGE: Execute now needs a context.", nil, Kind{Type: "fix", Breaking: true}},
		{"feat: add hooks\n\nBREAKING-CHANGE: hooks run before flags are parsed.", nil, Kind{Type: "feat", Breaking: true}},
		{"fix: a mention of BREAKING CHANGE: in the subject is no footer", nil, Kind{Type: "fix"}},
		{"fix:missing space after the colon", nil, Kind{Type: "fix"}},
		{"wip: not a type, not an area", []string{"command.go"}, Kind{Type: "other"}},

		// Dependabot and Renovate.
		{"build(deps): bump github.com/spf13/pflag from 1.0.5 to 1.0.6", []string{"go.mod", "go.sum"}, Kind{Type: "build", Scope: "deps"}},
		{"chore(deps): bump actions/checkout from 3 to 4", []string{".github/workflows/test.yml"}, Kind{Type: "build", Scope: "deps"}},
		{"chore(deps-dev): bump eslint from 8.57.0 to 9.1.0 in /web", []string{"web/package.json", "web/package-lock.json"}, Kind{Type: "build", Scope: "deps-dev"}},
		{"Bump golang.org/x/net from 0.24.0 to 0.25.0", []string{"go.mod", "go.sum"}, Kind{Type: "build"}},
		{"Bump the gomod group with 3 updates", []string{"go.mod", "go.sum"}, Kind{Type: "build"}},
		{"Update module github.com/stretchr/testify to v1.10.0", []string{"go.mod", "go.sum"}, Kind{Type: "build"}},
		{"fix(deps): update module golang.org/x/text to v0.21.0 (#1402)", []string{"go.mod", "go.sum"}, Kind{Type: "fix", Scope: "deps"}},
		{"chore(deps): update dependency typescript to v5.6.3", []string{"package.json"}, Kind{Type: "build", Scope: "deps"}},
		{"Update actions/setup-go action to v5", []string{".github/workflows/ci.yml"}, Kind{Type: "build"}},
		{"[Security] Bump rexml from 3.2.5 to 3.3.9", []string{"Gemfile.lock"}, Kind{Type: "build"}},

		// go-git: "area: sub/area, what".
		{"plumbing: format/packfile, fix delta offset overflow", []string{"plumbing/format/packfile/delta.go"}, Kind{Type: "fix", Scope: "plumbing"}},
		{"plumbing: format/packfile, Pool bufio.Reader in patchDeltaWriter", []string{"plumbing/format/packfile/patch_delta.go"}, Kind{Type: "other", Scope: "plumbing"}},
		{"git: worktree, add cherry-picking", []string{"worktree_commit.go", "worktree_commit_test.go"}, Kind{Type: "feat", Scope: "git"}},
		{"storage: filesystem, speed up object lookup with a cache", []string{"storage/filesystem/object.go"}, Kind{Type: "perf", Scope: "storage"}},
		{"plumbing: transport, refactor the loader into its own package", []string{"plumbing/transport/loader.go", "plumbing/transport/file/loader.go"}, Kind{Type: "refactor", Scope: "plumbing"}},
		{"utils: merkletrie, reduce allocations in the iterator", []string{"utils/merkletrie/iter.go"}, Kind{Type: "perf", Scope: "utils"}},
		{"plumbing: protocol/packp/sideband, Test the muxer packet size limit.", []string{"plumbing/protocol/packp/sideband/muxer_test.go"}, Kind{Type: "test", Scope: "plumbing"}},
		{"_examples: add a clone with progress example", []string{"_examples/progress/main.go"}, Kind{Type: "feat", Scope: "_examples"}},
		{"build: bump golang.org/x/crypto from 0.31.0 to 0.35.0", []string{"go.mod", "go.sum"}, Kind{Type: "build"}},
		{"docs: update COMPATIBILITY.md for sha256", []string{"COMPATIBILITY.md"}, Kind{Type: "docs"}},
		{"Merge pull request #2331 from someone/sideband-limit\n\nplumbing: protocol/packp/sideband, fix the muxer packet size", nil, Kind{Type: "fix", Scope: "plumbing"}},
		{"Merge pull request #12 from someone/topic\n\nUpdate things", nil, Kind{Type: "other"}},
		{"Merge pull request #1510 from someone/feat-x\n\nfeat!: rework the transport API", []string{"plumbing/transport/transport.go"}, Kind{Type: "feat", Breaking: true}},

		// git.git: "area: what", with areas that are paths and prose words.
		{"builtin/mv: fix a leak on the error path", []string{"builtin/mv.c"}, Kind{Type: "fix", Scope: "builtin/mv"}},
		{"fetch: teach --negotiate-only to report its result", []string{"builtin/fetch.c", "t/t5702-protocol-v2.sh"}, Kind{Type: "feat", Scope: "fetch"}},
		{"doc: describe the url-parse builtin", []string{"Documentation/git-url-parse.adoc"}, Kind{Type: "docs"}},
		{"t5516: fix test order flakiness", []string{"t/t5516-fetch-push.sh"}, Kind{Type: "test", Scope: "t5516"}},
		{"packfile,delta: drop the cast wrappers", []string{"packfile.c", "delta.h"}, Kind{Type: "other", Scope: "packfile"}},
		{"ci: raise the PID limit for private repositories", []string{"ci/run-build-and-tests.sh"}, Kind{Type: "ci"}},
		{"gitlab-ci: migrate Windows builds away from Chocolatey", []string{".gitlab-ci.yml", "ci/install-dependencies.sh"}, Kind{Type: "ci", Scope: "gitlab-ci"}},
		{"The 7th batch", []string{"Documentation/RelNotes/2.56.0.adoc"}, Kind{Type: "docs"}},
		{"Note: this is prose, not an area", []string{"builtin/log.c"}, Kind{Type: "other"}},
		{"object-file: simplify the loose object writer", []string{"object-file.c"}, Kind{Type: "refactor", Scope: "object-file"}},
		{"pack-bitmap: speed up reachability checks", []string{"pack-bitmap.c"}, Kind{Type: "perf", Scope: "pack-bitmap"}},
		{"Revert \"pack-bitmap: speed up reachability checks\"\n\nThis reverts commit 0123456789abcdef0123456789abcdef01234567.", []string{"pack-bitmap.c"}, Kind{Type: "revert"}},
		{"Merge branch 'ps/odb-sources'\n\n* ps/odb-sources:\n  odb: drop the whence field", []string{"odb.c"}, Kind{Type: "other"}},
		{"Merge branch 'tb/path-walk'\n\n'git pack-objects --path-walk' learned to add delta islands.\n\n* tb/path-walk:\n  pack-objects: add islands", []string{"builtin/pack-objects.c"}, Kind{Type: "other"}},
		{"treewide: convert users of `whence` to the new source field", []string{"builtin/cat-file.c", "odb.c"}, Kind{Type: "refactor", Scope: "treewide"}},
		{"setup: drop redundant configuration of the repository flag", []string{"setup.c"}, Kind{Type: "refactor", Scope: "setup"}},
		{"environment: stop using `the_repository` in `is_bare_repository()`", []string{"environment.c", "attr.c"}, Kind{Type: "refactor", Scope: "environment"}},
		{"Merge branch 'feature' into 'main'\n\nfix: keep the cache warm\n\nSee merge request group/project!123", nil, Kind{Type: "fix"}},
		{"Git 2.48", []string{"GIT-VERSION-GEN", "Documentation/RelNotes/2.48.0.adoc"}, Kind{Type: "other"}},

		// Kubernetes and plain subjects, decided by paths or verbs.
		{"Add validation for the pod spec's hostname", []string{"pkg/apis/core/validation/validation.go"}, Kind{Type: "feat"}},
		{"Fix kubelet crash when the node has no CPU info", []string{"pkg/kubelet/cm/cpumanager/policy.go"}, Kind{Type: "fix"}},
		{"Fix typo in README", []string{"README.md"}, Kind{Type: "docs"}},
		{"Add unit tests for the scheduler cache", []string{"pkg/scheduler/internal/cache/cache_test.go"}, Kind{Type: "test"}},
		{"Add e2e tests for volume expansion", []string{"pkg/volume/expand.go", "test/e2e/storage/expand.go"}, Kind{Type: "test"}},
		{"Update GitHub Actions workflow", []string{".github/workflows/ci.yml"}, Kind{Type: "ci"}},
		{"Update dependencies", []string{"go.mod", "go.sum", "vendor/modules.txt"}, Kind{Type: "build"}},
		{"Cleanup unused helpers in the apiserver", []string{"staging/src/k8s.io/apiserver/pkg/util/helpers.go"}, Kind{Type: "refactor"}},
		{"Rename the flag to --max-pods", []string{"cmd/kubelet/app/options/options.go"}, Kind{Type: "refactor"}},
		{"Optimize the endpoint slice controller", []string{"pkg/controller/endpointslice/controller.go"}, Kind{Type: "perf"}},
		{"Release v1.2.0", []string{"VERSION"}, Kind{Type: "chore"}},
		{"Bump version from 1.2 to 1.3", []string{"VERSION"}, Kind{Type: "chore"}},
		{"Misc tweaks", []string{"pkg/x/x.go"}, Kind{Type: "other"}},
		{"", nil, Kind{Type: "other"}},
		{"Merge branch 'main' into topic", nil, Kind{Type: "other"}},
		{"Merge tag 'v2.3.0'", nil, Kind{Type: "other"}},
	}
	for _, tt := range tests {
		t.Run(tt.message, func(t *testing.T) {
			if got := Classify(tt.message, tt.paths); got != tt.want {
				t.Errorf("Classify = %+v, want %+v", got, tt.want)
			}
		})
	}
	if len(tests) < 60 {
		t.Errorf("only %d cases", len(tests))
	}
}

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"feat": "feat", "Feat": "feat", " FIX ": "fix", "feature": "feat", "Features": "feat", "bugfix": "fix",
		"deps": "build", "dependencies": "build", "tests": "test", "documentation": "docs", "doc": "docs",
		"other": "other", "revert": "revert", "style": "style", "chore": "chore", "ci": "ci", "perf": "perf",
	} {
		got, ok := Normalize(in)
		if !ok || got != want || !Valid(in) {
			t.Errorf("Normalize(%q) = %q, %v, want %q", in, got, ok, want)
		}
	}
	for _, bad := range []string{"", "feat:", "feats!", "bug", "improvement", "fix(x)", "misc", "release", "security"} {
		if got, ok := Normalize(bad); ok || Valid(bad) {
			t.Errorf("Normalize(%q) = %q, true; want invalid", bad, got)
		}
	}
	if !slices.Equal(Types, []string{"feat", "fix", "perf", "refactor", "docs", "test", "build", "ci", "chore", "revert", "style", "other"}) {
		t.Errorf("Types = %v", Types)
	}
}

func TestDependency(t *testing.T) {
	tests := []struct {
		subject, name, from, to string
		ok                      bool
	}{
		{"Bump golang.org/x/net from 0.24.0 to 0.25.0", "golang.org/x/net", "0.24.0", "0.25.0", true},
		{"build(deps): bump github.com/spf13/pflag from 1.0.5 to 1.0.6", "github.com/spf13/pflag", "1.0.5", "1.0.6", true},
		{"chore(deps-dev): bump eslint from 8.57.0 to 9.1.0 in /web", "eslint", "8.57.0", "9.1.0", true},
		{"Bump actions/checkout from 3 to 4 (#118)", "actions/checkout", "3", "4", true},
		{"[Security] Bump rexml from 3.2.5 to 3.3.9", "rexml", "3.2.5", "3.3.9", true},
		{"Update module github.com/stretchr/testify to v1.10.0", "github.com/stretchr/testify", "", "v1.10.0", true},
		{"fix(deps): update module golang.org/x/text to v0.21.0 (#1402)", "golang.org/x/text", "", "v0.21.0", true},
		{"chore(deps): update dependency typescript to v5.6.3", "typescript", "", "v5.6.3", true},
		{"Update actions/setup-go action to v5", "actions/setup-go", "", "v5", true},
		{"chore(deps): update golang.org/x/exp digest to 7588d65", "golang.org/x/exp", "", "7588d65", true},
		{"build: Update module golang.org/x/net to v0.58.0", "golang.org/x/net", "", "v0.58.0", true},
		{"Bump the gomod group with 3 updates", "", "", "", false},
		{"Bump version from 1.2 to 1.3", "", "", "", false},
		{"Update dependencies", "", "", "", false},
		{"fix: handle empty requests", "", "", "", false},
		{"", "", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.subject, func(t *testing.T) {
			name, from, to, ok := Dependency(tt.subject)
			if name != tt.name || from != tt.from || to != tt.to || ok != tt.ok {
				t.Errorf("Dependency = %q, %q, %q, %v; want %q, %q, %q, %v", name, from, to, ok, tt.name, tt.from, tt.to, tt.ok)
			}
		})
	}
}

func FuzzClassify(f *testing.F) {
	for _, s := range []string{
		"feat(x)!: y", "fix: z\n\nBREAKING CHANGE: w", "Revert \"a\"", "Merge pull request #1 from a/b\n\nfix: c",
		"plumbing: format/packfile, fix x", "Bump a from 1 to 2", "chore(deps): update module a to v2", "Note: x", "(: :)", "a,b,: c",
	} {
		f.Add(s, "go.mod")
		f.Add(s, "docs/x.md")
	}
	f.Fuzz(func(t *testing.T, message, p string) {
		k := Classify(message, []string{p})
		if !slices.Contains(Types, k.Type) {
			t.Fatalf("Classify(%q) = %+v: type not in Types", message, k)
		}
		if got, ok := Normalize(k.Type); !ok || got != k.Type {
			t.Fatalf("type %q does not normalize to itself", k.Type)
		}
		Dependency(message)
	})
}

// TestConventionalPrefixDecides: whatever the paths and the verbs say, a
// Conventional Commits prefix of a known type gives the type, except that
// chore and build updates of dependencies are build.
func TestConventionalPrefixDecides(t *testing.T) {
	pathSets := [][]string{nil, {"README.md"}, {"x_test.go"}, {".github/workflows/ci.yml"}, {"go.mod", "go.sum"}, {"cmd/root.go"}}
	names := append([]string{}, Types...)
	for alias := range aliases {
		names = append(names, alias)
	}
	for _, name := range names {
		want, _ := Normalize(name)
		if want == "other" {
			continue
		}
		for _, scope := range []string{"", "(cli)", "(deps)"} {
			for _, text := range []string{"add tests for the parser", "bump x from 1 to 2", "speed up the walk", "Revert \"y\""} {
				subject := name + scope + ": " + text
				for _, paths := range pathSets {
					got := Classify(subject, paths)
					expect := want
					if scope == "(deps)" && (want == "chore" || want == "build") {
						expect = "build"
					}
					if got.Type != expect {
						t.Errorf("Classify(%q, %q) = %q, want %q", subject, paths, got.Type, expect)
					}
				}
			}
		}
	}
}

func TestDescription(t *testing.T) {
	for in, want := range map[string]string{
		"fix(api)!: handle empty bodies":        "Handle empty bodies",
		"feat: serve the first endpoint":        "Serve the first endpoint",
		"builtin/mv: fix a leak":                "Fix a leak",
		"plumbing: format/packfile, fix delta":  "Format/packfile, fix delta",
		"plumbing: format/packfile, Add X":      "Add X",
		"git: worktree, Fix a leak, again":      "Fix a leak, again",
		"Note: this is prose":                   "Note: this is prose",
		"Add a thing":                           "Add a thing",
		"wip(x): not a type":                    "wip(x): not a type",
		"Bump golang.org/x/net from 1.0 to 1.1": "Bump golang.org/x/net from 1.0 to 1.1",
		"api: ça marche":                        "Ça marche",
	} {
		if got := Description(in); got != want {
			t.Errorf("Description(%q) = %q, want %q", in, got, want)
		}
	}
}
