package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/digest-cli/digest/internal/cmdutil"
	"github.com/digest-cli/digest/internal/gittest"
	"github.com/digest-cli/digest/internal/iostreams"
	"github.com/digest-cli/digest/internal/prompt"
	"github.com/digest-cli/digest/internal/provider"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// harness runs digest in-process against a real database and counts the
// requests that reach the provider.
type harness struct {
	t     testing.TB
	db    string
	env   map[string]string
	calls atomic.Int32
	// wrap, when set, stands between digest and the offline provider.
	wrap func(next provider.Provider) provider.Provider
	// stdin, when set, is what digest reads as standard input.
	stdin io.Reader
	// raw hands digest the providers' own clients, batch APIs included,
	// uncounted and unwrapped.
	raw bool
}

func newHarness(t testing.TB) *harness {
	return &harness{t: t, db: filepath.Join(t.TempDir(), "cache", "digest.db"), env: map[string]string{}}
}

type result struct {
	code        int
	out, errOut string
}

func (h *harness) run(ctx context.Context, args ...string) result {
	h.t.Helper()
	ios, out, errOut := iostreams.Test()
	if h.stdin != nil {
		ios.In = h.stdin
	}
	f := NewFactory(ios, "v1.2.3-test")
	f.Getenv = func(k string) string { return h.env[k] }
	f.Provider = func(spec provider.Spec, o cmdutil.ProviderOptions) (provider.Provider, error) {
		if spec.Provider == "test" { // stands in for a hosted model under any name
			spec = provider.Spec{Provider: provider.Offline, Model: provider.Offline}
		}
		p, err := newProvider(f, spec, o)
		if err != nil || h.raw {
			return p, err
		}
		if h.wrap != nil {
			p = h.wrap(p)
		}
		return provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
			h.calls.Add(1)
			return p.Complete(ctx, req)
		}), nil
	}
	code := Execute(ctx, f, append([]string{"--db", h.db}, args...))
	return result{code, out.String(), errOut.String()}
}

// fixture builds the shared history in a directory named hello, so reports
// name the repository the same on every machine.
func fixture(t *testing.T) *gittest.Fixture {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "hello")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return gittest.NewFixtureIn(t, dir)
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	compareCase(t, filepath.Join("..", "testdata", "summarize", name), got)
}

func TestSummarizeGolden(t *testing.T) {
	f := fixture(t)
	for _, tt := range []struct{ format, file string }{
		{"markdown", "changelog.md"},
		{"jsonl", "changelog.jsonl"},
		{"json", "changelog.json"},
	} {
		t.Run(tt.format, func(t *testing.T) {
			h := newHarness(t)
			res := h.run(context.Background(), "summarize", f.Dir, "--format", tt.format)
			if res.code != 0 {
				t.Fatalf("exit %d: %s", res.code, res.errOut)
			}
			golden(t, tt.file, res.out)
			if !strings.Contains(res.errOut, "8 commits seen, 0 cached, 8 summarized, 0 failed, 3 files skipped") {
				t.Errorf("summary line: %q", res.errOut)
			}
		})
	}
}

// TestUnbornHEADSaysWhichRevToGive: with HEAD on a branch with no commits
// yet, as after `git checkout --orphan`, the run says so and names a
// branch that has commits (summarize.TestRevOnARepositoryWithUnbornHEAD
// checks what is summarized).
func TestUnbornHEADSaysWhichRevToGive(t *testing.T) {
	f := fixture(t)
	if err := f.Git.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, "refs/heads/orphan")); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t)
	// Not "has no commits": main has 8.
	want := "digest: " + f.Dir + ": HEAD is on branch orphan, which has no commits yet; nothing to summarize. Try: --rev main, or --all"
	if res := h.run(context.Background(), "summarize", f.Dir); res.code != 0 || !strings.Contains(res.errOut, want) {
		t.Errorf("without --rev the unborn HEAD has nothing to summarize: exit %d, %q, want %q", res.code, res.errOut, want)
	}
}

