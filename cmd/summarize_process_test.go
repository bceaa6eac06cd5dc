package cmd

// The tests of digest summarize that need real processes.
//
// A --template is the user's program, and text/template lets it loop: it
// runs under a time and an output limit, in its check on sample notes and
// when it writes the changelog, and a signal stops it at once. The
// templates that spin for good run in real digest processes, which exit
// when stopped, leaving no goroutine spinning in the test binary.
//
// Processes sharing a database pay for each commit and each section's
// highlights once between them, and take over the claims of one killed
// (summarize.TestTwoRunsPayEachCommitOnce and
// TestClaimsOfADeadRunAreTakenOver check the claims within one process); a
// hang-up, a FIFO as the database and a PostgreSQL server lost mid-run
// each end the process as documented; -o writes through a device or a pipe.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/gittest"
	"github.com/digest-cli/digest/internal/pgtest"
	"github.com/digest-cli/digest/internal/prompt"
)

const (
	// spinning never ends and never writes: a billion billion turns.
	spinning = `{{range 1000000000}}{{range 1000000000}}{{end}}{{end}}`
	// spinningUnreleased spins on a real run's Unreleased section, which
	// the sample notes (one version, v1.0.0) do not have: it passes the
	// check, and spins as it writes the changelog.
	spinningUnreleased = `{{range .Repos}}{{range .Versions}}{{if not .Tag}}` + spinning + `{{end}}{{end}}{{end}}`
	// floodingUnreleased writes a gigabyte on Unreleased.
	floodingUnreleased = `{{range .Repos}}{{range .Versions}}{{if not .Tag}}{{range 100000000}}0123456789{{end}}{{end}}{{end}}{{end}}`
	// theIssues is issue 24's kind: about 100 characters that wrote 10 GB
	// to -o and exited 0.
	theIssues = `{{range 100000000}}Release notes, line after line, of a changelog that never ends: {{$.Model}}{{end}}`
	// keep is what -o holds before the run: a changelog a run must not lose.
	keep = "# Changelog\n\nwritten by an earlier run\n"
)

// templateCase is a repository of four commits, three of them released
// as v1.0.0, a database, an -o file holding keep, and a template file.
type templateCase struct {
	bin, repo, db, out, tmpl string
}

func newTemplateCase(t *testing.T, template string) templateCase {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	r := gittest.New(t)
	for i, msg := range []string{"feat: add the parser", "fix: empty input", "feat(cli): a flag"} {
		r.Write("f.txt", strings.Repeat("line\n", i+1)).Commit(msg)
	}
	r.Tag("v1.0.0")
	r.Write("g.txt", "more\n").Commit("feat: unreleased work")
	dir := t.TempDir()
	c := templateCase{bin: buildDigest(t), repo: r.Dir, db: filepath.Join(dir, "digest.db"),
		out: filepath.Join(dir, "CHANGELOG.md"), tmpl: filepath.Join(dir, "notes.tmpl")}
	for path, text := range map[string]string{c.out: keep, c.tmpl: template} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// args are the arguments of a run writing -o through the template.
func (c templateCase) args(extra ...string) []string {
	return append([]string{"--db", c.db, "summarize", c.repo, "--template", c.tmpl, "-o", c.out}, extra...)
}

// run runs digest to its end, within a minute.
func (c templateCase) run(t *testing.T, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("digest %s still running after a minute", strings.Join(args, " "))
	}
	code := 0
	if exit := (*exec.ExitError)(nil); errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code: code, out: stdout.String(), errOut: stderr.String()}
}

// keptOutput checks that -o holds what it held before the run, and that
// no temporary file was left beside it.
func (c templateCase) keptOutput(t *testing.T) {
	t.Helper()
	if b, err := os.ReadFile(c.out); err != nil || string(b) != keep {
		t.Errorf("-o holds %d bytes (%v), want the earlier changelog as it was", len(b), err)
	}
	entries, err := os.ReadDir(filepath.Dir(c.out))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("%s left beside -o", e.Name())
		}
	}
}

