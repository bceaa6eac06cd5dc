package history_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/gittest"
	"github.com/digest-cli/digest/internal/history"
)

// gitRepo builds a history with the git binary itself, so that it has what
// only git writes: reflogs, ORIG_HEAD, upstream configuration.
type gitRepo struct {
	t     *testing.T
	root  string // holds work, origin.git, fork.git and other
	env   []string
	clock time.Time
}

func (g *gitRepo) dir(name string) string { return filepath.Join(g.root, name) }

// run runs git in a directory under root, each command an hour after the
// one before, so that commits and reflog entries have distinct times.
func (g *gitRepo) run(in string, args ...string) string {
	g.t.Helper()
	g.clock = g.clock.Add(time.Hour)
	date := fmt.Sprintf("@%d +0000", g.clock.Unix())
	cmd := exec.Command("git", args...)
	cmd.Dir = g.dir(in)
	cmd.Env = append(slices.Clone(g.env), "GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date,
		"GIT_AUTHOR_NAME=Ada", "GIT_AUTHOR_EMAIL=ada@example.com", "GIT_COMMITTER_NAME=Ada", "GIT_COMMITTER_EMAIL=ada@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		g.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func (g *gitRepo) write(in, path, content string) {
	g.t.Helper()
	full := filepath.Join(g.dir(in), filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		g.t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		g.t.Fatal(err)
	}
}

func (g *gitRepo) commit(in, msg string, files ...string) string {
	g.t.Helper()
	for i := 0; i+1 < len(files); i += 2 {
		g.write(in, files[i], files[i+1])
	}
	g.run(in, "add", "-A")
	g.run(in, "commit", "-q", "-m", msg)
	return g.run(in, "rev-parse", "HEAD")
}

// newGitRepo builds "work": two merged branches, a lightweight and an
// annotated tag, an upstream it pulled from and is one commit ahead of, a
// fork to push to, resets and checkouts in its reflog. Its clock starts
// 200 hours ago so that relative reflog dates select within it.
func newGitRepo(t *testing.T) *gitRepo {
	g := newGitRoot(t)
	g.run("work", "init", "-q", "-b", "main")
	g.commit("work", "Initial commit", "README.md", "# work\n", "docs/guide.md", "guide\n", "src/main.go", "package main\n")
	g.commit("work", "util: add strings helpers", "src/util/strings.go", "package util\n")
	g.run("work", "tag", "v1")
	g.commit("work", "docs: explain the guide", "docs/guide.md", "guide\nmore\n")
	g.run("work", "tag", "-a", "v2", "-m", "release 2")
	g.run("work", "checkout", "-q", "-b", "feature")
	g.commit("work", "util: test strings", "src/util/strings_test.go", "package util\n")
	g.commit("work", "lib: add a.c (fix #12)", "lib/a.c", "int a;\n")
	g.run("work", "checkout", "-q", "main")
	g.commit("work", "readme: mention the feature", "README.md", "# work\nfeature\n")
	g.run("work", "merge", "-q", "--no-ff", "-m", "Merge branch 'feature'", "feature")
	g.commit("work", "src: add Foo.GO", "src/Foo.GO", "package src\n")
	g.run("work", "checkout", "-q", "-b", "topic", "HEAD~1")
	g.commit("work", "build: add a Makefile", "Makefile", "all:\n")
	g.run("work", "checkout", "-q", "main")
	g.commit("work", "docs: api reference", "docs/api/ref.md", "ref\n")
	g.run("work", "merge", "-q", "--no-ff", "-m", "Merge branch 'topic'", "topic")
	g.run("work", "tag", "-a", "v3", "-m", "release 3", "feature") // a release branch's tag
	g.run("work", "tag", "v4")                                     // a tag on a merge

	g.run("", "init", "-q", "--bare", "-b", "main", "origin.git")
	g.run("", "init", "-q", "--bare", "fork.git")
	g.run("work", "remote", "add", "origin", "../origin.git")
	g.run("work", "remote", "add", "fork", "../fork.git")
	g.run("work", "push", "-q", "-u", "origin", "main", "feature")
	g.run("work", "push", "-q", "fork", "feature")
	g.run("work", "config", "branch.feature.pushRemote", "fork")
	g.run("", "clone", "-q", "origin.git", "other")
	g.commit("other", "docs: a weird name", "weird name.txt", "w\n")
	g.commit("other", "ci: a workflow", ".github/workflows/ci.yml", "on: push\n")
	g.run("other", "push", "-q", "origin", "main")
	g.run("work", "pull", "-q", "--ff-only")
	g.run("work", "reset", "-q", "--hard", "HEAD~1")
	g.run("work", "reset", "-q", "--hard", "ORIG_HEAD")
	g.commit("work", "local: an unpushed change", "src/util/strings.go", "package util\n\nfunc X() {}\n")
	g.run("work", "checkout", "-q", "feature")
	g.run("work", "checkout", "-q", "main")
	g.run("work", "checkout", "-q", "--detach", "HEAD~1")
	g.run("work", "checkout", "-q", "main")
	return g
}

// newGitRoot is an empty directory "work" for git to init, with git's
// configuration and digest's the same (none but the repository's), its
// clock 200 hours back so that relative reflog dates select within it.
func newGitRoot(t *testing.T) *gitRepo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	g := &gitRepo{t: t, root: t.TempDir(), env: gittest.GitEnv(t), clock: time.Now().Add(-200 * time.Hour).Truncate(time.Second)}
	for _, kv := range g.env {
		if k, v, _ := strings.Cut(kv, "="); k == "GIT_CONFIG_GLOBAL" || k == "GIT_CONFIG_NOSYSTEM" || k == "HOME" || k == "XDG_CONFIG_HOME" {
			t.Setenv(k, v)
		}
	}
	if err := os.Mkdir(g.dir("work"), 0o755); err != nil {
		t.Fatal(err)
	}
	return g
}

