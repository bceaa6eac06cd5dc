package cmd

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/gittest"
)

// sha256Fixture builds a repository with `git init --object-format=sha256`
// in a directory named hello: a branch merged, a tag, a pack and a
// commit-graph from `git gc`, then a commit left loose.
func sha256Fixture(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := filepath.Join(t.TempDir(), "hello")
	env := append(gittest.GitEnv(t), "GIT_AUTHOR_NAME=Ada Lovelace", "GIT_AUTHOR_EMAIL=ada@example.com",
		"GIT_COMMITTER_NAME=Ada Lovelace", "GIT_COMMITTER_EMAIL=ada@example.com")
	clock := 1_772_000_000
	git := func(args ...string) string {
		t.Helper()
		clock += 3600
		date := "GIT_AUTHOR_DATE=@" + itoa(clock) + " +0000"
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(slices.Clone(env), date, "GIT_COMMITTER"+strings.TrimPrefix(date, "GIT_AUTHOR"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	commit := func(msg, path, content string) {
		t.Helper()
		full := filepath.Join(dir, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		git("add", "-A")
		git("commit", "-q", "-m", msg)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	git("init", "-q", "--object-format=sha256", "-b", "main")
	commit("Add the greeting", "main.go", "package main\n\nfunc main() { println(\"hello\") }\n")
	commit("docs: say what hello does", "README.md", "# hello\n\nSays hello.\n")
	git("tag", "-a", "v0.1.0", "-m", "first release")
	git("checkout", "-q", "-b", "feature")
	commit("feat: greet by name", "greet.go", "package main\n\nfunc greet(name string) string { return \"hello \" + name }\n")
	git("checkout", "-q", "main")
	commit("fix: end the greeting with a newline", "main.go", "package main\n\nfunc main() { println(\"hello\\n\") }\n")
	git("merge", "-q", "--no-ff", "-m", "Merge branch 'feature'", "feature")
	git("gc", "-q")
	git("commit-graph", "write", "--reachable")
	commit("docs: mention greet", "README.md", "# hello\n\nSays hello, by name too.\n")
	return dir
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// TestSHA256RepositoryIsSummarized: a SHA-256 repository is summarized end
// to end, as a SHA-1 one is: a dry run, a real run whose rows are the
// commits git rev-list selects, and a rerun from the cache without a call.
func TestSHA256RepositoryIsSummarized(t *testing.T) {
	dir := sha256Fixture(t)
	cmd := exec.Command("git", "-C", dir, "rev-list", "--no-merges", "HEAD")
	cmd.Env = gittest.GitEnv(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Fields(string(out))
	if len(want) != 5 || len(want[0]) != 64 {
		t.Fatalf("the fixture's commits: %v", want)
	}
	h := newHarness(t)

	dry := h.run(context.Background(), "summarize", dir, "--dry-run")
	if dry.code != 0 || h.calls.Load() != 0 {
		t.Fatalf("dry run: exit %d, %d calls: %s", dry.code, h.calls.Load(), dry.errOut)
	}
	if !strings.Contains(dry.errOut+dry.out, "5 commits") {
		t.Errorf("the dry run does not count 5 commits:\n%s\n%s", dry.out, dry.errOut)
	}

	first := h.run(context.Background(), "summarize", dir, "-f", "jsonl")
	if first.code != 0 || h.calls.Load() == 0 {
		t.Fatalf("first run: exit %d, %d calls: %s", first.code, h.calls.Load(), first.errOut)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(first.out), "\n") {
		var row struct{ Commit, Summary string }
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		got = append(got, row.Commit)
		if strings.Contains(row.Summary, "=== end") {
			t.Errorf("commit %s: the prompt's framing came back as its summary: %q", row.Commit, row.Summary)
		}
		if row.Summary == "" {
			t.Errorf("commit %s has no summary", row.Commit)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("rows for %v, want %v", got, want)
	}

	h.calls.Store(0)
	second := h.run(context.Background(), "summarize", dir, "-f", "jsonl")
	if second.code != 0 || h.calls.Load() != 0 {
		t.Fatalf("rerun: exit %d, %d calls: %s", second.code, h.calls.Load(), second.errOut)
	}
	if w := strings.ReplaceAll(first.out, `"cached":false`, `"cached":true`); second.out != w {
		t.Errorf("the rerun differs from the first run beyond cached:true\n got %s\nwant %s", second.out, w)
	}

	res := h.run(context.Background(), "summarize", dir, "--renames")
	oneLineError(t, res, 1, "--renames", "SHA-256")
}
