package cmd

// A --template is the user's program, and text/template lets it loop: it
// runs under a time and an output limit, in its check on sample notes and
// when it writes the changelog, and a signal stops it at once. The
// templates that spin for good run in real digest processes, which exit
// when stopped, leaving no goroutine spinning in the test binary.

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

	"github.com/digest-cli/digest/internal/gittest"
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
