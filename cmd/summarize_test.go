package cmd

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/digest-cli/digest/internal/cmdutil"
	"github.com/digest-cli/digest/internal/gittest"
	"github.com/digest-cli/digest/internal/iostreams"
	"github.com/digest-cli/digest/internal/provider"
)

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

// TestSummarizeGolden: the command writes each format's changelog to
// standard output, as its writer writes it (golden), and a line of counts
// on standard error (summarize.TestReleaseNotesGolden checks the writers
// on release notes).
func TestSummarizeGolden(t *testing.T) {
	f := fixture(t)
	for format, file := range map[string]string{"markdown": "changelog.md", "jsonl": "changelog.jsonl", "json": "changelog.json"} {
		t.Run(format, func(t *testing.T) {
			res := newHarness(t).run(context.Background(), "summarize", f.Dir, "--format", format)
			says(t, res, 0, nil, "8 commits seen, 0 cached, 8 summarized, 0 failed, 3 files skipped")
			golden(t, file, res.out)
		})
	}
}

// TestErrorsAndExitCodes: each bad use of the command is one line on
// standard error and exit 2 (bad usage) or 1 (a run that cannot be done),
// with nothing on standard output and nothing sent.
func TestErrorsAndExitCodes(t *testing.T) {
	f := fixture(t)
	notRepo := t.TempDir()
	file := filepath.Join(f.Dir, "README.md")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"not a repository", []string{"summarize", notRepo}, 1, "is not a git repository"},
		{"missing path", []string{"summarize", filepath.Join(notRepo, "nope")}, 1, "no such directory"},
		{"a file", []string{"summarize", file}, 1, "is a file, not a repository. Try: the directory of its repository (" + f.Dir + ")"},
		{"zero concurrency", []string{"summarize", f.Dir, "--concurrency", "0"}, 2, "--concurrency must be at least 1"},
		{"negative budget", []string{"summarize", f.Dir, "--max-diff-tokens", "-5"}, 2, "--max-diff-tokens must be at least 1"},
		{"negative max commits", []string{"summarize", f.Dir, "-n", "-1"}, 2, "--max-commits cannot be negative"},
		{"unknown format", []string{"summarize", f.Dir, "--format", "xml"}, 2, `unknown format "xml"`},
		{"bad date", []string{"summarize", f.Dir, "--since", "soon"}, 2, `--since: cannot read date "soon"`},
		{"bad model", []string{"summarize", f.Dir, "--model", "gpt4"}, 2, `model "gpt4" is not PROVIDER:MODEL`},
		{"unknown provider", []string{"summarize", f.Dir, "--model", "acme:m1"}, 2, `unknown provider "acme"`},
		{"unknown tokenizer", []string{"summarize", f.Dir, "--tokenizer", "p50k"}, 2, `unknown tokenizer "p50k"`},
		{"unknown flag", []string{"summarize", "--frobnicate"}, 2, "unknown flag: --frobnicate. Try: digest summarize --help"},
		{"unknown root flag", []string{"--frobnicate"}, 2, "unknown flag: --frobnicate. Try: digest --help"},
		{"unknown command", []string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{"bad env value", []string{"summarize", f.Dir}, 2, `DIGEST_CONCURRENCY="many"`},
		{"unknown revision", []string{"summarize", f.Dir, "--rev", "v9..HEAD"}, 1, `unknown revision "v9"`},
		{"all and rev", []string{"summarize", f.Dir, "--all", "--rev", "HEAD"}, 2, "--all and --rev cannot be combined"},
		{"unknown grouping", []string{"summarize", f.Dir, "--group-by", "author"}, 2, `--group-by "author": want one of type, date, none`},
		{"template and format", []string{"summarize", f.Dir, "--template", "x.tmpl", "-f", "jsonl"}, 2, "--template and --format jsonl cannot be combined"},
		{"missing template", []string{"summarize", f.Dir, "--template", filepath.Join(notRepo, "none.tmpl")}, 2, "--template: open"},
		{"repo id for two repos", []string{"summarize", f.Dir, f.Dir, "--repo-id", "x"}, 2, "--repo-id names one repository"},
		{"step summary outside CI", []string{"summarize", f.Dir, "--step-summary"}, 2, "GITHUB_STEP_SUMMARY, which is not set"},
		{"missing output directory", []string{"summarize", f.Dir, "-o", filepath.Join(notRepo, "missing", "x.md")}, 2, "does not exist"},
		{"bad pathspec", []string{"summarize", f.Dir, "--", ":(nonsense)x"}, 2, "path \":(nonsense)x\""}, // history.TestCheckPathspecRefusesWhatGitCannotRead
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			if tt.name == "bad env value" {
				h.env["DIGEST_CONCURRENCY"] = "many"
			}
			res := h.run(context.Background(), tt.args...)
			if res.code != tt.code || !strings.HasPrefix(res.errOut, "digest: ") || !strings.Contains(res.errOut, tt.msg) || strings.Count(strings.TrimSpace(res.errOut), "\n") != 0 {
				t.Errorf("exit %d, stderr %q; want exit %d and one line saying %q", res.code, res.errOut, tt.code, tt.msg)
			}
			if res.out != "" || h.calls.Load() != 0 {
				t.Errorf("a failed run wrote %q and made %d provider calls", res.out, h.calls.Load())
			}
		})
	}
}