// revList is `git rev-list --no-merges --full-history ARGS` in dir, or an
// error when git refuses.
func (g *gitRepo) revList(dir string, args ...string) ([]string, error) {
	cmd := exec.Command("git", append([]string{"rev-list", "--no-merges", "--full-history"}, args...)...)
	cmd.Dir = dir
	cmd.Env = g.env
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		return nil, fmt.Errorf("%v: %s", err, stderr)
	}
	return strings.Fields(string(out)), nil
}

func digestWalk(r *history.Repo, opts history.WalkOptions) ([]string, error) {
	var got []string
	err := r.Walk(context.Background(), opts, func(c history.Commit) error {
		got = append(got, c.Hash)
		return nil
	})
	return got, err
}

// TestRevisionsAsGitReadsThem holds digest's --rev to `git rev-list`: the
// same commits in the same order, or a refusal where git refuses too. Where
// git answers and digest refuses, the row says why.
func TestRevisionsAsGitReadsThem(t *testing.T) {
	g := newGitRepo(t)
	work := g.dir("work")
	short := g.run("work", "rev-parse", "--short=7", "HEAD~2")
	full := g.run("work", "rev-parse", "main~3")
	describe := g.run("work", "describe", "--tags", "--long", "feature")
	// A time between the pull and the first reset: main@{that} is the pulled main.
	pulled := g.run("work", "log", "-g", "-1", "--format=%gd %ct", "--grep-reflog=pull", "main")
	var secs int64
	if _, err := fmt.Sscanf(pulled[strings.LastIndexByte(pulled, ' ')+1:], "%d", &secs); err != nil {
		t.Fatalf("pull entry %q: %v", pulled, err)
	}
	afterPull := time.Unix(secs+1800, 0).UTC().Format("2006-01-02 15:04:05 +0000")
	ago := fmt.Sprintf("%d minutes ago", int(time.Since(time.Unix(secs, 0)).Minutes())-30)

	r := open(t, work)
	defer r.Close()
	answered := 0
	for _, tt := range []struct {
		args []string
		// refuse is what digest says instead of answering; with gitAnswers
		// git answers where digest refuses (the reason is in the comment).
		refuse     string
		gitAnswers bool
	}{
		{args: []string{"HEAD"}},
		{args: []string{"main"}},
		{args: []string{"@"}},
		{args: []string{"@~2"}},
		{args: []string{"feature"}},
		{args: []string{"heads/feature"}},
		{args: []string{"refs/heads/topic"}},
		{args: []string{"origin/main"}},
		{args: []string{"v1"}},
		{args: []string{"v2"}},
		{args: []string{"v2^{}"}},
		{args: []string{"v2^{commit}"}},
		{args: []string{"v2^{tag}"}},
		{args: []string{"v1..v2"}},
		{args: []string{"HEAD~3"}},
		{args: []string{"HEAD~3^2"}},
		{args: []string{"main~3^2~1"}},
		{args: []string{"HEAD^0"}},
		{args: []string{short}},
		{args: []string{full}},
		{args: []string{strings.ToUpper(full)}},
		{args: []string{describe}},
		{args: []string{"ORIG_HEAD"}},
		{args: []string{"FETCH_HEAD"}},
		{args: []string{"FETCH_HEAD..HEAD"}},
		{args: []string{"main@{1}..main"}},
		{args: []string{"main@{3}"}},
		{args: []string{"main@{0}"}},
		{args: []string{"HEAD@{2}"}},
		{args: []string{"@{1}"}},
		{args: []string{"@{-1}"}},
		{args: []string{"@{-2}"}},
		{args: []string{"@{-3}..@{-2}"}},
		{args: []string{"@{u}"}},
		{args: []string{"@{upstream}..HEAD"}},
		{args: []string{"main@{U}"}},
		{args: []string{"@{push}"}},
		{args: []string{"HEAD@{u}..HEAD"}},
		{args: []string{"feature@{u}"}},
		{args: []string{"feature@{push}"}, refuse: "cannot push"},
		{args: []string{"topic@{u}"}, refuse: "no upstream"},
		{args: []string{"main@{" + afterPull + "}"}},
		{args: []string{"main@{" + ago + "}"}},
		{args: []string{"main@{1.year.ago}"}},
		{args: []string{"HEAD~2^!"}},
		{args: []string{"HEAD~2^@"}},
		{args: []string{"HEAD~2^-1"}},
		{args: []string{"HEAD~3^-2"}},
		{args: []string{"HEAD~2^-"}},
		{args: []string{"^HEAD~2^@", "HEAD"}},
		{args: []string{":/util"}},
		{args: []string{":/^docs"}},
		{args: []string{":/!-util"}},
		{args: []string{"main^{/^docs: explain}"}},
		{args: []string{"main...feature"}},
		{args: []string{"topic...origin/main"}},
		{args: []string{"v1..."}},
		{args: []string{"...v1"}},
		{args: []string{"v2.."}},
		{args: []string{"..v2"}},
		{args: []string{"^v1", "feature", "topic"}},
		{args: []string{"feature", "^main"}},
		// Refused by both.
		{args: []string{"no-such-branch"}, refuse: `unknown revision "no-such-branch"`},
		{args: []string{"HEAD~100"}, refuse: "goes past the root commit"},
		{args: []string{"MERGE_HEAD"}, refuse: `unknown revision "MERGE_HEAD"`},
		{args: []string{"../../../../etc/passwd"}, refuse: `unknown revision`},
		{args: []string{"heads/.lock"}, refuse: `unknown revision`},
		{args: []string{"refs/heads/../../HEAD"}, refuse: `unknown revision`},
		{args: []string{"HEAD^3"}, refuse: "not a parent 3"},
		{args: []string{"main@{99}"}, refuse: "has only"},
		{args: []string{"@{-99}"}, refuse: "checkout(s)"},
		{args: []string{"v1^{blob}"}, refuse: "not a blob"},
		{args: []string{":/no such message anywhere"}, refuse: "no commit's message matches"},
		{args: []string{"HEAD~2^-3"}, refuse: "not a parent 3"},
		{args: []string{"abcd"}, refuse: `unknown revision "abcd"`},
		// git lists nothing for trees and files (rev-list walks commits
		// only); digest says they are not commits.
		{args: []string{"HEAD:README.md"}, refuse: "not a commit", gitAnswers: true},
		{args: []string{"v2^{tree}"}, refuse: "not a commit", gitAnswers: true},
		{args: []string{":README.md"}, refuse: "in the index", gitAnswers: true},
		// git reads a day alone as that day at the current time of day.
		{args: []string{"main@{" + time.Now().UTC().Format(time.DateOnly) + "}"}, refuse: "current time of day", gitAnswers: true},
	} {
		want, gitErr := g.revList(work, tt.args...)
		got, err := digestWalk(r, history.WalkOptions{Revs: tt.args})
		switch {
		case tt.refuse != "":
			if err == nil || !strings.Contains(err.Error(), tt.refuse) {
				t.Errorf("%q: digest gave %v, %v; want a refusal saying %q", tt.args, got, err, tt.refuse)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("%q: the refusal takes several lines: %q", tt.args, err)
			}
			if (gitErr == nil) != tt.gitAnswers {
				t.Errorf("%q: git answered %v (error %v); the row says git answers: %v", tt.args, want, gitErr, tt.gitAnswers)
			}
		case gitErr != nil:
			t.Errorf("%q: git refuses (%v) but the row expects an answer", tt.args, gitErr)
		case err != nil:
			t.Errorf("%q: digest refused: %v; git gives %d commits", tt.args, err, len(want))
		case !slices.Equal(got, want):
			t.Errorf("%q:\n got %v\nwant %v", tt.args, abbrev(got), abbrev(want))
		case len(want) > 0:
			answered++
		}
	}
	// A table where git selects nothing would hold digest to nothing.
	if answered < 50 {
		t.Errorf("only %d revisions selected commits in both", answered)
	}
}

