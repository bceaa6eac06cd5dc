package cmd

// Hostile input: each case drives the real command line and checks for one
// clear line (what is wrong, then "Try: ..."), the documented exit code, no
// panic and nothing already done lost, or a warning and the rest done.
//
// Cases covered by tests elsewhere, not repeated here:
//
//	path that is not a repository     TestErrorsAndExitCodes/"not a repository" and /"missing path" (exit 1)
//	empty repository                  TestNothingToSummarize (exit 0, "has no commits")
//	missing objects                   internal/summarize TestMissingObjectWarnsAndSummarizesTheRest (warning naming the blob, the rest summarized)
//	shallow clone, 50 MB line,        internal/summarize TestHostileShallowClone, TestHostileFiftyMegabyteLine,
//	10,000 files, non-UTF-8 input,    TestHostileTenThousandFiles, TestHostileNonUTF8EverywhereAndBinary,
//	5 MB commit message               TestHostileFiveMegabyteCommitMessage (what is read, sent and kept)
//	binary content                    TestSummarizeGolden (logo.png skipped as binary in every format);
//	                                  internal/history TestDiffSkipsAndRenames
//	non-UTF-8 text in a diff          internal/history TestDiffSkipsAndRenames (U+FFFD in place of bad bytes)
//	malformed JSONL                   TestEvalDatasetsThatCannotRun (FILE:2:, --skip-invalid);
//	                                  internal/dataset TestLineErrors, TestSkipInvalid, FuzzRead
//	JSONL line limit, in the reader   internal/dataset TestMaxLineBytes, TestHundredMegabyteLine (memory)
//	unknown provider or model spec    TestErrorsAndExitCodes/"bad model", /"unknown provider" (summarize)
//	missing API key                   TestHostedModelWithoutKeyNamesTheVariable (summarize; eval below)
//	refused API key                   TestBadKeyStopsTheRunAndNamesTheVariable, internal/eval TestFatalErrorStopsEveryModel
//	text file in place of a database  TestHostileDatabaseFiles; internal/store TestOpenRefusesFilesThatAreNotSQLite
//	unusable database paths           internal/store TestOpenReportsUnusablePaths
//
// Added here: non-UTF-8 bytes in every output format and on the wire,
// a 100 MB JSONL line through digest eval, eval's unknown provider and
// missing key, invalid values of every numeric and duration flag of both
// commands, and unwritable, corrupt, truncated and foreign databases, each
// left byte for byte as it was.

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/gittest"
)

// oneLineError checks the promise every failure keeps: a non-zero exit
// code, and a single line on standard error saying what is wrong and what
// to try, each of wants in it.
func oneLineError(t *testing.T, res result, code int, wants ...string) {
	t.Helper()
	if res.code != code {
		t.Errorf("exit %d, want %d; stderr %q", res.code, code, res.errOut)
	}
	msg := strings.TrimSpace(res.errOut)
	if strings.Count(msg, "\n") != 0 || !strings.HasPrefix(msg, "digest: ") {
		t.Errorf("want one line starting with digest:, got %q", res.errOut)
	}
	for _, w := range append(wants, "Try: ") {
		if !strings.Contains(msg, w) {
			t.Errorf("stderr %q does not say %q", msg, w)
		}
	}
	if strings.Contains(res.errOut, "panic") || strings.Contains(res.errOut, "goroutine ") {
		t.Errorf("a panic: %s", res.errOut)
	}
}

// TestNonUTF8InEveryFormatAndOnTheWire feeds Latin-1 bytes through the
// author, the message and a file to a hosted model over the OpenAI wire
// format: every body that leaves the machine and every output format is
// valid UTF-8, with U+FFFD for the bytes that could not be read
// (summarize.TestHostileNonUTF8EverywhereAndBinary checks what is sent
// and stored).
func TestNonUTF8InEveryFormatAndOnTheWire(t *testing.T) {
	dir, _ := gittest.Latin1Repo(t)
	srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second})
	h := newHarness(t)
	h.env["OPENAI_API_KEY"] = "k"
	for _, format := range []string{"jsonl", "markdown", "json"} {
		h.db = filepath.Join(t.TempDir(), "d.db")
		res := h.run(context.Background(), "summarize", dir, "-f", format, "--model", "openai:gpt-4o-mini", "--base-url", srv.OpenAIBaseURL())
		if res.code != 0 {
			t.Fatalf("%s: exit %d: %s", format, res.code, res.errOut)
		}
		if !utf8.ValidString(res.out) || !utf8.ValidString(res.errOut) {
			t.Errorf("%s: the output is not valid UTF-8:\n%q", format, res.out)
		}
		if !strings.Contains(res.out, "Ajout\uFFFD des noms") {
			t.Errorf("%s: the subject should keep its readable part:\n%s", format, res.out)
		}
		if format == "jsonl" && !strings.Contains(res.out, `{"path":"photo.jpg","reason":"binary"}`) {
			t.Errorf("the binary file should be named as skipped:\n%s", res.out)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want one per run", len(reqs))
	}
	for _, req := range reqs {
		if !utf8.Valid(req.Body) {
			t.Errorf("a request body is not valid UTF-8: %q", req.Body)
		}
	}
}