// signalWhen starts digest with --verbose, sends it sig once it has
// logged a line holding when, and returns its exit code, its last line on
// standard error, and how long after the signal it exited. A digest still
// running 10 seconds after the signal is killed.
func signalWhen(t *testing.T, bin string, args []string, when string, sig syscall.Signal) (code int, last string, took time.Duration) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--verbose"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stderr)
	var seen []string
	for lines.Scan() && !strings.Contains(lines.Text(), when) {
		seen = append(seen, lines.Text())
	}
	if lines.Err() != nil || cmd.ProcessState != nil {
		t.Fatalf("no %q logged: %v\n%s", when, lines.Err(), strings.Join(seen, "\n"))
	}
	sent := time.Now()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	kill := time.AfterFunc(10*time.Second, func() { cmd.Process.Kill() })
	defer kill.Stop()
	for lines.Scan() {
		last = lines.Text()
	}
	err = cmd.Wait()
	took = time.Since(sent)
	if exit := (*exec.ExitError)(nil); errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, last, took
}

// TestSignalStopsASpinningTemplateCheck: a template that spins with no
// time limit in its check on sample notes, before anything is sent,
// stops at the first SIGINT or SIGTERM with exit 130 (it used to ignore
// the first signal, hanging a CI job's timeout until SIGKILL).
func TestSignalStopsASpinningTemplateCheck(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			c := newTemplateCase(t, spinning)
			code, last, took := signalWhen(t, c.bin, c.args("--template-timeout", "0"), "running --template on sample notes", sig)
			t.Logf("exit %d %s after the signal", code, took)
			if code != 130 || took > 3*time.Second {
				t.Errorf("exit %d %s after the signal, want 130 at once", code, took)
			}
			if want := "digest: interrupted while --template ran on sample notes; nothing was sent"; last != want {
				t.Errorf("last line %q, want %q", last, want)
			}
			c.keptOutput(t)
			if _, err := os.Stat(c.db); err == nil {
				t.Error("the check made a database: it comes before anything is opened")
			}
		})
	}
}

// TestSignalStopsASpinningTemplateWrite: a template that spins on the
// real notes stops at the first signal with exit 130, -o as it was, and
// every summary stored for the next run.
func TestSignalStopsASpinningTemplateWrite(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			c := newTemplateCase(t, spinningUnreleased)
			code, last, took := signalWhen(t, c.bin, c.args("--template-timeout", "0"), "writing the changelog through --template", sig)
			t.Logf("exit %d %s after the signal", code, took)
			if code != 130 || took > 3*time.Second {
				t.Errorf("exit %d %s after the signal, want 130 at once", code, took)
			}
			if want := "digest: interrupted while --template wrote the changelog; " + c.out + " was not written; every summary is stored: run the same command again to write it"; last != want {
				t.Errorf("last line %q, want %q", last, want)
			}
			c.keptOutput(t)
			if n := countSummaries(t, c.db); n != 4 {
				t.Errorf("%d summaries stored, want the 4 commits'", n)
			}
		})
	}
}

// TestTemplateTimeLimit: a template that runs past --template-timeout is
// stopped: in the check, exit 2 before anything is sent; as it writes
// the changelog, exit 1 with -o as it was and every summary stored.
func TestTemplateTimeLimit(t *testing.T) {
	t.Run("check", func(t *testing.T) {
		c := newTemplateCase(t, spinning)
		res := c.run(t, c.args("--template-timeout", "200ms")...)
		oneLineError(t, res, 2, "--template ran longer than 200ms (--template-timeout) on sample notes of one commit, before anything was sent", "a higher --template-timeout")
		c.keptOutput(t)
		if _, err := os.Stat(c.db); err == nil {
			t.Error("the check made a database: it comes before anything is opened")
		}
	})
	t.Run("write", func(t *testing.T) {
		c := newTemplateCase(t, spinningUnreleased)
		res := c.run(t, c.args("--template-timeout", "200ms")...)
		oneLineError(t, res, 1, "--template ran longer than 200ms (--template-timeout); "+c.out+" was not written, and every summary is stored. Try: a higher --template-timeout, or 0 for no limit")
		c.keptOutput(t)
		if n := countSummaries(t, c.db); n != 4 {
			t.Errorf("%d summaries stored, want the 4 commits'", n)
		}
	})
}

