package gittest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// GitEnv is an environment for running the git command apart from the
// user's and the machine's configuration (diff.algorithm, a global
// indentHeuristic=false, autocrlf, hooks), for tests that compare digest
// with git. The empty global configuration is a file of its own:
// os.DevNull need not be a device everywhere tests run.
func GitEnv(tb testing.TB) []string {
	tb.Helper()
	home := tb.TempDir()
	config := filepath.Join(home, "gitconfig")
	if err := os.WriteFile(config, nil, 0o644); err != nil {
		tb.Fatal(err)
	}
	return append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+config,
		"HOME="+home, "XDG_CONFIG_HOME="+home, "LC_ALL=C", "LANG=C")
}

// ShallowClone clones r with the git command into a new folder, keeping
// depth commits of history, as actions/checkout's fetch-depth does, and
// returns the folder. Without the git command the test is skipped.
func (r *Repo) ShallowClone(depth int) string {
	r.t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		r.t.Skip("needs the git command to make a shallow clone")
	}
	dir := filepath.Join(r.t.TempDir(), "shallow")
	clone := exec.Command("git", "clone", "--quiet", "--depth", strconv.Itoa(depth), "file://"+r.Dir, dir)
	clone.Env = GitEnv(r.t)
	if out, err := clone.CombinedOutput(); err != nil {
		r.t.Fatalf("git clone --depth %d: %v\n%s", depth, err, out)
	}
	return dir
}