// TestEmptyRepositorySaysNothingToSummarize: an empty repository is no
// error: the run says so and exits 0.
func TestEmptyRepositorySaysNothingToSummarize(t *testing.T) {
	r := gittest.New(t)
	h := newHarness(t)
	res := h.run(context.Background(), "summarize", r.Dir)
	if res.code != 0 {
		t.Fatalf("exit %d, want 0: %s", res.code, res.errOut)
	}
	if !strings.Contains(res.errOut, "has no commits; nothing to summarize") || !strings.Contains(res.out, "No commits to summarize.") {
		t.Errorf("stdout %q, stderr %q", res.out, res.errOut)
	}
}

func TestErrorsAndExitCodes(t *testing.T) {
	f := fixture(t)
	notRepo := t.TempDir()
	for _, tt := range []struct {
		name string
		env  map[string]string
		args []string
		code int
		msg  string
	}{
		{"not a repository", nil, []string{"summarize", notRepo}, 1, "is not a git repository"},
		{"missing path", nil, []string{"summarize", filepath.Join(notRepo, "nope")}, 1, "no such directory"},
		{"zero concurrency", nil, []string{"summarize", f.Dir, "--concurrency", "0"}, 2, "--concurrency must be at least 1"},
		{"negative budget", nil, []string{"summarize", f.Dir, "--max-diff-tokens", "-5"}, 2, "--max-diff-tokens must be at least 1"},
		{"negative max commits", nil, []string{"summarize", f.Dir, "-n", "-1"}, 2, "--max-commits cannot be negative"},
		{"unknown format", nil, []string{"summarize", f.Dir, "--format", "xml"}, 2, `unknown format "xml"`},
		{"bad date", nil, []string{"summarize", f.Dir, "--since", "soon"}, 2, `--since: cannot read date "soon"`},
		{"bad model", nil, []string{"summarize", f.Dir, "--model", "gpt4"}, 2, `model "gpt4" is not PROVIDER:MODEL`},
		{"unknown provider", nil, []string{"summarize", f.Dir, "--model", "acme:m1"}, 2, `unknown provider "acme"`},
		{"unknown tokenizer", nil, []string{"summarize", f.Dir, "--tokenizer", "p50k"}, 2, `unknown tokenizer "p50k"`},
		{"unknown flag", nil, []string{"summarize", "--frobnicate"}, 2, "unknown flag: --frobnicate. Try: digest summarize --help"},
		{"unknown root flag", nil, []string{"--frobnicate"}, 2, "unknown flag: --frobnicate. Try: digest --help"},
		{"unknown command", nil, []string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{"bad env value", map[string]string{"DIGEST_CONCURRENCY": "many"}, []string{"summarize", f.Dir}, 2, `DIGEST_CONCURRENCY="many"`},
		{"unknown revision", nil, []string{"summarize", f.Dir, "--rev", "v9..HEAD"}, 1, `unknown revision "v9"`},
		{"all and rev", nil, []string{"summarize", f.Dir, "--all", "--rev", "HEAD"}, 2, "--all and --rev cannot be combined"},
		{"unknown grouping", nil, []string{"summarize", f.Dir, "--group-by", "author"}, 2, `--group-by "author": want one of type, date, none`},
		{"template and format", nil, []string{"summarize", f.Dir, "--template", "x.tmpl", "-f", "jsonl"}, 2, "--template and --format jsonl cannot be combined"},
		{"missing template", nil, []string{"summarize", f.Dir, "--template", filepath.Join(notRepo, "none.tmpl")}, 2, "--template: open"},
		{"repo id for two repos", nil, []string{"summarize", f.Dir, f.Dir, "--repo-id", "x"}, 2, "--repo-id names one repository"},
		{"step summary outside CI", nil, []string{"summarize", f.Dir, "--step-summary"}, 2, "GITHUB_STEP_SUMMARY, which is not set"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			if tt.env != nil {
				h.env = tt.env
			}
			res := h.run(context.Background(), tt.args...)
			if res.code != tt.code {
				t.Errorf("exit %d, want %d; stderr %q", res.code, tt.code, res.errOut)
			}
			if !strings.Contains(res.errOut, tt.msg) {
				t.Errorf("stderr %q does not say %q", res.errOut, tt.msg)
			}
			if lines := strings.Count(strings.TrimSpace(res.errOut), "\n"); lines != 0 {
				t.Errorf("the error takes %d lines, want one: %q", lines+1, res.errOut)
			}
			if res.out != "" {
				t.Errorf("stdout is not empty on error: %q", res.out)
			}
			if h.calls.Load() != 0 {
				t.Errorf("%d provider calls on a failed run", h.calls.Load())
			}
		})
	}
}