// TestTemplateOutputLimit: a template that writes past
// --template-max-bytes is stopped, -o left as it was: the issue's
// template of 100 characters, which wrote 10 GB and exited 0, now fails
// its check under the default limit (exit 2); one that floods only the
// real notes fails as it writes them (exit 1), every summary stored, and
// a rerun with another template pays for nothing.
func TestTemplateOutputLimit(t *testing.T) {
	t.Run("the issue's", func(t *testing.T) {
		c := newTemplateCase(t, theIssues)
		res := c.run(t, c.args()...)
		oneLineError(t, res, 2, "--template wrote more than 64 MiB (--template-max-bytes) on sample notes of one commit, before anything was sent", "a higher --template-max-bytes")
		c.keptOutput(t)
	})
	t.Run("write", func(t *testing.T) {
		c := newTemplateCase(t, floodingUnreleased)
		res := c.run(t, c.args("--template-max-bytes", "1MiB")...)
		oneLineError(t, res, 1, "--template wrote more than 1 MiB (--template-max-bytes); "+c.out+" was not written, and every summary is stored. Try: a higher --template-max-bytes, or 0 for no limit")
		c.keptOutput(t)
		if err := os.WriteFile(c.tmpl, []byte("{{range .Repos}}{{range .Versions}}{{.Title}}: {{len .Entries}}\n{{end}}{{end}}"), 0o644); err != nil {
			t.Fatal(err)
		}
		rerun := c.run(t, c.args("--template-max-bytes", "1MiB")...)
		if b, _ := os.ReadFile(c.out); rerun.code != 0 || !strings.HasPrefix(string(b), "Unreleased: 1\nv1.0.0 (") || !strings.HasSuffix(string(b), "): 3\n") {
			t.Errorf("rerun: exit %d, -o %q: %s", rerun.code, b, rerun.errOut)
		}
		if !strings.Contains(rerun.errOut, "4 commits seen, 4 cached, 0 summarized") {
			t.Errorf("the rerun should read every summary from the cache: %s", rerun.errOut)
		}
	})
	t.Run("standard output", func(t *testing.T) {
		c := newTemplateCase(t, floodingUnreleased)
		res := c.run(t, "--db", c.db, "summarize", c.repo, "--template", c.tmpl, "--template-max-bytes", "64KiB")
		oneLineError(t, res, 1, "--template wrote more than 64 KiB (--template-max-bytes); standard output holds what it wrote until then, and every summary is stored")
		if len(res.out) > 64<<10 || !strings.HasPrefix(res.out, "0123456789") {
			t.Errorf("%d bytes on standard output, want the first of them and no more than 64 KiB", len(res.out))
		}
	})
}

