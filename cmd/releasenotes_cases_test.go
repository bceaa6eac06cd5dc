package cmd

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/gittest"
)

// TestReleaseNotesCases runs each case under testdata/releasenotes as
// data, as git-cliff keeps its fixtures: a folder per history holds
// history.fi, a git fast-import stream (made from a real repository's
// commits by .ci/history-fixture, or written by hand), and remote, the
// origin's URL; under cases/, a folder per run holds
//
//	args       digest's arguments, one per line; {repo} is the repository,
//	           {dir} a scratch folder
//	want       what digest writes on standard output
//	existing   (optional) copied to {dir}/CHANGELOG.md before the run
//	want-file  (optional) what {dir}/CHANGELOG.md holds after it
//	exit       (optional) the exit code, 0 when absent
//	error      (optional) what the error line on standard error says
//
// Every run uses the offline model, so the cases need no key and no
// network. go test ./cmd -run TestReleaseNotesCases -update rewrites want
// and want-file.
func TestReleaseNotesCases(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs the git command to import the histories")
	}
	histories, err := filepath.Glob(filepath.Join("..", "testdata", "releasenotes", "*", "history.fi"))
	if err != nil || len(histories) == 0 {
		t.Fatalf("no histories under testdata/releasenotes: %v", err)
	}
	for _, fi := range histories {
		dir := filepath.Dir(fi)
		name := filepath.Base(dir)
		cases, err := filepath.Glob(filepath.Join(dir, "cases", "*", "args"))
		if err != nil || len(cases) == 0 {
			t.Fatalf("%s has no cases: %v", dir, err)
		}
		t.Run(name, func(t *testing.T) {
			repo := importHistory(t, name, fi, readOptional(t, filepath.Join(dir, "remote")))
			h := newHarness(t) // one database per history: later cases read the cache
			for _, args := range cases {
				c := filepath.Dir(args)
				t.Run(filepath.Base(c), func(t *testing.T) { runReleaseNotesCase(t, h, repo, c) })
			}
		})
	}
}

func runReleaseNotesCase(t *testing.T, h *harness, repo, c string) {
	scratch := t.TempDir()
	if existing := readOptional(t, filepath.Join(c, "existing")); existing != "" {
		if err := os.WriteFile(filepath.Join(scratch, "CHANGELOG.md"), []byte(existing), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var args []string
	for line := range strings.Lines(readOptional(t, filepath.Join(c, "args"))) {
		line = strings.TrimRight(line, "\n")
		if line == "" {
			continue
		}
		args = append(args, strings.NewReplacer("{repo}", repo, "{dir}", scratch).Replace(line))
	}
	wantExit := 0
	if s := strings.TrimSpace(readOptional(t, filepath.Join(c, "exit"))); s != "" {
		wantExit, _ = strconv.Atoi(s)
	}
	r := h.run(context.Background(), append([]string{"-q"}, args...)...)
	if r.code != wantExit {
		t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, wantExit, r.errOut)
	}
	if want := strings.TrimSpace(readOptional(t, filepath.Join(c, "error"))); want != "" {
		lines := strings.Split(strings.TrimSpace(r.errOut), "\n")
		if last := lines[len(lines)-1]; !strings.Contains(last, want) {
			t.Errorf("error line %q, want it to say %q", last, want)
		}
	}
	compareCase(t, filepath.Join(c, "want"), strings.ReplaceAll(r.out, repo, "{repo}"))
	if _, err := os.Stat(filepath.Join(c, "want-file")); err == nil || *update && readOptional(t, filepath.Join(c, "existing")) != "" {
		got, err := os.ReadFile(filepath.Join(scratch, "CHANGELOG.md"))
		if err != nil {
			t.Fatal(err)
		}
		compareCase(t, filepath.Join(c, "want-file"), string(got))
	}
}

// importHistory builds the repository of a fast-import stream in a folder
// named name, with its work tree checked out (.mailmap is read there, as
// git reads it) and origin at remote.
func importHistory(t *testing.T, name, fi, remote string) string {
	t.Helper()
	repo := filepath.Join(t.TempDir(), name)
	stream, err := os.Open(fi)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	env := gittest.GitEnv(t)
	gitIn := func(stdin *os.File, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env, cmd.Stdin = repo, env, stdin
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	if err := os.Mkdir(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	gitIn(nil, "init", "-q", "-b", "main")
	gitIn(stream, "fast-import", "--quiet")
	gitIn(nil, "reset", "-q", "--hard")
	if remote = strings.TrimSpace(remote); remote != "" {
		gitIn(nil, "remote", "add", "origin", remote)
	}
	return repo
}

func readOptional(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(b)
}

// compareCase compares got with the golden file at path, or with -update
// writes it there.
func compareCase(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (-update rewrites it if the change is intended)\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}
