package history

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/gittest"
)

// mailmapRepo is a repository built with the git binary, whose commits
// have authors a mailmap joins.
type mailmapRepo struct {
	t   *testing.T
	dir string
	env []string
}

func (m *mailmapRepo) git(args ...string) string {
	m.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = m.dir
	cmd.Env = m.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		m.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func newMailmapRepo(t *testing.T) *mailmapRepo {
	needGit(t)
	m := &mailmapRepo{t: t, dir: t.TempDir(), env: gittest.GitEnv(t)}
	// Mailmap reads the configuration as git does: the same files.
	for _, kv := range m.env {
		if v, ok := strings.CutPrefix(kv, "GIT_CONFIG_GLOBAL="); ok {
			t.Setenv("GIT_CONFIG_GLOBAL", v)
		}
	}
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	m.git("init", "-q", "-b", "main")
	authors := []string{"Ada <ada@old.example>", "Ada Lovelace <ADA@new.example>", "bob <bob@laptop.local>", "Carol <carol@example.com>", "Dan <dan@example.com>", "Eve <eve@example.com>"}
	for i, a := range authors {
		if err := os.WriteFile(filepath.Join(m.dir, "f"), []byte(a), 0o644); err != nil {
			t.Fatal(err)
		}
		m.git("add", "f")
		m.git("-c", "user.name=C", "-c", "user.email=c@x", "commit", "-q", "--author", a, "-m", "c"+string(rune('0'+i)))
	}
	return m
}

// write writes a file under the repository's directory.
func (m *mailmapRepo) write(name, content string) string {
	m.t.Helper()
	path := filepath.Join(m.dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		m.t.Fatal(err)
	}
	return path
}

// sameAsGitLog checks that Mailmap maps each commit's author as `git log
// --use-mailmap` does in dir.
func sameAsGitLog(t *testing.T, dir string, env []string) {
	t.Helper()
	cmd := exec.Command("git", "log", "--use-mailmap", "--format=%an%x00%ae%x00%aN%x00%aE")
	cmd.Dir = dir
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git log: %v", err)
	}
	r := openRepo(t, dir)
	defer r.Close()
	mm, err := r.Mailmap()
	if err != nil {
		t.Fatal(err)
	}
	mapped := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\x00")
		name, email := mm.Resolve(f[0], f[1])
		if name != f[2] || email != f[3] {
			t.Errorf("%s <%s>: got %s <%s>, git log %s <%s>", f[0], f[1], name, email, f[2], f[3])
		}
		if name != f[0] || email != f[1] {
			mapped++
		}
	}
	if mapped == 0 {
		t.Error("no author was mapped: the test checks nothing")
	}
}