// TestTemplateLimitFlagValues: the limits' flags and variables refuse
// what they cannot take, naming the flag, before anything is read; 0
// lifts a limit.
func TestTemplateLimitFlagValues(t *testing.T) {
	f := fixture(t)
	tmpl := filepath.Join(t.TempDir(), "notes.tmpl")
	if err := os.WriteFile(tmpl, []byte("{{range .Repos}}{{range .Versions}}{{.Title}}\n{{end}}{{end}}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ flag, value, says string }{
		{"--template-timeout", "-1s", "--template-timeout cannot be negative"},
		{"--template-timeout", "soon", `invalid argument "soon" for "--template-timeout"`},
		{"--template-max-bytes", "-5", "a size cannot be negative"},
		{"--template-max-bytes", "lots", "want a whole number of bytes such as 1048576, 64MiB or 1GiB"},
		{"--template-max-bytes", "1.5GiB", `unknown unit ".5GiB"`},
	} {
		h := newHarness(t)
		res := h.run(context.Background(), "summarize", f.Dir, "--template", tmpl, tt.flag, tt.value)
		t.Run(tt.flag+"="+tt.value, func(t *testing.T) { oneLineError(t, res, 2, tt.flag, tt.says) })
		if h.calls.Load() != 0 || res.out != "" {
			t.Errorf("%s %s: %d calls, stdout %q", tt.flag, tt.value, h.calls.Load(), res.out)
		}
	}
	h := newHarness(t)
	h.env["DIGEST_TEMPLATE_MAX_BYTES"] = "huge"
	oneLineError(t, h.run(context.Background(), "summarize", f.Dir, "--template", tmpl), 2, "DIGEST_TEMPLATE_MAX_BYTES", "--template-max-bytes")

	h = newHarness(t)
	res := h.run(context.Background(), "summarize", f.Dir, "--template", tmpl, "--template-timeout", "0", "--template-max-bytes", "0")
	if res.code != 0 || res.out == "" {
		t.Errorf("no limits: exit %d, %q %s", res.code, res.out, res.errOut)
	}
	h = newHarness(t)
	res = h.run(context.Background(), "summarize", f.Dir, "--template", tmpl, "--template-max-bytes", "5")
	oneLineError(t, res, 2, "--template wrote more than 5 bytes (--template-max-bytes) on sample notes")
}

// TestTwoProcessesPayEachCommitOnce runs two real digest processes on the
// same repository and database at the same time: between them every commit
// is paid for once, and each prints the whole changelog.
func TestTwoProcessesPayEachCommitOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildDigest(t)
	forEachDatabase(t, func(t *testing.T, db string) { twoProcessesPayEachCommitOnce(t, bin, db) })
}

func twoProcessesPayEachCommitOnce(t *testing.T, bin, db string) {
	srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second, Latency: 40 * time.Millisecond})
	f := fixture(t)
	outs := runTogether(t, bin, "--db", db, "summarize", f.Dir, "--model", "openai:m", "--base-url", srv.OpenAIBaseURL(),
		"--batch-size", "1", "--concurrency", "2", "-f", "jsonl")
	for i := range 2 {
		if n := strings.Count(outs[i], "\n"); n != 8 {
			t.Errorf("process %d printed %d commits, want 8", i, n)
		}
	}
	if n := srv.Stats().Requests; n != 8 {
		t.Errorf("%d requests between the two processes, want 8: one per commit", n)
	}
	if cached := strings.Count(outs[0]+outs[1], `"cached":true`); cached != 8 {
		t.Errorf("%d entries read from the other process's work, want 8 (each commit paid by one, read by the other)", cached)
	}
}

// TestTwoProcessesPayEachHighlightOnce: two real processes writing the
// highlights of the same release notes at once ask for each section's once
// between them: the sections are claimed like commits.
func TestTwoProcessesPayEachHighlightOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildDigest(t)
	forEachDatabase(t, func(t *testing.T, db string) {
		srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second, Latency: 40 * time.Millisecond, Answer: func(r fakeprovider.Received) string {
			if _, ok := prompt.ReadHighlights(r.System, r.Messages); ok {
				return `["A.", "B.", "C."]`
			}
			return fakeprovider.DefaultAnswer(r)
		}})
		f := taggedFixture(t)
		args := []string{"--db", db, "summarize", f.Dir, "--model", "openai:m", "--base-url", srv.OpenAIBaseURL(), "--concurrency", "2"}
		// The summaries stored first, both processes reach the highlights at once.
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "OPENAI_API_KEY=k")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		outs := runTogether(t, bin, append(args, "--highlights")...)
		asked := 0
		for _, r := range srv.Requests() {
			if _, ok := prompt.ReadHighlights(r.System, r.Messages); ok {
				asked++
			}
		}
		if asked != 2 {
			t.Errorf("%d highlights requests between the two processes, want 2: one per section", asked)
		}
		if outs[0] != outs[1] || strings.Count(outs[0], "**Highlights**") != 2 {
			t.Errorf("the two processes printed different notes, or not both sections' highlights:\n%s\n---\n%s", outs[0], outs[1])
		}
	})
}

// TestHangUpStopsTheRunAsCtrlCDoes: a hang-up (a closed terminal, a CI runner's
// shell going away) stops the real process like Ctrl-C: exit 130, every
// stored summary kept, no claim left behind, and a rerun pays only for
// the rest.
func TestHangUpStopsTheRunAsCtrlCDoes(t *testing.T) {
	signalMidRun(t, syscall.SIGHUP)
}

