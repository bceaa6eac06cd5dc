package gittest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Import builds the repository of a git fast-import stream (the file
// stream, as .ci/history-fixture writes them) in the new folder dir, its
// work tree checked out (.mailmap is read there, as git reads it), with
// origin at remote unless that is blank. Without the git command the test
// is skipped.
func Import(tb testing.TB, dir, stream, remote string) {
	tb.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		tb.Skip("needs the git command to import a history")
	}
	in, err := os.Open(stream)
	if err != nil {
		tb.Fatal(err)
	}
	defer in.Close()
	if err := os.Mkdir(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	env := GitEnv(tb)
	git := func(stdin *os.File, args ...string) {
		tb.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env, cmd.Stdin = dir, env, stdin
		if out, err := cmd.CombinedOutput(); err != nil {
			tb.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	git(nil, "init", "-q", "-b", "main")
	git(in, "fast-import", "--quiet")
	git(nil, "reset", "-q", "--hard")
	if remote = strings.TrimSpace(remote); remote != "" {
		git(nil, "remote", "add", "origin", remote)
	}
}