// says checks a run's exit code and that standard output holds each of
// out and standard error each of errs.
func says(t *testing.T, res result, code int, out []string, errs ...string) {
	t.Helper()
	if res.code != code {
		t.Errorf("exit %d, want %d; stderr %q", res.code, code, res.errOut)
	}
	for _, want := range out {
		if !strings.Contains(res.out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, res.out)
		}
	}
	for _, want := range errs {
		if !strings.Contains(res.errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, res.errOut)
		}
	}
}

// refuse answers HTTP 400 to the requests match picks.
func refuse(match func(req provider.Request) bool) func(provider.Provider) provider.Provider {
	return func(next provider.Provider) provider.Provider {
		return provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
			if match(req) {
				return provider.Response{}, &provider.Error{Provider: "test", Kind: provider.Permanent, StatusCode: 400, Message: "upstream said no"}
			}
			return next.Complete(ctx, req)
		})
	}
}

// TestNothingToSummarize: an empty repository is no error: the run says
// so and exits 0; with HEAD on a branch with no commits yet, as after `git
// checkout --orphan`, it names a branch that has commits
// (summarize.TestRevOnARepositoryWithUnbornHEAD checks what is summarized).
func TestNothingToSummarize(t *testing.T) {
	h := newHarness(t)
	says(t, h.run(context.Background(), "summarize", gittest.New(t).Dir), 0, []string{"No commits to summarize."}, "has no commits; nothing to summarize")
	f := fixture(t)
	if err := f.Git.Storer.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, "refs/heads/orphan")); err != nil {
		t.Fatal(err)
	}
	// Not "has no commits": main has 8.
	says(t, h.run(context.Background(), "summarize", f.Dir), 0, nil,
		"digest: "+f.Dir+": HEAD is on branch orphan, which has no commits yet; nothing to summarize. Try: --rev main, or --all")
}

// TestSummarizeParsesArguments: paths before --, pathspecs after it, --rev
// once per flag and the defaults reach the options, and the pathspecs
// reach the run with the directory digest runs in, as git takes them from
// it (summarize.TestPathspecsAreTakenFromTheDirectoryDigestRunsIn).
func TestSummarizeParsesArguments(t *testing.T) {
	ios, _, _ := iostreams.Test()
	f := NewFactory(ios, "test")
	var got *SummarizeOptions
	for _, tt := range []struct {
		args                  []string
		repos, pathspec, revs []string
	}{
		{nil, []string{"."}, nil, nil},
		{[]string{"a", "b"}, []string{"a", "b"}, nil, nil},
		{[]string{"a", "--", "x.go", "y/"}, []string{"a"}, []string{"x.go", "y/"}, nil},
		{[]string{"--rev", "feature", "--rev", "^main", "--", "docs"}, []string{"."}, []string{"docs"}, []string{"feature", "^main"}},
	} {
		cmd := NewSummarizeCmd(f, func(_ context.Context, o *SummarizeOptions) error { got = o; return nil })
		cmd.SetArgs(tt.args)
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Repos, tt.repos) || !slices.Equal(got.Pathspec, tt.pathspec) || !slices.Equal(got.Revs, tt.revs) {
			t.Errorf("%v: repos %v pathspec %v revs %v", tt.args, got.Repos, got.Pathspec, got.Revs)
		}
		if got.MaxDiffTokens != 4000 || got.Concurrency != 4 || got.Model != "offline" || got.Format != "markdown" || got.Highlights {
			t.Errorf("defaults: %+v", got)
		}
	}
	cfg, _, err := got.config(time.Now())
	if wd, _ := os.Getwd(); err != nil || !slices.Equal(cfg.PathArgs, []string{"docs"}) || cfg.WorkDir != wd || !slices.Equal(cfg.Walk.Revs, got.Revs) {
		t.Errorf("the run's pathspecs %v from %q, revs %v, %v; want docs from %q", cfg.PathArgs, cfg.WorkDir, cfg.Walk.Revs, err, wd)
	}
}