// TestNamedPipeAsTheDatabaseIsRefused: --db naming a FIFO used to block
// for ever in open, deaf to SIGTERM. The real process now refuses it at
// once, exit 1, and the pipe is still a pipe.
func TestNamedPipeAsTheDatabaseIsRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildDigest(t)
	fifo := filepath.Join(t.TempDir(), "digest.db")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	cmd := exec.Command(bin, "--db", fifo, "summarize", fixture(t).Dir)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second): // a guard against the old hang, not a speed goal
		cmd.Process.Kill()
		t.Fatal("digest blocked on the FIFO")
	}
	oneLineError(t, result{code: cmd.ProcessState.ExitCode(), errOut: errOut.String()}, 1, "named pipe", "--db")
	if info, err := os.Lstat(fifo); err != nil || info.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO is now %v (%v)", info.Mode(), err)
	}
}

// TestPostgresServerLostMidRun: the PostgreSQL server stops (crashes) under
// a running digest summarize. digest stops with one line naming the
// server, no panic, exit 1; once the server is back, the same command
// pays only for what was not stored.
func TestPostgresServerLostMidRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildDigest(t)
	pg := pgtest.StartServer(t)
	srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second, Latency: 20 * time.Millisecond})
	const commits = 120
	repo := historyOf(t, commits)
	args := []string{"--db", pg.URL, "summarize", repo, "--model", "openai:m", "--base-url", srv.OpenAIBaseURL(),
		"--batch-size", "1", "--concurrency", "1", "-f", "jsonl"}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "OPENAI_API_KEY=k")
	var errOut bytes.Buffer
	crashUnder(t, cmd, &errOut, srv, pg)
	lines := strings.Split(strings.TrimSpace(errOut.String()), "\n")
	last := lines[len(lines)-1]
	host := strings.TrimPrefix(strings.Split(strings.Split(pg.URL, "@")[1], "/")[0], "")
	if !strings.Contains(last, host) || !strings.Contains(last, "Try: ") || strings.Contains(errOut.String(), "panic") {
		t.Errorf("last line %q, want one naming the server %s and what to try", last, host)
	}
	paid := srv.Stats().Requests

	pg.Restart(t)
	again := exec.Command(bin, args...)
	again.Env = append(os.Environ(), "OPENAI_API_KEY=k")
	again.Stderr = &errOut
	out, err := again.Output()
	if err != nil {
		t.Fatalf("rerun: %v\n%s", err, errOut.String())
	}
	// What was stored before the crash is not paid again: the rerun pays
	// for exactly the commits it did not find. Those lost are the answers
	// on their way when the server went: the one in flight, and the next
	// sent while the first's store failed.
	total := srv.Stats().Requests
	cached := strings.Count(string(out), `"cached":true`)
	if rerun := total - paid; rerun != commits-cached {
		t.Errorf("the rerun paid %d requests for %d commits not stored", rerun, commits-cached)
	}
	if lost := total - commits; lost > 2 {
		t.Errorf("%d requests in all for %d commits: %d paid twice, more than were in flight at the crash", total, commits, lost)
	}
}