func abbrev(hashes []string) []string {
	out := make([]string, len(hashes))
	for i, h := range hashes {
		out[i] = h[:7]
	}
	return out
}

// TestPathspecsAsGitReadsThem holds digest's pathspecs to `git rev-list
// --full-history -- PATHSPEC`, from the root and from subdirectories, with
// and without magic.
func TestPathspecsAsGitReadsThem(t *testing.T) {
	g := newGitRepo(t)
	work := g.dir("work")
	r := open(t, work)
	defer r.Close()
	answered := 0
	for _, tt := range []struct {
		in    string // the directory digest and git run in, under work
		specs []string
		// refuse is what digest says instead; with gitAnswers git answers.
		refuse     string
		gitAnswers bool
	}{
		{in: "", specs: []string{"src"}},
		{in: "", specs: []string{"src/"}},
		{in: "", specs: []string{"src/util"}},
		{in: "", specs: []string{"*.md"}},
		{in: "", specs: []string{"docs/*.md"}},
		{in: "", specs: []string{"*.go"}},
		{in: "", specs: []string{"*_test.go"}},
		{in: "", specs: []string{"Makefile"}},
		{in: "", specs: []string{"weird name.txt"}},
		{in: "", specs: []string{".github"}},
		{in: "", specs: []string{"nothing-here"}},
		{in: "", specs: []string{"src", "docs"}},
		{in: "", specs: []string{":!*.md"}},
		{in: "", specs: []string{":^docs"}},
		{in: "", specs: []string{":(exclude)src/util"}},
		{in: "", specs: []string{"src", ":!src/util"}},
		{in: "", specs: []string{":(icase)readme.MD"}},
		{in: "", specs: []string{":(icase)SRC/foo.go"}},
		{in: "", specs: []string{":(glob)src/**/*.go"}},
		{in: "", specs: []string{":(glob)*.go"}},
		{in: "", specs: []string{":(glob)**/*.md"}},
		{in: "", specs: []string{":(literal)*.md"}},
		{in: "", specs: []string{":(icase,glob)SRC/**"}},
		{in: "", specs: []string{":(top)lib"}},
		{in: "", specs: []string{":/lib"}},
		{in: "src", specs: []string{"."}},
		{in: "src", specs: []string{"util"}},
		{in: "src", specs: []string{"*.go"}},
		{in: "src", specs: []string{".."}},
		{in: "src", specs: []string{"../docs"}},
		{in: "src", specs: []string{"../README.md"}},
		{in: "src", specs: []string{":(top)docs"}},
		{in: "src", specs: []string{":/docs"}},
		{in: "src", specs: []string{":!util"}},
		{in: "src", specs: []string{".", ":^util"}},
		{in: "src", specs: []string{":^../docs"}},
		{in: "src", specs: []string{":(glob)**/*.go"}},
		{in: "src", specs: []string{":(icase)UTIL"}},
		{in: "src", specs: []string{":(literal)util"}},
		{in: "docs", specs: []string{"api"}},
		{in: "docs", specs: []string{"*.md"}},
		{in: "docs/api", specs: []string{"../../src/util"}},
		{in: "docs", specs: []string{filepath.Join(work, "src", "util")}},
		// Refused by both.
		{in: "", specs: []string{".."}, refuse: "outside"},
		{in: "src", specs: []string{"../../x"}, refuse: "outside"},
		{in: "", specs: []string{":(nosuchmagic)x"}, refuse: "magic"},
		{in: "", specs: []string{"/"}, refuse: "outside"},
		// git selects by attributes; digest does not read them for pathspecs.
		{in: "", specs: []string{":(attr:diff)src"}, refuse: "attribute magic", gitAnswers: true},
	} {
		dir := filepath.Join(work, filepath.FromSlash(tt.in))
		want, gitErr := g.revList(dir, append([]string{"HEAD", "--"}, tt.specs...)...)
		var got []string
		paths, err := r.Pathspec(tt.specs, dir)
		if err == nil {
			got, err = digestWalk(r, history.WalkOptions{Paths: paths})
		}
		name := fmt.Sprintf("in %q: %q", tt.in, tt.specs)
		switch {
		case tt.refuse != "":
			if err == nil || !strings.Contains(err.Error(), tt.refuse) {
				t.Errorf("%s: digest gave %v, %v; want a refusal saying %q", name, got, err, tt.refuse)
			}
			if (gitErr == nil) != tt.gitAnswers {
				t.Errorf("%s: git answered %v (error %v); the row says git answers: %v", name, want, gitErr, tt.gitAnswers)
			}
		case gitErr != nil:
			t.Errorf("%s: git refuses (%v) but the row expects an answer", name, gitErr)
		case err != nil:
			t.Errorf("%s: digest refused: %v; git gives %d commits", name, err, len(want))
		case !slices.Equal(got, want):
			t.Errorf("%s:\n got %v\nwant %v", name, abbrev(got), abbrev(want))
		case len(want) > 0:
			answered++
		}
	}
	if answered < 35 {
		t.Errorf("only %d pathspecs selected commits in both", answered)
	}
}

