package cmd

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/gittest"
	"github.com/digest-cli/digest/internal/goldentest"
)

// TestReleaseNotesCases runs each case under testdata/releasenotes as
// data, as git-cliff keeps its fixtures (digest help development says
// how): per history a git fast-import stream (history.fi) and the origin's
// URL (remote); per case digest's arguments (args, one per line, {repo}
// the repository and {dir} a scratch folder), what it writes (want) and,
// where it matters, {dir}/CHANGELOG.md before and after (existing,
// want-file), the exit code (exit) and what the error line says (error).
// Every run uses the offline model; -update rewrites want and want-file.
func TestReleaseNotesCases(t *testing.T) {
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
			repo := filepath.Join(t.TempDir(), name)
			gittest.Import(t, repo, fi, readOptional(t, filepath.Join(dir, "remote")))
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
	existing := readOptional(t, filepath.Join(c, "existing"))
	if existing != "" {
		if err := os.WriteFile(filepath.Join(scratch, "CHANGELOG.md"), []byte(existing), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"-q"}
	for _, line := range strings.Split(readOptional(t, filepath.Join(c, "args")), "\n") {
		if line != "" {
			args = append(args, strings.NewReplacer("{repo}", repo, "{dir}", scratch).Replace(line))
		}
	}
	wantExit, _ := strconv.Atoi(strings.TrimSpace(readOptional(t, filepath.Join(c, "exit")))) // 0 when absent
	r := h.run(context.Background(), args...)
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
	if _, err := os.Stat(filepath.Join(c, "want-file")); err == nil || goldentest.Updating() && existing != "" {
		got, err := os.ReadFile(filepath.Join(scratch, "CHANGELOG.md"))
		if err != nil {
			t.Fatal(err)
		}
		compareCase(t, filepath.Join(c, "want-file"), string(got))
	}
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
	goldentest.Check(t, path, []byte(got))
}
