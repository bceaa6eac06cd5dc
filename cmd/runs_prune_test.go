package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/store"
	"github.com/digest-cli/digest/internal/store/sqlite"
)

// TestRunsPruneRefusesBadValues: each bad value is one line, exit 2, with
// what to try, before the database is opened or created.
func TestRunsPruneRefusesBadValues(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"negative keep", []string{"--keep", "-1"}, nil, "--keep cannot be negative"},
		{"keep not a number", []string{"--keep", "ten"}, nil, `invalid argument "ten" for "--keep"`},
		{"age not an age", []string{"--older-than", "soon"}, nil, `--older-than "soon": not an age`},
		{"age in weeks", []string{"--older-than", "2w"}, nil, `--older-than "2w": not an age`},
		{"negative age", []string{"--older-than", "-3h"}, nil, "cannot be negative"},
		{"age empty", []string{"--older-than", ""}, nil, `--older-than "": not an age`},
		{"dry run and vacuum", []string{"--dry-run", "--vacuum"}, nil, "--vacuum rewrites the database, and --dry-run changes nothing"},
		{"vacuum a server", []string{"--vacuum", "--db", "postgres://digest@127.0.0.1:1/digest"}, nil, "--vacuum rewrites an SQLite file"},
		{"a run", []string{"20261130"}, nil, `runs prune takes no run, got "20261130"`},
		{"keep from the environment", nil, map[string]string{"DIGEST_KEEP": "-5"}, "(--keep was set by DIGEST_KEEP)"},
		{"no database", nil, nil, "no database at "},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			for k, v := range c.env {
				h.env[k] = v
			}
			res := h.run(context.Background(), append([]string{"runs", "prune"}, c.args...)...)
			oneLineError(t, res, 2, c.want)
			if _, err := os.Stat(h.db); err == nil {
				t.Errorf("a database was created at %s", h.db)
			}
		})
	}
}