func TestFlagBeatsEnvBeatsDefault(t *testing.T) {
	f := fixture(t)
	h := newHarness(t)
	count := func(res result) int { return strings.Count(res.out, "\n") }
	if n := count(h.run(context.Background(), "summarize", f.Dir, "-f", "jsonl")); n != 8 {
		t.Fatalf("default: %d commits, want 8", n)
	}
	h.env["DIGEST_MAX_COMMITS"] = "2"
	h.env["DIGEST_FORMAT"] = "jsonl"
	if n := count(h.run(context.Background(), "summarize", f.Dir)); n != 2 {
		t.Errorf("DIGEST_MAX_COMMITS=2: %d commits", n)
	}
	if n := count(h.run(context.Background(), "summarize", f.Dir, "--max-commits", "1")); n != 1 {
		t.Errorf("--max-commits 1 over DIGEST_MAX_COMMITS=2: %d commits", n)
	}
	other := filepath.Join(t.TempDir(), "env.db")
	h.env["DIGEST_DB"] = other
	ios, _, _ := iostreams.Test()
	fac := NewFactory(ios, "test")
	fac.Getenv = func(k string) string { return h.env[k] }
	if code := Execute(context.Background(), fac, []string{"summarize", f.Dir, "-q"}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("DIGEST_DB was not used: %v", err)
	}
}