// TestHostileFlagValues gives every numeric and duration flag of both
// commands a value it cannot take: each is a usage error (exit 2) of one
// line naming the flag, before anything is read, stored or sent.
func TestHostileFlagValues(t *testing.T) {
	repo := fixture(t).Dir
	data := sums(t)
	for _, tt := range []struct {
		flag  string
		value string
	}{
		{"--max-commits", "-1"},
		{"--max-diff-tokens", "-5"},
		{"--max-diff-tokens", "0"},
		{"--concurrency", "0"},
		{"--concurrency", "-3"},
		{"--batch-size", "0"},
		{"--batch-window", "-1s"},
		{"--batch-window", "soon"},
		{"--rpm", "-1"},
		{"--tpm", "-5"},
		{"--rpm", "lots"},
		{"--timeout", "5x"},
		{"--timeout", "-1s"},
		{"--max-cost", "-1"},
		{"--max-cost", "NaN"},
		{"--max-cost", "Inf"},
		{"--lease", "abc"},
		{"--lease", "0"},
		{"--lease", "-5m"},
	} {
		h := newHarness(t)
		res := h.run(context.Background(), "summarize", repo, tt.flag, tt.value)
		t.Run("summarize "+tt.flag+"="+tt.value, func(t *testing.T) { oneLineError(t, res, 2, tt.flag) })
		if h.calls.Load() != 0 || res.out != "" {
			t.Errorf("summarize %s %s: %d calls, stdout %q", tt.flag, tt.value, h.calls.Load(), res.out)
		}
	}
	for _, tt := range []struct {
		flag  string
		value string
	}{
		{"--max-tokens", "0"},
		{"--repeat", "0"},
		{"--repeat", "-2"},
		{"--limit", "-1"},
		{"--tolerance", "-0.1"},
		{"--tolerance", "NaN"},
		{"--temperature", "-1"},
		{"--temperature", "NaN"},
		{"--concurrency", "0"},
		{"--concurrency", "-1"},
		{"--timeout", "5x"},
		{"--timeout", "-1s"},
		{"--rpm", "-1"},
		{"--tpm", "-5"},
		{"--max-cost", "-1"},
		{"--max-cost", "+Inf"},
		{"--lease", "abc"},
		{"--seed", "1.5"},
	} {
		h := newHarness(t)
		res := h.run(context.Background(), "eval", data, tt.flag, tt.value)
		t.Run("eval "+tt.flag+"="+tt.value, func(t *testing.T) { oneLineError(t, res, 2, tt.flag) })
		if h.calls.Load() != 0 || res.out != "" {
			t.Errorf("eval %s %s: %d calls, stdout %q", tt.flag, tt.value, h.calls.Load(), res.out)
		}
		if _, err := os.Stat(h.db); err == nil {
			t.Errorf("eval %s %s: a usage error created the database", tt.flag, tt.value)
		}
	}
	// A DIGEST_* variable is checked like the flag it stands for.
	h := newHarness(t)
	h.env["DIGEST_TIMEOUT"] = "forever"
	oneLineError(t, h.run(context.Background(), "eval", data), 2, "DIGEST_TIMEOUT", "--timeout")
}