// TestOutputFileAndStepSummary: -o writes the changelog to its file and
// nothing to standard output, keeping the mode of the file it replaces;
// --step-summary appends the Markdown changelog to GITHUB_STEP_SUMMARY.
func TestOutputFileAndStepSummary(t *testing.T) {
	f := fixture(t)
	h := newHarness(t)
	dir := t.TempDir()
	summary, out := filepath.Join(dir, "step_summary.md"), filepath.Join(dir, "changes.jsonl")
	os.WriteFile(summary, []byte("# Earlier step\n"), 0o644)
	os.WriteFile(out, []byte("old\n"), 0o600)
	h.env["GITHUB_STEP_SUMMARY"] = summary
	f.AddRemoteBranch("main", f.BigTable)
	res := h.run(context.Background(), "summarize", f.Dir, "--rev", "origin/main..HEAD", "--step-summary", "-f", "jsonl", "-o", out)
	says(t, res, 0, nil)
	written, err := os.ReadFile(out)
	if info, _ := os.Stat(out); err != nil || res.out != "" || strings.Count(string(written), "\n") != 1 || !strings.Contains(string(written), f.Vendor) || info.Mode().Perm() != 0o600 {
		t.Errorf("stdout %q; -o file (of mode %v, replacing a 0600 file): %q, %v", res.out, info.Mode(), written, err)
	}
	got, _ := os.ReadFile(summary)
	if !strings.HasPrefix(string(got), "# Earlier step\n# Changelog\n") || !strings.Contains(string(got), "Call x from main.") || !strings.Contains(string(got), "(`"+f.Vendor[:7]+"`, Ada Lovelace)") {
		t.Errorf("step summary:\n%s", got)
	}
}

// TestWritersFollowTheFlags: --group-by and --template choose what writes
// the changelog (internal/changelog tests each layout).
func TestWritersFollowTheFlags(t *testing.T) {
	f := gittest.NewTaggedFixture(t)
	h := newHarness(t)
	says(t, h.run(context.Background(), "summarize", f.Dir, "--group-by", "date"), 0, []string{"### " + gittest.Epoch.Format(time.DateOnly) + "\n"})
	tmpl := filepath.Join(t.TempDir(), "notes.tmpl")
	os.WriteFile(tmpl, []byte(`{{range .Repos}}{{range .Versions}}{{.Title}}:{{range .Entries}} {{.Short}}{{end}};{{end}}{{end}}`), 0o644)
	custom := h.run(context.Background(), "summarize", f.Dir, "--template", tmpl)
	if says(t, custom, 0, []string{"v0.1.0 ("}); !strings.HasPrefix(custom.out, "Unreleased: ") {
		t.Errorf("--template: %q", custom.out)
	}
}

// TestStoppedRunSaysWhatWasStored: an interrupted run exits 130 with one
// line saying how many summaries it stored, and where; a damaged commit
// object fails the run with exit 1, naming the object, what to try, and
// how many summaries were stored before it (summarize's
// TestInterruptKeepsFinishedWork and TestDamagedCommitKeepsWhatWasWalked
// check they are kept).
func TestStoppedRunSaysWhatWasStored(t *testing.T) {
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
	if want := "digest: interrupted after 3 new summaries, stored in " + h.db + "; run the same command again to continue\n"; res.code != cmdutil.ExitInterrupted || res.errOut != want {
		t.Errorf("exit %d, stderr %q; want 130 and the one line %q", res.code, res.errOut, want)
	}

	out, err := exec.Command("git", "-C", f.Dir, "rev-list", "HEAD").Output()
	if err != nil {
		t.Skipf("git is needed to list the commits: %v", err)
	}
	damaged := strings.Fields(string(out))[3] // read as the parent of the third, before the third is handed on
	if err := os.WriteFile(filepath.Join(f.Dir, ".git", "objects", damaged[:2], damaged[2:]), []byte("not zlib"), 0o644); err != nil {
		t.Fatal(err)
	}
	res = newHarness(t).run(context.Background(), "summarize", f.Dir, "-f", "jsonl", "--batch-size", "1", "--repo-id", "damaged")
	says(t, res, 1, nil, damaged, "Try: git fsck", "2 new summaries were stored before it")
}

// TestProviderFailureNamesTheCommit: a commit the provider refuses makes
// the run exit 1, its error and the count on standard error, the others'
// changelog on standard output (summarize.TestProviderFailureKeepsTheRest
// checks what is kept and retried).
func TestProviderFailureNamesTheCommit(t *testing.T) {
	f := fixture(t)
	h := newHarness(t)
	h.wrap = refuse(func(req provider.Request) bool { return strings.Contains(req.Messages[0].Content, f.Logo) })
	res := h.run(context.Background(), "summarize", f.Dir, "-f", "jsonl", "--batch-size", "1")
	says(t, res, 1, nil, "commit "+f.Logo+": test: HTTP 400: upstream said no", "1 of 8 commits could not be summarized")
	if strings.Count(res.out, "\n") != 7 || strings.Contains(res.out, f.Logo) {
		t.Errorf("the report should hold the 7 summarized commits:\n%s", res.out)
	}
}