func TestOutputFileAndStepSummary(t *testing.T) {
	f := fixture(t)
	h := newHarness(t)
	dir := t.TempDir()
	summary := filepath.Join(dir, "step_summary.md")
	if err := os.WriteFile(summary, []byte("# Earlier step\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.env["GITHUB_STEP_SUMMARY"] = summary
	f.AddRemoteBranch("main", f.BigTable)
	out := filepath.Join(dir, "changes.jsonl")
	res := h.run(context.Background(), "summarize", f.Dir, "--rev", "origin/main..HEAD", "--step-summary", "-f", "jsonl", "-o", out)
	if res.code != 0 || res.out != "" {
		t.Fatalf("exit %d, stdout %q, stderr %s", res.code, res.out, res.errOut)
	}
	written, err := os.ReadFile(out)
	if err != nil || strings.Count(string(written), "\n") != 1 || !strings.Contains(string(written), f.Vendor) {
		t.Errorf("-o file: %q, %v", written, err)
	}
	got, _ := os.ReadFile(summary)
	if !strings.HasPrefix(string(got), "# Earlier step\n# Changelog\n") || !strings.Contains(string(got), "Call x from main.") || !strings.Contains(string(got), "(`"+f.Vendor[:7]+"`, Ada Lovelace)") {
		t.Errorf("step summary:\n%s", got)
	}
}

func TestOutputFileKeepsItsModeAndNeedsItsDirectory(t *testing.T) {
	f := fixture(t)
	h := newHarness(t)
	out := filepath.Join(t.TempDir(), "private.md")
	if err := os.WriteFile(out, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if res := h.run(context.Background(), "summarize", f.Dir, "-o", out); res.code != 0 {
		t.Fatal(res.errOut)
	}
	if info, err := os.Stat(out); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("replacing a 0600 file: %v, %v", info.Mode(), err)
	}
	h.calls.Store(0)
	res := h.run(context.Background(), "summarize", f.Dir, "-o", filepath.Join(t.TempDir(), "missing", "x.md"))
	if res.code != 2 || !strings.Contains(res.errOut, "does not exist") || h.calls.Load() != 0 {
		t.Errorf("missing output directory: exit %d, %d calls, %q", res.code, h.calls.Load(), res.errOut)
	}
}

// TestInterruptSaysWhereTheWorkIsStored: an interrupted run exits 130 with
// one line saying how many summaries it stored, and where
// (summarize.TestInterruptKeepsFinishedWork checks they are kept).
func TestInterruptSaysWhereTheWorkIsStored(t *testing.T) {
	f := fixture(t)
	h := newHarness(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var served atomic.Int32
	h.wrap = func(next provider.Provider) provider.Provider {
		return provider.Func(func(c context.Context, req provider.Request) (provider.Response, error) {
			if served.Add(1) > 3 {
				cancel() // Ctrl-C while the fourth request is in flight
				<-c.Done()
				return provider.Response{}, c.Err()
			}
			return next.Complete(c, req)
		})
	}
	res := h.run(ctx, "summarize", f.Dir, "--concurrency", "1", "--batch-size", "1")
	if res.code != cmdutil.ExitInterrupted {
		t.Fatalf("exit %d, want 130: %s", res.code, res.errOut)
	}
	if want := "digest: interrupted after 3 new summaries, stored in " + h.db + "; run the same command again to continue\n"; res.errOut != want {
		t.Errorf("stderr: %q, want the one line %q", res.errOut, want)
	}
}

// TestProviderFailureNamesTheCommit: a commit the provider refuses makes
// the run exit 1, its error and the count on standard error, the others'
// changelog on standard output (summarize.TestProviderFailureKeepsTheRest
// checks what is kept and retried).
func TestProviderFailureNamesTheCommit(t *testing.T) {
	f := fixture(t)
	h := newHarness(t)
	h.wrap = func(next provider.Provider) provider.Provider {
		return provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
			if strings.Contains(req.Messages[0].Content, f.Logo) {
				return provider.Response{}, &provider.Error{Provider: "test", Kind: provider.Permanent, StatusCode: 400, Message: "upstream said no"}
			}
			return next.Complete(ctx, req)
		})
	}
	res := h.run(context.Background(), "summarize", f.Dir, "-f", "jsonl", "--batch-size", "1")
	if res.code != 1 {
		t.Fatalf("exit %d, want 1", res.code)
	}
	if strings.Count(res.out, "\n") != 7 || strings.Contains(res.out, f.Logo) {
		t.Errorf("the report should hold the 7 summarized commits:\n%s", res.out)
	}
	if !strings.Contains(res.errOut, "commit "+f.Logo+": test: HTTP 400: upstream said no") || !strings.Contains(res.errOut, "1 of 8 commits could not be summarized") {
		t.Errorf("stderr: %q", res.errOut)
	}
}

func TestDatabaseFileIsPrivate(t *testing.T) {
	f := fixture(t)
	h := newHarness(t)
	if res := h.run(context.Background(), "summarize", f.Dir); res.code != 0 {
		t.Fatal(res.errOut)
	}
	for path, want := range map[string]os.FileMode{h.db: 0o600, filepath.Dir(h.db): 0o700} {
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Mode().Perm(); got != want {
			t.Errorf("%s has mode %o, want %o", path, got, want)
		}
	}
}

func TestCorruptDatabaseIsNotOverwritten(t *testing.T) {
	f := fixture(t)
	h := newHarness(t)
	h.db = filepath.Join(t.TempDir(), "notes.db")
	junk := []byte("these are my notes, not a database\n")
	if err := os.WriteFile(h.db, junk, 0o600); err != nil {
		t.Fatal(err)
	}
	res := h.run(context.Background(), "summarize", f.Dir)
	if res.code != 1 || !strings.Contains(res.errOut, "not a usable SQLite database") {
		t.Errorf("exit %d, stderr %q", res.code, res.errOut)
	}
	if got, _ := os.ReadFile(h.db); !bytes.Equal(got, junk) {
		t.Error("the file was changed")
	}
}

func TestSummarizeParsesArguments(t *testing.T) {
	for _, tt := range []struct {
		args            []string
		repos, pathspec []string
	}{
		{nil, []string{"."}, nil},
		{[]string{"a", "b"}, []string{"a", "b"}, nil},
		{[]string{"--", "docs"}, []string{"."}, []string{"docs"}},
		{[]string{"a", "--", "x.go", "y/"}, []string{"a"}, []string{"x.go", "y/"}},
	} {
		ios, _, _ := iostreams.Test()
		f := NewFactory(ios, "test")
		var got *SummarizeOptions
		cmd := NewSummarizeCmd(f, func(_ context.Context, o *SummarizeOptions) error {
			got = o
			return nil
		})
		cmd.SetArgs(tt.args)
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Repos, tt.repos) || !slices.Equal(got.Pathspec, tt.pathspec) {
			t.Errorf("%v: repos %v pathspec %v", tt.args, got.Repos, got.Pathspec)
		}
		if got.MaxDiffTokens != 4000 || got.Concurrency != 4 || got.Model != "offline" || got.Format != "markdown" {
			t.Errorf("defaults: %+v", got)
		}
	}
}