// TestVersionsAreTheOldestTagsContaining: each commit's version is the
// oldest by history of the tags `git tag --contains` lists: one whose
// commit holds no other one's (git merge-base --is-ancestor), the first
// in git's version order if several do.
func TestVersionsAreTheOldestTagsContaining(t *testing.T) {
	g := newGitRepo(t)
	work := g.dir("work")
	r := open(t, work)
	defer r.Close()
	commits, err := digestWalk(r, history.WalkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Versions(context.Background(), commits)
	if err != nil {
		t.Fatal(err)
	}
	holds := func(tag, other string) bool {
		cmd := exec.Command("git", "merge-base", "--is-ancestor", other, tag)
		cmd.Dir, cmd.Env = work, g.env
		return cmd.Run() == nil && g.run("work", "rev-parse", tag+"^{commit}") != g.run("work", "rev-parse", other+"^{commit}")
	}
	released := 0
	for _, c := range commits {
		var want string
		containing := strings.Fields(g.run("work", "tag", "--contains", c, "--sort=version:refname"))
		for _, tag := range containing {
			oldest := true
			for _, other := range containing {
				if other != tag && holds(tag, other) {
					oldest = false
				}
			}
			if oldest {
				want = tag
				break
			}
		}
		if got[c].Tag != want {
			t.Errorf("commit %s: version %q, git's oldest tag containing it %q", c[:7], got[c].Tag, want)
		}
		if want != "" {
			released++
		}
	}
	if released < 5 || released == len(commits) {
		t.Errorf("%d of %d commits released: the fixture checks too little", released, len(commits))
	}
	if v := got[g.run("work", "rev-parse", "v2^{commit}")]; v.Date.IsZero() || v.Tag != "v2" {
		t.Errorf("the annotated v2: %+v", v)
	}
}