// TestHelpVersionAndCompletion: every command's help lists the exit
// codes, the variables standing for flags and examples; summarize's says
// pathspecs are taken, as git takes them, from the directory digest runs
// in, and quotes its example's glob for the shell not to expand it;
// version names the build; completion writes bash, zsh, fish and
// PowerShell's scripts, and refuses another shell.
func TestHelpVersionAndCompletion(t *testing.T) {
	h := newHarness(t)
	for _, args := range [][]string{{"--help"}, {"summarize", "--help"}, {"version", "--help"}, {"completion", "--help"}, {"help", "--help"}} {
		says(t, h.run(context.Background(), args...), 0, []string{"Exit codes:", "130  interrupted", "Examples:", "[$DIGEST_DB]"})
	}
	res := h.run(context.Background(), "summarize", "--help")
	if help := strings.Join(strings.Fields(res.out), " "); !strings.Contains(res.out, "[$DIGEST_MAX_DIFF_TOKENS]") ||
		!strings.Contains(help, "relative to the directory digest runs in when that lies in the repository's work tree") || strings.Contains(help, " docs/*.md") {
		t.Errorf("summarize --help does not name DIGEST_MAX_DIFF_TOKENS, say where pathspecs are from, or quote docs/*.md:\n%s", res.out)
	}
	says(t, h.run(context.Background(), "--help"), 0, []string{"soft limit of 72 MiB", "GOMEMLIMIT=off"})
	if res := h.run(context.Background(), "version"); res.code != 0 || !strings.HasPrefix(res.out, "digest v1.2.3-test go") {
		t.Errorf("version: %d %q", res.code, res.out)
	}
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		says(t, h.run(context.Background(), "completion", shell), 0, []string{"digest"})
	}
	says(t, h.run(context.Background(), "completion", "tcsh"), 2, nil)
}

// TestNoUsableRepositoryWritesNoChangelog: a run over several repositories
// names each one set aside on a line of its own and exits 1, writing the
// usable ones' changelog
// (summarize.TestOneUnusableRepositoryDoesNotStopTheOthers checks what is
// set aside); when none is usable it writes nothing: it once wrote "No
// commits to summarize." over -o's file, said "the others' changelog is
// written" of no others, and printed a dry run's estimate of nothing.
func TestNoUsableRepositoryWritesNoChangelog(t *testing.T) {
	f := fixture(t)
	notRepo := t.TempDir()
	missing := filepath.Join(notRepo, "nope")
	h := newHarness(t)
	res := h.run(context.Background(), "summarize", f.Dir, notRepo, "--rev", f.Root, "-f", "jsonl")
	says(t, res, 1, []string{f.Root}, "digest: skipped "+notRepo+": "+notRepo+" is not a git repository")
	lines := strings.Split(strings.TrimSpace(res.errOut), "\n")
	if last := lines[len(lines)-1]; strings.Count(res.out, "\n") != 1 || !strings.Contains(last, "1 of 2 repositories could not be summarized") || !strings.Contains(last, "Try: ") {
		t.Errorf("want the usable repository's changelog whole, and last the error:\n%s\n%s", res.out, res.errOut)
	}
	out := filepath.Join(t.TempDir(), "CHANGELOG.md")
	os.WriteFile(out, []byte("# the published notes\n"), 0o644)
	for _, extra := range [][]string{{"-o", out}, {"-f", "json", "-o", out}, {"--dry-run"}} {
		res := h.run(context.Background(), append([]string{"summarize", notRepo, missing}, extra...)...)
		if res.code != 1 || res.out != "" {
			t.Errorf("%v: exit %d, want 1; stdout %q, want nothing", extra, res.code, res.out)
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

// TestDryRunLeavesTheChangelogAndSaysSo: -o names the changelog; a dry run
// (the same command with --dry-run added) leaves it as it is, prints the
// estimate on standard output, and says where it went; the walk's
// warnings (here of a --rev git finds ambiguous) reach standard error
// (summarize.TestRevRepeats checks the walk).
func TestDryRunLeavesTheChangelogAndSaysSo(t *testing.T) {
	f := fixture(t)
	f.Tag("feature") // a tag named like the branch: git uses the tag, and warns
	out := filepath.Join(t.TempDir(), "CHANGELOG.md")
	os.WriteFile(out, []byte("# Changelog\n"), 0o644)
	res := newHarness(t).run(context.Background(), "summarize", f.Dir, "--rev", "feature", "-o", out, "--dry-run")
	says(t, res, 0, []string{"dry run: 8 commits"}, "--dry-run leaves "+out+" as it is", `refname 'feature' is ambiguous`)
	if b, _ := os.ReadFile(out); string(b) != "# Changelog\n" {
		t.Errorf("the changelog was changed by a dry run: %q", b)
	}
}