func TestHelpListsExitCodesEnvAndExamples(t *testing.T) {
	h := newHarness(t)
	for _, args := range [][]string{{"--help"}, {"summarize", "--help"}, {"version", "--help"}, {"completion", "--help"}, {"help", "--help"}} {
		res := h.run(context.Background(), args...)
		if res.code != 0 {
			t.Fatalf("%v: exit %d", args, res.code)
		}
		for _, want := range []string{"Exit codes:", "130  interrupted", "Examples:", "[$DIGEST_DB]"} {
			if !strings.Contains(res.out, want) {
				t.Errorf("%v help lacks %q", args, want)
			}
		}
	}
	if res := h.run(context.Background(), "summarize", "--help"); !strings.Contains(res.out, "[$DIGEST_MAX_DIFF_TOKENS]") {
		t.Error("summarize help does not name DIGEST_MAX_DIFF_TOKENS")
	}
	if res := h.run(context.Background(), "--help"); !strings.Contains(res.out, "soft limit of 72 MiB") || !strings.Contains(res.out, "GOMEMLIMIT=off") {
		t.Error("digest --help does not tell of the memory limit and GOMEMLIMIT")
	}
}

// TestSummarizeHelpSaysWherePathspecsAreFrom: the help once said pathspecs
// were relative to the repository root, while digest takes them, as git
// does, from the directory it runs in (TestPathspecsAreTakenFromTheDirectoryDigestRunsIn);
// and its example left a glob for the shell to expand.
func TestSummarizeHelpSaysWherePathspecsAreFrom(t *testing.T) {
	res := newHarness(t).run(context.Background(), "summarize", "--help")
	help := strings.Join(strings.Fields(res.out), " ")
	if !strings.Contains(help, "relative to the directory digest runs in when that lies in the repository's work tree") {
		t.Errorf("summarize --help does not say pathspecs are taken from the directory digest runs in:\n%s", res.out)
	}
	if strings.Contains(help, " docs/*.md") {
		t.Errorf("summarize --help's example leaves docs/*.md unquoted, for the shell to expand:\n%s", res.out)
	}
}

func TestVersionAndCompletion(t *testing.T) {
	h := newHarness(t)
	if res := h.run(context.Background(), "version"); res.code != 0 || !strings.HasPrefix(res.out, "digest v1.2.3-test go") {
		t.Errorf("version: %d %q", res.code, res.out)
	}
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		if res := h.run(context.Background(), "completion", shell); res.code != 0 || !strings.Contains(res.out, "digest") {
			t.Errorf("completion %s: exit %d", shell, res.code)
		}
	}
	if res := h.run(context.Background(), "completion", "tcsh"); res.code != 2 {
		t.Errorf("completion tcsh: exit %d, want 2", res.code)
	}
}

