package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/digest-cli/digest/internal/pgtest"
)

// dbPassword is in every password of this file's --db values.
const dbPassword = "Pa55wordXYZ"

// runIn runs the digest binary in dir, with HOME there and no DIGEST_*
// variable of the test's environment, and returns what it said.
func runIn(t *testing.T, bin, dir string, cred *syscall.Credential, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + dir, "PATH=" + os.Getenv("PATH"), "PGPASSFILE=" + filepath.Join(dir, "no-pgpass"), "PGSERVICEFILE=" + filepath.Join(dir, "no-pgservice")}
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return result{cmd.ProcessState.ExitCode(), out.String(), errOut.String()}
}

// TestDBIsReadAsMeant runs real digest processes, each in a folder of its
// own, with --db spelled as people write it: the scheme in capitals or
// mixed case, space around the URL, and a keyword/value connection string
// each reach the PostgreSQL server they name (here a port nobody listens
// on, so "cannot be reached" names it); URLs and connection strings digest
// cannot use are refused in one line (exit 2) saying what it takes. None
// shows the password, and nothing is created where digest ran. Before,
// each of them became an SQLite file or folders in the working directory,
// named after the password, and every run paid again.
func TestDBIsReadAsMeant(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildDigest(t)
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := free.Addr().String()
	port := free.Addr().(*net.TCPAddr).Port
	free.Close()
	data := writeDataset(t, `{"input": "2+2", "ideal": "4"}`)
	commands := map[string][]string{
		"eval":    {"eval", data, "--models", "offline", "-f", "json"},
		"batches": {"batches"},
		"runs":    {"runs", "show", "2026"},
	}
	servers := []string{
		"POSTGRES://ci:" + dbPassword + "@" + addr + "/digest?sslmode=disable",
		"PostgreSQL://ci:" + dbPassword + "@" + addr + "/digest?sslmode=disable",
		"  postgres://ci:" + dbPassword + "@" + addr + "/digest?sslmode=disable \n",
		fmt.Sprintf("host=127.0.0.1 port=%d dbname=digest user=ci password=%s sslmode=disable", port, dbPassword),
		fmt.Sprintf(" host=127.0.0.1 port=%d dbname=digest user=ci password='Pa55 wordXYZ' sslmode=disable ", port),
	}
	refused := map[string]string{
		"mysql://ci:" + dbPassword + "@db/digest":                    "mysql://",
		"sqlite:///var/cache/digest.db":                              "Try: --db /var/cache/digest.db",
		"ci:" + dbPassword + "@db.internal:5432/digest":              "USER:PASSWORD@HOST",
		"host=db dbname=digest password=Pa55 wordXYZ":                "quoted",
		"host=db port=notaport password=" + dbPassword:               "invalid port",
		"'postgres://ci:" + dbPassword + "@db/digest'":               "quotes",
		"postgres://ci:Pa55@wordXYZ@" + addr + "/digest":             "Try: write @ as %40",
		"jdbc:postgresql://db/digest?user=ci&password=" + dbPassword: "postgres://",
	}
	check := func(t *testing.T, dir string, res result) {
		t.Helper()
		if strings.Contains(res.out+res.errOut, "wordXYZ") {
			t.Errorf("the password shows: %s", res.errOut)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("digest created %v where it ran", entries)
		}
	}
	for name, args := range commands {
		for i, db := range servers {
			t.Run(fmt.Sprintf("%s/server%d", name, i), func(t *testing.T) {
				dir := t.TempDir()
				res := runIn(t, bin, dir, nil, append([]string{"--db", db}, args...)...)
				oneLineError(t, res, 1, "cannot be reached", fmt.Sprintf("127.0.0.1:%d", port))
				check(t, dir, res)
			})
		}
		for db, want := range refused {
			t.Run(name+"/refused", func(t *testing.T) {
				dir := t.TempDir()
				res := runIn(t, bin, dir, nil, append([]string{"--db", db}, args...)...)
				oneLineError(t, res, 2, "--db", want)
				check(t, dir, res)
			})
		}
	}
}

// TestDBSpellingsShareOneCache: on a real PostgreSQL server, a run under
// one spelling of the database's name pays for its answers, and runs under
// the others (the scheme in capitals, space around the URL, the
// keyword/value string of the same parts) find every one in the cache.
func TestDBSpellingsShareOneCache(t *testing.T) {
	raw := pgtest.FreshDatabase(t)
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	kv := fmt.Sprintf("host=%s port=%s dbname=%s user=%s", u.Hostname(), u.Port(), strings.TrimPrefix(u.Path, "/"), u.User.Username())
	if pw, ok := u.User.Password(); ok {
		kv += " password='" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(pw) + "'"
	}
	if mode := u.Query().Get("sslmode"); mode != "" {
		kv += " sslmode=" + mode
	}
	rest := strings.TrimPrefix(raw, u.Scheme+":")
	data := sums(t)
	h := newHarness(t)
	h.db = raw
	if res := h.run(context.Background(), "eval", data, "--models", "test:a", "-f", "json"); res.code != 0 || h.calls.Load() != 10 {
		t.Fatalf("first run: exit %d, %d calls: %s", res.code, h.calls.Load(), res.errOut)
	}
	spellings := []string{"POSTGRES:" + rest, "PostgreSQL:" + rest, "  " + raw + " \n", kv, "\t" + kv + " "}
	for _, db := range spellings {
		h.calls.Store(0)
		h.db = db
		if res := h.run(context.Background(), "eval", data, "--models", "test:a", "-f", "json"); res.code != 0 || h.calls.Load() != 0 {
			t.Errorf("--db %q: exit %d, %d calls (want every answer from the cache): %s", db, res.code, h.calls.Load(), res.errOut)
		}
	}
	var runs []map[string]any
	list := h.run(context.Background(), "runs", "list", "-f", "json")
	if err := json.Unmarshal([]byte(list.out), &runs); err != nil || len(runs) != 1+len(spellings) {
		t.Errorf("runs list under --db %q: %d runs, %v: %s", h.db, len(runs), err, list.errOut)
	}
	// The package's folder, where the in-process runs ran, holds no file
	// named after a spelling.
	for _, name := range []string{"POSTGRES:", "PostgreSQL:", "  postgres:", kv, "host=" + u.Hostname()} {
		if _, err := os.Stat(name); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%q was created: %v", name, err)
		}
	}
}