// TestKilledProcessOfAnotherMachine: three real processes summarize one
// history through one PostgreSQL database, two of them in UTS namespaces
// of their own with other host names, as processes on other machines. One
// of those is killed (SIGKILL) mid-run: the others wait out its claims
// (--lease), take them over and finish; each prints the whole changelog,
// nothing stored is lost, and nothing is paid twice beyond what the killed
// process had in flight.
func TestKilledProcessOfAnotherMachine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if os.Geteuid() != 0 {
		t.Skip("other host names need unshare -u, as root")
	}
	if err := exec.Command("unshare", "-u", "true").Run(); err != nil {
		t.Skipf("unshare -u: %v", err)
	}
	bin := buildDigest(t)
	db := pgtest.FreshDatabase(t)
	srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second, Latency: 15 * time.Millisecond})
	const commits = 120
	repo := historyOf(t, commits)
	args := []string{bin, "--db", db, "summarize", repo, "--model", "openai:m", "--base-url", srv.OpenAIBaseURL(),
		"--batch-size", "1", "--concurrency", "1", "--lease", "3s", "-f", "jsonl"}
	start := func(host string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
		cmd := onMachine(host, args)
		cmd.Env = append(os.Environ(), "OPENAI_API_KEY=k")
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, &out, &errOut
	}
	local, localOut, localErr := start("")
	other, otherOut, otherErr := start("digest-test-machine-b")
	doomed, _, _ := start("digest-test-machine-c")
	for srv.Stats().Requests < 20 {
		time.Sleep(5 * time.Millisecond)
	}
	if err := doomed.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	doomed.Wait()
	killedAt := srv.Stats().Requests
	for i, p := range []struct {
		cmd      *exec.Cmd
		out, err *bytes.Buffer
	}{{local, localOut, localErr}, {other, otherOut, otherErr}} {
		if err := p.cmd.Wait(); err != nil {
			t.Fatalf("process %d: %v: %s", i, err, p.err.String())
		}
		if n := strings.Count(p.out.String(), "\n"); n != commits {
			t.Errorf("process %d printed %d commits, want %d", i, n, commits)
		}
	}
	// The killed process had one request in flight, and may have sent the
	// next while the first's answer was being stored.
	if total := srv.Stats().Requests; total < commits || total > commits+2 {
		t.Errorf("%d requests for %d commits (%d when one process was killed)", total, commits, killedAt)
	}
	st, err := openDB(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if owners, err := st.LeaseOwners(context.Background()); err != nil || len(owners) != 0 {
		t.Errorf("claims left behind by %v (%v)", owners, err)
	}
}

// TestOutputToADeviceOrPipeWritesThroughIt runs the real binary with -o
// naming a character device (made with mknod, as root: the case of a CI
// job writing -o /dev/null), a FIFO, and /dev/stdout. Each is written as
// it is and is still what it was afterwards.
func TestOutputToADeviceOrPipeWritesThroughIt(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildDigest(t)
	f := fixture(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "digest.db")
	run := func(args ...string) (string, string) {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"--db", db, "-q", "summarize", f.Dir}, args...)...)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("digest %v: %v\n%s", args, err, errOut.String())
		}
		return out.String(), errOut.String()
	}

	t.Run("character device", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("mknod needs root; the FIFO case covers writing through without it")
		}
		null := filepath.Join(dir, "null")
		if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, int(unixDev(1, 3))); err != nil {
			t.Skipf("mknod: %v", err)
		}
		run("-o", null)
		info, err := os.Lstat(null)
		if err != nil || info.Mode()&os.ModeCharDevice == 0 {
			t.Fatalf("the device is now %v (%v)", info.Mode(), err)
		}
	})
	t.Run("fifo", func(t *testing.T) {
		fifo := filepath.Join(dir, "pipe")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		read := make(chan string)
		go func() {
			b, _ := os.ReadFile(fifo)
			read <- string(b)
		}()
		run("-o", fifo)
		if got := <-read; !strings.Contains(got, "Add greeting helper") {
			t.Errorf("the pipe's reader got %q, want the changelog", got)
		}
		if info, _ := os.Lstat(fifo); info.Mode()&os.ModeNamedPipe == 0 {
			t.Errorf("the FIFO is now %v", info.Mode())
		}
	})
	t.Run("/dev/stdout", func(t *testing.T) {
		if _, err := os.Stat("/dev/stdout"); err != nil {
			t.Skip("no /dev/stdout here")
		}
		out, _ := run("-o", "/dev/stdout")
		if !strings.Contains(out, "Add greeting helper") {
			t.Errorf("standard output %q, want the changelog", out)
		}
	})
}

// unixDev is the device number of major:minor as Linux encodes it.
func unixDev(major, minor uint64) uint64 {
	return (major&0xfff)<<8 | (major&^0xfff)<<32 | minor&0xff | (minor&^0xff)<<12
}