// TestDamagedCommitSaysWhatWasStored: a damaged commit object fails the
// run with exit 1, naming the object, what to try, and how many summaries
// were stored before it (summarize.TestDamagedCommitKeepsWhatWasWalked
// checks they were).
func TestDamagedCommitSaysWhatWasStored(t *testing.T) {
	f := fixture(t)
	out, err := exec.Command("git", "-C", f.Dir, "rev-list", "HEAD").Output()
	if err != nil {
		t.Skipf("git is needed to list the commits: %v", err)
	}
	hashes := strings.Fields(string(out))
	damaged := hashes[3] // read as the parent of the third, before the third is handed on
	if err := os.WriteFile(filepath.Join(f.Dir, ".git", "objects", damaged[:2], damaged[2:]), []byte("not zlib"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t)
	res := h.run(context.Background(), "summarize", f.Dir, "-f", "jsonl", "--batch-size", "1", "--repo-id", "damaged")
	if res.code != 1 || !strings.Contains(res.errOut, damaged) || !strings.Contains(res.errOut, "Try: git fsck") || !strings.Contains(res.errOut, "2 new summaries were stored before it") {
		t.Fatalf("exit %d, stderr %q: want a failure naming %s after 2 summaries", res.code, res.errOut, damaged[:8])
	}
}

// TestUnusableRepositoriesAreNamed: a multi-repository run writes the
// usable repositories' changelog, names each one set aside on a line of
// its own, and exits 1; with one repository, its error is the run's, on
// one line (summarize.TestOneUnusableRepositoryDoesNotStopTheOthers checks
// what is set aside and summarized).
func TestUnusableRepositoriesAreNamed(t *testing.T) {
	f := fixture(t)
	notRepo := t.TempDir()
	file := filepath.Join(f.Dir, "README.md")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t)
	res := h.run(context.Background(), "summarize", f.Dir, notRepo, "--rev", f.Root, "-f", "jsonl")
	if res.code != 1 {
		t.Fatalf("exit %d, want 1: %s", res.code, res.errOut)
	}
	if n := strings.Count(res.out, "\n"); n != 1 || !strings.Contains(res.out, f.Root) {
		t.Errorf("the changelog of the usable repository was not written whole:\n%s", res.out)
	}
	lines := strings.Split(strings.TrimSpace(res.errOut), "\n")
	if !slices.ContainsFunc(lines, func(l string) bool {
		return strings.HasPrefix(l, "digest: skipped "+notRepo+": ") && strings.Contains(l, "not a git repository")
	}) {
		t.Errorf("no line names the path set aside and why:\n%s", res.errOut)
	}
	if last := lines[len(lines)-1]; !strings.Contains(last, "1 of 2 repositories could not be summarized") || !strings.Contains(last, "Try: ") {
		t.Errorf("last line %q", last)
	}
	res = h.run(context.Background(), "summarize", file)
	oneLineError(t, res, 1, "is a file, not a repository")
}