// TestBatchesAndRunsCreateNoDatabase: `digest batches` and `digest runs`
// read what other commands stored; with a --db that does not exist they
// say so and what to try, and create neither the file nor its folder.
// Before, `digest batches` created both, and an empty database in them.
func TestBatchesAndRunsCreateNoDatabase(t *testing.T) {
	h := newHarness(t)
	for _, args := range [][]string{{"batches"}, {"batches", "--all", "--format", "json"}, {"batches", "--refresh"}, {"batches", "cancel", "msgbatch_1"}, {"runs", "show", "2026"}} {
		res := h.run(context.Background(), args...)
		oneLineError(t, res, 2, "no database at "+h.db, "Try: --db")
		if res.out != "" {
			t.Errorf("%v wrote %q", args, res.out)
		}
	}
	if res := h.run(context.Background(), "runs", "list"); res.code != 0 || !strings.Contains(res.errOut, "no database at "+h.db) {
		t.Errorf("runs list: exit %d: %s", res.code, res.errOut)
	}
	if _, err := os.Stat(filepath.Dir(h.db)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the database's folder was created: %v", err)
	}
}

// TestReadOnlyDatabaseIsRead: a database digest may not write to, a
// read-only file or a file in a read-only folder, is read by real `digest
// runs list`, `runs show` and `batches` processes (run as another user
// when the test runs as root, whom permissions do not bind), as it is;
// commands that must write to it say in one line that it is read-only.
// Nothing beside it changes: no journal is left behind. Before, `runs
// list` failed on it.
func TestReadOnlyDatabaseIsRead(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildDigest(t)
	var cred *syscall.Credential
	uid, gid := os.Getuid(), os.Getgid()
	if uid == 0 {
		// nobody, who must reach the binary and the databases.
		cred = &syscall.Credential{Uid: 65534, Gid: 65534}
		uid, gid = 65534, 65534
		if err := os.Chmod(filepath.Dir(bin), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	data := sums(t)
	for _, c := range []struct {
		name      string
		file, dir os.FileMode
		wantWhy   string
	}{
		{"a read-only file", 0o444, 0o755, "the file is not writable"},
		{"a file in a read-only folder", 0o644, 0o555, "its folder " + "%s is not writable"},
	} {
		t.Run(c.name, func(t *testing.T) {
			base, err := os.MkdirTemp("", "digest-ro-")
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(base, "db")
			t.Cleanup(func() {
				os.Chmod(dir, 0o755)
				os.RemoveAll(base)
			})
			h := newHarness(t)
			h.db = filepath.Join(dir, "digest.db")
			if res := h.run(context.Background(), "eval", data, "--models", "offline", "-f", "json"); res.code != 0 {
				t.Fatalf("eval: exit %d: %s", res.code, res.errOut)
			}
			ownedData := filepath.Join(base, "sums.jsonl")
			b, err := os.ReadFile(data)
			if err != nil {
				t.Fatal(err)
			}
			for _, step := range []error{
				os.WriteFile(ownedData, b, 0o644),
				os.Chown(base, uid, gid), os.Chmod(base, 0o755),
				os.Chown(dir, uid, gid), os.Chown(h.db, uid, gid),
				os.Chmod(h.db, c.file), os.Chmod(dir, c.dir),
			} {
				if step != nil {
					t.Fatal(step)
				}
			}
			before, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			bytesBefore, _ := os.ReadFile(h.db)
			run := func(args ...string) result {
				return runIn(t, bin, base, cred, append([]string{"--db", h.db}, args...)...)
			}

			var runs []struct {
				ID string `json:"id"`
			}
			list := run("runs", "list", "-f", "json")
			if err := json.Unmarshal([]byte(list.out), &runs); list.code != 0 || err != nil || len(runs) != 1 {
				t.Fatalf("runs list: exit %d, %v: %s %s", list.code, err, list.out, list.errOut)
			}
			if show := run("runs", "show", runs[0].ID, "-f", "json"); show.code != 0 || !strings.Contains(show.out, runs[0].ID) {
				t.Errorf("runs show: exit %d: %s", show.code, show.errOut)
			}
			if batches := run("batches", "--all"); batches.code != 0 || !strings.Contains(batches.errOut, "no batches") {
				t.Errorf("batches --all: exit %d: %s", batches.code, batches.errOut)
			}
			for _, args := range [][]string{{"eval", ownedData, "--models", "offline", "-f", "json"}, {"batches", "--refresh"}} {
				oneLineError(t, run(args...), 1, "is read-only", strings.ReplaceAll(c.wantWhy, "%s", dir), "Try: --db")
			}

			after, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			bytesAfter, _ := os.ReadFile(h.db)
			if len(after) != len(before) || !bytes.Equal(bytesAfter, bytesBefore) {
				t.Errorf("the database's folder held %v, now %v; database bytes equal: %v", before, after, bytes.Equal(bytesAfter, bytesBefore))
			}
		})
	}
}
