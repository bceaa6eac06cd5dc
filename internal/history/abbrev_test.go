package history

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/gittest"
)

func TestAbbrevLenIsGits(t *testing.T) {
	for count, want := range map[int]int{0: 7, 1: 7, 16383: 7, 16384: 8, 65536: 9, 380_000: 10, 1 << 24: 13} {
		if got := abbrevLen(count); got != want {
			t.Errorf("abbrevLen(%d) = %d, want %d", count, got, want)
		}
	}
}

// TestAbbrevIsUniqueAsGitMakesIt shortens every object of a repository to
// 4 digits at least, where prefixes collide often, and compares with git's
// own `rev-parse --short=4`: the same digits, longer where git's are.
func TestAbbrevIsUniqueAsGitMakesIt(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	g := gittest.New(t)
	for i := range 150 {
		g.Write(fmt.Sprintf("f%d.txt", i%9), fmt.Sprintf("version %d\n", i)).Commit(fmt.Sprintf("commit %d", i))
	}
	run := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", g.Dir}, args...)...)
		cmd.Env = gittest.GitEnv(t)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return string(out)
	}
	// Commits and trees with git's abbreviations of them, unique among all objects.
	fields := strings.Fields(run("log", "--abbrev=4", "--format=%H %h %T %t"))
	var all, want []string
	for i := 0; i+1 < len(fields); i += 2 {
		all, want = append(all, fields[i]), append(want, fields[i+1])
	}
	r, err := Open(g.Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	r.abbrev.once.Do(func() { r.abbrev.min = 4 })
	longer := 0
	for i, h := range all {
		got := r.Abbrev(h)
		if got != want[i] {
			t.Errorf("Abbrev(%s) = %s, git says %s", h, got, want[i])
		}
		if len(got) > 4 {
			longer++
		}
	}
	if longer == 0 {
		t.Errorf("no prefix of %d objects collided at 4 digits: the test checks nothing", len(all))
	}
}