// TestNoUsableRepositoryWritesNoChangelog: when every repository of a run
// is set aside, the run writes nothing: it once wrote "No commits to
// summarize." over -o's file, said "the others' changelog is written" of
// no others, and printed a dry run's estimate of nothing.
func TestNoUsableRepositoryWritesNoChangelog(t *testing.T) {
	notRepo := t.TempDir()
	missing := filepath.Join(notRepo, "nope")
	out := filepath.Join(t.TempDir(), "CHANGELOG.md")
	if err := os.WriteFile(out, []byte("# the published notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t)
	for _, extra := range [][]string{{"-o", out}, {"-f", "json", "-o", out}, {"--dry-run"}} {
		res := h.run(context.Background(), append([]string{"summarize", notRepo, missing}, extra...)...)
		if res.code != 1 {
			t.Errorf("%v: exit %d, want 1: %s", extra, res.code, res.errOut)
		}
		if res.out != "" {
			t.Errorf("%v: stdout %q, want nothing", extra, res.out)
		}
		lines := strings.Split(strings.TrimSpace(res.errOut), "\n")
		if len(lines) != 3 || !strings.HasPrefix(lines[0], "digest: skipped "+notRepo+": ") || !strings.HasPrefix(lines[1], "digest: skipped "+missing+": ") ||
			!strings.Contains(lines[2], "none of the 2 repositories could be summarized") || !strings.Contains(lines[2], "Try: ") {
			t.Errorf("%v: stderr, want a line for each path and the error:\n%s", extra, res.errOut)
		}
		if got, _ := os.ReadFile(out); string(got) != "# the published notes\n" {
			t.Errorf("%v: -o's file became %q", extra, got)
		}
	}
}

// TestPathspecsAreTakenFromTheDirectoryDigestRunsIn's part for the
// command: pathspecs after -- are taken from the directory digest runs in
// (summarize.TestPathspecsAreTakenFromTheDirectoryDigestRunsIn compares
// them with git), and one git cannot read is a usage error.
func TestPathspecsFromTheWorkingDirectory(t *testing.T) {
	r := gittest.New(t)
	r.Write("top.txt", "1\n").Commit("Top")
	content := r.Write("site/content/a.md", "a\n").Commit("Content a")
	r.Write("docs/c.md", "c\n").Commit("Docs c")
	h := newHarness(t)
	t.Chdir(filepath.Join(r.Dir, "site"))
	res := h.run(context.Background(), "summarize", ".", "-f", "jsonl", "--", "content")
	if res.code != 0 || strings.Count(res.out, "\n") != 1 || !strings.Contains(res.out, content) {
		t.Errorf("in site/, -- content: exit %d, want the one commit under site/content:\n%s%s", res.code, res.out, res.errOut)
	}
	for _, bad := range []string{":(attr:diff)x", ":(nonsense)x", ":(glob,literal)x", ":(exclude"} {
		res := h.run(context.Background(), "summarize", ".", "--", bad)
		oneLineError(t, res, 2, "path")
	}
}

// TestRevFlagRepeats: --rev is read as rev-list's arguments, one per flag
// (summarize.TestRevRepeats checks the walk), and the walk's warnings
// reach standard error.
func TestRevFlagRepeats(t *testing.T) {
	f := fixture(t)
	h := newHarness(t)
	res := h.run(context.Background(), "summarize", f.Dir, "-f", "jsonl", "--rev", "feature", "--rev", "^"+f.Deps)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.errOut)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(res.out), "\n") {
		var row struct{ Commit string }
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatal(err)
		}
		got = append(got, row.Commit)
	}
	if want := []string{f.Rename, f.Logo}; !slices.Equal(got, want) {
		t.Errorf("--rev feature --rev ^DEPS gave %v, want %v", got, want)
	}

	f.Tag("feature") // a tag named like the branch: git uses the tag, and warns
	res = h.run(context.Background(), "summarize", f.Dir, "-f", "jsonl", "--rev", "feature", "--dry-run")
	if res.code != 0 || !strings.Contains(res.errOut, `refname 'feature' is ambiguous`) {
		t.Errorf("exit %d, stderr %q: want a warning that feature is ambiguous", res.code, res.errOut)
	}
}