// realDatabase is a digest database holding one run's summaries.
func realDatabase(t *testing.T) []byte {
	t.Helper()
	h := newHarness(t)
	if res := h.run(context.Background(), "summarize", fixture(t).Dir, "-q"); res.code != 0 {
		t.Fatal(res.errOut)
	}
	b, err := os.ReadFile(h.db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(h.db + "-wal"); err == nil {
		t.Fatal("the database was left with a -wal file: a copy of the main file alone would not be whole")
	}
	return b
}

// foreignDatabase is a SQLite database of another program.
func foreignDatabase(t *testing.T) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "notes.sqlite")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`CREATE TABLE notes (body TEXT)`, `INSERT INTO notes VALUES ('my notes')`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestHostileDatabaseFiles points --db at files digest must not use: each
// command says so in one line, exits 1, and leaves the file byte for byte
// as it was, with no -wal or -shm beside it.
func TestHostileDatabaseFiles(t *testing.T) {
	repo := fixture(t).Dir
	data := sums(t)
	random := make([]byte, 64<<10)
	for i := range random {
		random[i] = byte(i*7919 + i>>8*31)
	}
	real := realDatabase(t)
	cases := []struct {
		name    string
		content []byte
		want    string
	}{
		{"random bytes", random, "not a usable SQLite database"},
		{"truncated to its first page", real[:4096], "(truncated: "},
		{"truncated to half", real[:len(real)/2/4096*4096], "(truncated: "},
		{"truncated mid-page", real[:len(real)-1000], "(truncated: "},
		{"another program's SQLite database", foreignDatabase(t), "SQLite database of another program"},
	}
	commands := map[string][]string{
		"summarize": {"summarize", repo},
		"eval":      {"eval", data, "-f", "json"},
		"runs list": {"runs", "list"},
	}
	for _, c := range cases {
		for name, args := range commands {
			t.Run(c.name+"/"+name, func(t *testing.T) {
				h := newHarness(t)
				h.db = filepath.Join(t.TempDir(), "digest.db")
				if err := os.WriteFile(h.db, c.content, 0o600); err != nil {
					t.Fatal(err)
				}
				res := h.run(context.Background(), args...)
				oneLineError(t, res, 1, h.db, c.want)
				if got, err := os.ReadFile(h.db); err != nil || !bytes.Equal(got, c.content) {
					t.Errorf("the file changed (%d bytes before, %d after, %v)", len(c.content), len(got), err)
				}
				for _, side := range []string{"-wal", "-shm", "-journal"} {
					if _, err := os.Stat(h.db + side); err == nil {
						t.Errorf("%s%s was created beside it", h.db, side)
					}
				}
				if h.calls.Load() != 0 {
					t.Errorf("%d provider calls", h.calls.Load())
				}
			})
		}
	}
	// The intact database still works: the refusals above are about the
	// files, not about digest's own databases.
	h := newHarness(t)
	h.db = filepath.Join(t.TempDir(), "digest.db")
	if err := os.WriteFile(h.db, real, 0o600); err != nil {
		t.Fatal(err)
	}
	if res := h.run(context.Background(), "summarize", repo, "-f", "jsonl"); res.code != 0 || strings.Count(res.out, `"cached":true`) != 8 {
		t.Errorf("a copy of a real database: exit %d, %s", res.code, res.errOut)
	}
}

// TestHostileUnwritableDatabase asks for a database where none can be
// written: under a regular file (refused even to root), in a read-only
// directory and as a read-only file (where permissions bind).
func TestHostileUnwritableDatabase(t *testing.T) {
	repo := fixture(t).Dir
	data := sums(t)
	type place struct {
		name  string
		path  func(t *testing.T) string
		want  string
		root  bool // whether the case holds for root, whom permissions do not bind
		check func(t *testing.T)
	}
	var keep string
	places := []place{
		{
			name: "under a regular file",
			root: true,
			path: func(t *testing.T) string {
				keep = filepath.Join(t.TempDir(), "plain")
				if err := os.WriteFile(keep, []byte("keep me"), 0o600); err != nil {
					t.Fatal(err)
				}
				return filepath.Join(keep, "sub", "digest.db")
			},
			want: "create database directory",
			check: func(t *testing.T) {
				if b, _ := os.ReadFile(keep); string(b) != "keep me" {
					t.Errorf("the file in the way now holds %q", b)
				}
			},
		},
		{
			name: "in a read-only directory",
			path: func(t *testing.T) string {
				dir := filepath.Join(t.TempDir(), "ro")
				if err := os.Mkdir(dir, 0o500); err != nil {
					t.Fatal(err)
				}
				return filepath.Join(dir, "digest.db")
			},
			want: "digest.db",
		},
		{
			name: "a read-only database file",
			path: func(t *testing.T) string {
				path := filepath.Join(t.TempDir(), "digest.db")
				if err := os.WriteFile(path, realDatabase(t), 0o400); err != nil {
					t.Fatal(err)
				}
				return path
			},
			want: "digest.db",
		},
	}
	for _, p := range places {
		for name, args := range map[string][]string{"summarize": {"summarize", repo}, "eval": {"eval", data, "-f", "json"}} {
			t.Run(p.name+"/"+name, func(t *testing.T) {
				if !p.root && os.Geteuid() == 0 {
					t.Skip("root is not bound by file permissions; the regular-file case covers root")
				}
				h := newHarness(t)
				h.db = p.path(t)
				res := h.run(context.Background(), args...)
				oneLineError(t, res, 1, p.want, "Try: --db")
				if p.check != nil {
					p.check(t)
				}
			})
		}
	}
}