// TestMailmapSourcesAsGitLog: the work tree's .mailmap, then mailmap.blob,
// then mailmap.file (absolute, relative, under ~), each overriding the one
// before; a bare repository's HEAD:.mailmap.
func TestMailmapSourcesAsGitLog(t *testing.T) {
	m := newMailmapRepo(t)
	m.write(".mailmap", "Ada Lovelace <ada@new.example> <ada@old.example>\n<ada@new.example> <Ada@New.Example>\nBob <bob@example.com> <bob@laptop.local>\n")
	m.git("add", ".mailmap")
	m.git("-c", "user.name=C", "-c", "user.email=c@x", "commit", "-q", "-m", "mailmap")
	t.Run("worktree", func(t *testing.T) { sameAsGitLog(t, m.dir, m.env) })

	// A change not committed counts: git reads the file.
	m.write(".mailmap", "Ada Lovelace <ada@new.example> <ada@old.example>\nRobert <bob@example.com> <bob@laptop.local>\n")
	t.Run("worktree-changed", func(t *testing.T) { sameAsGitLog(t, m.dir, m.env) })

	outside := filepath.Join(t.TempDir(), "people.mailmap")
	if err := os.WriteFile(outside, []byte("Caroline <carol@example.com>\nBobby <bob@laptop.local>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m.git("config", "mailmap.file", outside)
	t.Run("file", func(t *testing.T) { sameAsGitLog(t, m.dir, m.env) })

	m.git("checkout", "-q", "-b", "people")
	m.write("team.mailmap", "Daniel <dan@example.com>\nBobbie <bob@laptop.local>\n")
	m.git("add", "team.mailmap")
	m.git("-c", "user.name=C", "-c", "user.email=c@x", "commit", "-q", "-m", "team")
	m.git("checkout", "-q", "main")
	m.git("config", "mailmap.blob", "people:team.mailmap")
	t.Run("blob", func(t *testing.T) { sameAsGitLog(t, m.dir, m.env) })

	m.write("rel.mailmap", "Evelyn <eve@example.com>\n")
	m.git("config", "mailmap.file", "rel.mailmap")
	t.Run("relative-file", func(t *testing.T) { sameAsGitLog(t, m.dir, m.env) })

	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "mm"), []byte("Evie <eve@example.com>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m.git("config", "mailmap.file", "~/mm")
	t.Setenv("HOME", home)
	env := append(m.env, "HOME="+home)
	t.Run("home-file", func(t *testing.T) { sameAsGitLog(t, m.dir, env) })

	bare := filepath.Join(t.TempDir(), "bare.git")
	m.git("clone", "-q", "--bare", m.dir, bare)
	t.Run("bare", func(t *testing.T) { sameAsGitLog(t, bare, m.env) })
	cmd := exec.Command("git", "-C", bare, "config", "mailmap.blob", "people:team.mailmap")
	cmd.Env = m.env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	t.Run("bare-blob", func(t *testing.T) { sameAsGitLog(t, bare, m.env) })
}

// TestMailmapSymlinkNotFollowed: git does not follow a .mailmap that is a
// symbolic link (it might lead out of the repository); nor does Mailmap.
func TestMailmapSymlinkNotFollowed(t *testing.T) {
	m := newMailmapRepo(t)
	target := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.WriteFile(target, []byte("Ada Lovelace <ada@new.example> <ada@old.example>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(m.dir, ".mailmap")); err != nil {
		t.Skip("no symbolic links here")
	}
	r := openRepo(t, m.dir)
	defer r.Close()
	mm, err := r.Mailmap()
	if err != nil {
		t.Fatal(err)
	}
	if mm.Len() != 0 {
		t.Errorf("the symbolic link was followed: %d entries", mm.Len())
	}
	cmd := exec.Command("git", "check-mailmap", "Ada <ada@old.example>")
	cmd.Dir, cmd.Env = m.dir, m.env
	if out, err := cmd.Output(); err != nil || strings.TrimSpace(string(out)) != "Ada <ada@old.example>" {
		t.Errorf("git check-mailmap: %q, %v; expected git not to follow it either", out, err)
	}
}

// TestMailmapNoneAndTooLarge: without a mailmap every author maps to
// themselves; a 10 MB .mailmap is refused, with what to do.
func TestMailmapNoneAndTooLarge(t *testing.T) {
	m := newMailmapRepo(t)
	r := openRepo(t, m.dir)
	mm, err := r.Mailmap()
	r.Close()
	if err != nil {
		t.Fatal(err)
	}
	if name, email := mm.Resolve("Ada", "ada@old.example"); name != "Ada" || email != "ada@old.example" || mm.Len() != 0 {
		t.Errorf("no mailmap: %q <%s>, %d entries", name, email, mm.Len())
	}
	m.write(".mailmap", strings.Repeat("Someone <someone@example.com>\n", 10<<20/30+1))
	r = openRepo(t, m.dir)
	defer r.Close()
	if _, err := r.Mailmap(); err == nil || !strings.Contains(err.Error(), "Try:") {
		t.Errorf("a 10 MB .mailmap: %v", err)
	}
}