// TestReleaseNotes: a tagged history with a GitHub origin gives a section
// per version, the commits linked; --group-by date and a --template too.
func TestReleaseNotes(t *testing.T) {
	f := fixture(t)
	f.Checkout("main")
	if _, err := f.Git.CreateRemote(&config.RemoteConfig{Name: "origin", URLs: []string{"git@github.com:acme/hello.git"}}); err != nil {
		t.Fatal(err)
	}
	// A lightweight tag of the third commit: its date is the commit's.
	if err := f.Git.Storer.SetReference(plumbing.NewHashReference("refs/tags/v0.1.0", plumbing.NewHash(f.Deps))); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t)
	res := h.run(context.Background(), "summarize", f.Dir)
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.errOut)
	}
	for _, want := range []string{
		"## Unreleased\n",
		"## v0.1.0 (" + gittest.Epoch.Add(2*time.Hour).Format(time.DateOnly) + ")\n",
		"([`" + f.Deps[:7] + "`](https://github.com/acme/hello/commit/" + f.Deps + "), Ada Lovelace)",
	} {
		if !strings.Contains(res.out, want) {
			t.Errorf("no %q in:\n%s", want, res.out)
		}
	}
	if strings.Index(res.out, "## Unreleased") > strings.Index(res.out, "## v0.1.0") {
		t.Errorf("Unreleased is not first:\n%s", res.out)
	}
	byDate := h.run(context.Background(), "summarize", f.Dir, "--group-by", "date")
	if byDate.code != 0 || !strings.Contains(byDate.out, "### "+gittest.Epoch.Format(time.DateOnly)+"\n") {
		t.Errorf("--group-by date: exit %d:\n%s", byDate.code, byDate.out)
	}
	tmpl := filepath.Join(t.TempDir(), "notes.tmpl")
	os.WriteFile(tmpl, []byte(`{{range .Repos}}{{range .Versions}}{{.Title}}:{{range .Entries}} {{.Short}}{{end}};{{end}}{{end}}`), 0o644)
	custom := h.run(context.Background(), "summarize", f.Dir, "--template", tmpl)
	if custom.code != 0 || !strings.HasPrefix(custom.out, "Unreleased: ") || !strings.Contains(custom.out, "v0.1.0 (") {
		t.Errorf("--template: exit %d: %q %s", custom.code, custom.out, custom.errOut)
	}
}

// TestSummarizeRunsOnItsOwnDependencies: options hold the factory the run
// uses, so a test swaps one piece of it (here the provider every target is
// built around) and runs the command's run directly.
func TestSummarizeRunsOnItsOwnDependencies(t *testing.T) {
	f := fixture(t)
	ios, out, _ := iostreams.Test()
	fac := NewFactory(ios, "test")
	fac.Globals.DB = filepath.Join(t.TempDir(), "d.db")
	var got *SummarizeOptions
	cmd := NewSummarizeCmd(fac, func(_ context.Context, o *SummarizeOptions) error { got = o; return nil })
	cmd.SetArgs([]string{f.Dir, "-f", "jsonl", "--model", "openai:m", "--rpm", "1000", "--tpm", "10000000"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int64
	got.Provider = func(spec provider.Spec, _ cmdutil.ProviderOptions) (provider.Provider, error) {
		return provider.Func(func(_ context.Context, req provider.Request) (provider.Response, error) {
			calls.Add(1)
			var answers []prompt.Answer
			for _, c := range prompt.Parse(req.Messages[0].Content) {
				answers = append(answers, prompt.Answer{Commit: c.Hash, Summary: "Changed."})
			}
			return provider.Response{Text: prompt.FormatAnswer(answers)}, nil
		}), nil
	}
	got.Getenv = func(k string) string {
		if k == "OPENAI_API_KEY" {
			return "sk-test"
		}
		return ""
	}
	if err := runSummarize(context.Background(), got); err != nil {
		t.Fatal(err)
	}
	if calls.Load() == 0 || strings.Count(out.String(), `"summary":"Changed."`) != 8 {
		t.Errorf("%d calls; output:\n%s", calls.Load(), out.String())
	}
}

// TestDryRunLeavesTheChangelogAndSaysSo: -o names the changelog; a dry run
// (the same command with --dry-run added) leaves it as it is, prints the
// estimate on standard output, and says where it went.
func TestDryRunLeavesTheChangelogAndSaysSo(t *testing.T) {
	h := newHarness(t)
	repo := historyRepo(t, 3)
	out := filepath.Join(t.TempDir(), "CHANGELOG.md")
	if err := os.WriteFile(out, []byte("# Changelog\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := h.run(context.Background(), "summarize", repo.Dir, "-o", out, "--dry-run")
	if res.code != 0 || !strings.Contains(res.out, "dry run: 3 commits") || !strings.Contains(res.errOut, "--dry-run leaves "+out+" as it is") {
		t.Errorf("exit %d, out %q, err %q", res.code, res.out, res.errOut)
	}
	if b, _ := os.ReadFile(out); string(b) != "# Changelog\n" {
		t.Errorf("the changelog was changed by a dry run: %q", b)
	}
}