// TestRunsPruneKeepsAnswersAndRunningRuns prunes real runs: the runs
// selected are gone from runs list, a rerun still pays for nothing, and a
// run not finished and started in the last week stays, whatever the rules.
func TestRunsPruneKeepsAnswersAndRunningRuns(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	data := sums(t)
	var ids []string // newest first
	for range 3 {
		res := h.run(ctx, "eval", data, "-f", "json", "-q")
		var rep evalJSON
		if res.code != 0 || json.Unmarshal([]byte(res.out), &rep) != nil {
			t.Fatalf("eval: exit %d %s", res.code, res.errOut)
		}
		ids = append([]string{rep.RunID}, ids...)
	}
	paid := h.calls.Load()
	// Two runs not finished: one started an hour ago (another process
	// may be writing it), one 8 days ago (interrupted, surely).
	s, err := sqlite.Open(ctx, h.db)
	if err != nil {
		t.Fatal(err)
	}
	for id, age := range map[string]time.Duration{"running": time.Hour, "interrupted": 8 * 24 * time.Hour} {
		if err := s.StartRun(ctx, store.EvalRun{ID: id, Dataset: data, Models: []string{"offline"}, CreatedAt: time.Now().Add(-age)}); err != nil {
			t.Fatal(err)
		}
		if err := s.SaveRunResults(ctx, []store.RunResult{{RunID: id, Model: "offline", Item: "q0", Line: 1, Key: "k"}}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	listed := func() []string {
		t.Helper()
		res := h.run(ctx, "runs", "list", "-f", "json")
		var runs []struct{ ID string }
		if res.code != 0 || json.Unmarshal([]byte(res.out), &runs) != nil {
			t.Fatalf("runs list: exit %d %s", res.code, res.errOut)
		}
		var out []string
		for _, r := range runs {
			out = append(out, r.ID)
		}
		slices.Sort(out)
		return out
	}
	before := listed()

	// The default keeps 100 of each dataset: nothing goes.
	res := h.run(ctx, "runs", "prune")
	if res.code != 0 || res.out != "" || !strings.Contains(res.errOut, "removed 0 of 5 runs") || !strings.Contains(res.errOut, "not among the 100 newest of its dataset (the default") {
		t.Errorf("prune by default: exit %d, out %q, err %q", res.code, res.out, res.errOut)
	}
	// A dry run lists what would go, and removes nothing. The newest run
	// (the one an hour old) is kept; so is the one still running.
	res = h.run(ctx, "runs", "prune", "--keep", "1", "--dry-run")
	want := []string{ids[1], ids[2], "interrupted"}
	slices.Sort(want)
	got := strings.Fields(res.out)
	slices.Sort(got)
	if res.code != 0 || !slices.Equal(got, want) || !strings.Contains(res.errOut, "would remove 3 of 5 runs (21 result rows)") ||
		!strings.Contains(res.errOut, "kept 1 unfinished run started in the last 7 days: another process may still be writing it") {
		t.Errorf("dry run: exit %d, out %q (want %v), err %q", res.code, res.out, want, res.errOut)
	}
	if got := listed(); !slices.Equal(got, before) {
		t.Fatalf("a dry run removed runs: %v left of %v", got, before)
	}
	// Younger than a day, and so kept, whatever --keep says.
	res = h.run(ctx, "runs", "prune", "--keep", "0", "--older-than", "1d")
	if res.code != 0 || !strings.Contains(res.errOut, "removed 1 of 5 runs (1 result row)") || strings.TrimSpace(res.out) != "interrupted" {
		t.Errorf("keep 0, older than 1d: exit %d, out %q, err %q; want the run 8 days old alone removed", res.code, res.out, res.errOut)
	}
	res = h.run(ctx, "runs", "prune", "--keep", "1")
	if res.code != 0 || !strings.Contains(res.errOut, "removed 2 of 4 runs (20 result rows)") || !strings.Contains(res.errOut, "holds ") {
		t.Errorf("keep 1: exit %d, err %q", res.code, res.errOut)
	}
	want = []string{ids[0], "running"}
	slices.Sort(want)
	if got := listed(); !slices.Equal(got, want) {
		t.Errorf("runs left %v, want %v", got, want)
	}
	// Every answer is still cached: the rerun pays for none.
	res = h.run(ctx, "eval", data, "-f", "json", "-q")
	var rep evalJSON
	if res.code != 0 || json.Unmarshal([]byte(res.out), &rep) != nil || rep.Models[0].Cached != 10 || h.calls.Load() != paid {
		t.Errorf("rerun after pruning: exit %d, %d cached, %d new calls; want all 10 cached and none paid", res.code, rep.Models[0].Cached, h.calls.Load()-paid)
	}
	// --vacuum gives the free pages back.
	res = h.run(ctx, "runs", "prune", "--keep", "0", "--older-than", "0s", "--vacuum")
	if res.code != 0 || !strings.Contains(res.errOut, "removed 2 of 3 runs") || !strings.Contains(res.errOut, "VACUUM took") {
		t.Errorf("vacuum: exit %d, err %q", res.code, res.errOut)
	}
	if err := sqlite.Check(ctx, h.db); err != nil {
		t.Error(err)
	}
}

// TestCacheCheck: digest cache check reads the whole SQLite database and
// passes a whole one; a damaged one is one line, exit 1; what is no
// SQLite file to check is exit 2, or 1 for a file digest will not open.
func TestCacheCheck(t *testing.T) {
	ctx := context.Background()
	real := realDatabase(t)
	h := newHarness(t)
	os.MkdirAll(filepath.Dir(h.db), 0o700)
	os.WriteFile(h.db, real, 0o600)
	oneLineError(t, h.run(ctx, "cache", "check", h.db), 2, "cache check takes no argument", "Try: digest cache check --db "+h.db)
	res := h.run(ctx, "cache", "check")
	if res.code != 0 || !strings.Contains(res.errOut, "passed SQLite's integrity check") {
		t.Fatalf("a whole database: exit %d, %q", res.code, res.errOut)
	}
	if entries, _ := os.ReadDir(filepath.Dir(h.db)); len(entries) != 1 {
		t.Errorf("the check left %d files in the folder, want the database alone", len(entries))
	}

	// Damaged far from the header and the schema: opening it does not see
	// it, the check does.
	damaged := bytes.Clone(real)
	page := len(real) / 4096 / 2
	for i := page * 4096; i < (page+1)*4096; i++ {
		damaged[i] = byte(i*7919 + i>>8)
	}
	os.WriteFile(h.db, damaged, 0o600)
	res = h.run(ctx, "cache", "check")
	oneLineError(t, res, 1, h.db, "integrity check")
	if got, _ := os.ReadFile(h.db); !bytes.Equal(got, damaged) {
		t.Error("the check changed the file")
	}

	for _, c := range []struct {
		name string
		db   func(t *testing.T) string
		code int
		want string
	}{
		{"no database", func(t *testing.T) string { return filepath.Join(t.TempDir(), "none.db") }, 2, "no database at "},
		{"a server", func(t *testing.T) string { return "postgres://digest@127.0.0.1:1/digest" }, 2, "pg_amcheck"},
		{"not SQLite", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "notes.db")
			os.WriteFile(p, []byte("my notes\n"), 0o600)
			return p
		}, 1, "no SQLite header"},
		{"a named pipe", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "pipe.db")
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Skipf("no FIFOs here: %v", err)
			}
			return p
		}, 1, "is a named pipe"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			h.db = c.db(t)
			oneLineError(t, h.run(ctx, "cache", "check"), c.code, c.want)
		})
	}
}

// TestRunsPruneLeavesHostileDatabasesAsTheyWere: runs prune writes, so a
// file digest must not use is refused in one line, exit 1, and left byte
// for byte as it was, with nothing beside it.
func TestRunsPruneLeavesHostileDatabasesAsTheyWere(t *testing.T) {
	real := realDatabase(t)
	for _, c := range []struct {
		name    string
		content []byte
		want    string
	}{
		{"truncated", real[:len(real)/2/4096*4096], "(truncated: "},
		{"another program's SQLite database", foreignDatabase(t), "SQLite database of another program"},
		{"not SQLite", []byte("my notes\n"), "not a usable SQLite database"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			h.db = filepath.Join(t.TempDir(), "digest.db")
			os.WriteFile(h.db, c.content, 0o600)
			oneLineError(t, h.run(context.Background(), "runs", "prune", "--keep", "0"), 1, h.db, c.want)
			if got, _ := os.ReadFile(h.db); !bytes.Equal(got, c.content) {
				t.Error("the file changed")
			}
			if entries, _ := os.ReadDir(filepath.Dir(h.db)); len(entries) != 1 {
				t.Errorf("%d files beside it, want none", len(entries)-1)
			}
		})
	}
}
