package gittest

import (
	"os"
	"path/filepath"
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
