package cmd

// Unattended runs: what a CI job, often as root, with a wrong path or a
// failing provider, must be able to rely on. The README's Guarantees
// section names these tests.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/gittest"
	"github.com/digest-cli/digest/internal/pgtest"
)

// TestOutputsNeverDestroyWhatTheRunReads: a report path that names the
// database (or its write-ahead log), the dataset, or another report of the
// same run is refused before anything is sent, exit 2, and every file is
// left as it was.
func TestOutputsNeverDestroyWhatTheRunReads(t *testing.T) {
	f := fixture(t)
	h := newHarness(t)
	if res := h.run(context.Background(), "summarize", f.Dir, "-f", "jsonl"); res.code != 0 {
		t.Fatalf("first run: %s", res.errOut)
	}
	db, err := os.ReadFile(h.db)
	if err != nil {
		t.Fatal(err)
	}
	dataset := writeDataset(t, `{"prompt":"What is 1 + 1?","expected":"2"}`)
	data, _ := os.ReadFile(dataset)
	link := filepath.Join(t.TempDir(), "cache-link.db")
	if err := os.Symlink(h.db, link); err != nil {
		t.Fatal(err)
	}
	h.calls.Store(0)
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"summarize -o the database", []string{"summarize", f.Dir, "-o", h.db}, "is the database"},
		{"summarize -o a link to the database", []string{"summarize", f.Dir, "-o", link}, "is the database"},
		{"summarize -o its write-ahead log", []string{"summarize", f.Dir, "-o", h.db + "-wal"}, "is the database"},
		{"eval -o the dataset", []string{"eval", dataset, "-f", "jsonl", "-o", dataset}, "is the dataset"},
		{"eval --html the database", []string{"eval", dataset, "--html", h.db}, "is the database"},
		{"eval -o and --junit one file", []string{"eval", dataset, "-o", filepath.Join(filepath.Dir(dataset), "r.xml"), "--junit", filepath.Join(filepath.Dir(dataset), "r.xml")}, "the same file"},
		{"runs show --junit the database", []string{"runs", "show", "x", "--junit", h.db}, "is the database"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := h.run(context.Background(), tt.args...)
			oneLineError(t, res, 2, tt.want)
		})
	}
	if h.calls.Load() != 0 {
		t.Errorf("%d requests sent by runs that were refused", h.calls.Load())
	}
	if after, _ := os.ReadFile(h.db); !bytes.Equal(after, db) {
		t.Error("the database changed")
	}
	if after, _ := os.ReadFile(dataset); !bytes.Equal(after, data) {
		t.Error("the dataset changed")
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

// TestEvalFailsWhenRequestsFail: a run whose requests failed exits 1 after
// writing every report, and says how many failed and why; a configuration
// that could only fail (a base URL without a scheme, judge assertions
// without --judge) is a usage error, exit 2, before anything is sent.
func TestEvalFailsWhenRequestsFail(t *testing.T) {
	srv := arithmeticServer(t)
	data := sums(t)
	h := newHarness(t)
	h.env["OPENAI_API_KEY"] = "sk-test"
	out := t.TempDir()

	// A base URL one path off: every request is a 404. Eight in a row stop
	// the run, naming the model, the last error and what to try; the
	// reports asked for hold what was stored before the stop, so that a CI
	// job's JUnit and step summary show the failures.
	stopped := t.TempDir()
	summary := filepath.Join(stopped, "summary.md")
	h.env["GITHUB_STEP_SUMMARY"] = summary
	res := h.run(context.Background(), "eval", data, "--models", "openai:strong", "--base-url", srv.URL()+"/nope/v1", "-j", "1",
		"--junit", filepath.Join(stopped, "junit.xml"))
	delete(h.env, "GITHUB_STEP_SUMMARY")
	oneLineError(t, res, 1, "openai:strong failed 8 requests in a row", "HTTP 404", "check the base URL", "results stored before the run stopped")
	if n := srv.Stats().NotFound; n != 8 {
		t.Errorf("%d requests before the run stopped, want 8", n)
	}
	for _, name := range []string{"junit.xml", "summary.md"} {
		if b, err := os.ReadFile(filepath.Join(stopped, name)); err != nil || !bytes.Contains(b, []byte("HTTP 404")) {
			t.Errorf("%s not written when the run stopped (%v):\n%s", name, err, b)
		}
	}
	var doc struct {
		Models []struct{ Items, Errors int }
	}
	if err := json.Unmarshal([]byte(res.out), &doc); err != nil || len(doc.Models) != 1 || doc.Models[0].Errors == 0 ||
		!strings.Contains(res.errOut, fmt.Sprintf("the reports hold the %d results stored", doc.Models[0].Items)) {
		t.Errorf("the report on standard output does not hold the stored errors the message counts (%v): %s", err, res.out)
	}

	// Told never to stop, the run asks for every item, writes every report,
	// then fails.
	res = h.run(context.Background(), "eval", data, "--models", "openai:strong", "--base-url", srv.URL()+"/nope/v1", "--max-failures", "0",
		"-f", "json", "-o", filepath.Join(out, "r.json"), "--junit", filepath.Join(out, "junit.xml"))
	if res.code != 1 {
		t.Fatalf("every request a 404: exit %d, want 1: %s", res.code, res.errOut)
	}
	lines := strings.Split(strings.TrimSpace(res.errOut), "\n")
	if last := lines[len(lines)-1]; !strings.Contains(last, "10 results ended in error (openai:strong 10)") || !strings.Contains(last, "HTTP 404") {
		t.Errorf("last line %q, want the count of errors and the first one", last)
	}
	if !strings.Contains(res.errOut, ", 10 errors,") {
		t.Errorf("the closing line does not count the errors: %q", res.errOut)
	}
	for name, want := range map[string]string{"r.json": `"errors": 10`, "junit.xml": "HTTP 404"} {
		if b, err := os.ReadFile(filepath.Join(out, name)); err != nil || !bytes.Contains(b, []byte(want)) {
			t.Errorf("%s not written before the failure (%v)", name, err)
		}
	}

	before := srv.Stats().Requests
	judged := writeDataset(t, `{"prompt": "2+2", "expected": "4"}`, `{"prompt": "Be nice", "assert": [{"type": "llm-rubric", "value": "polite"}]}`)
	for _, tt := range []struct {
		name string
		args []string
		want []string
	}{
		{"no scheme", []string{"eval", data, "--models", "openai:strong", "--base-url", "localhost:11434/v1"},
			[]string{"--base-url localhost:11434/v1 has no http:// or https://", "Try: http://localhost:11434/v1"}},
		{"no scheme in the variable", []string{"eval", data, "--models", "anthropic:claude-haiku-4-5"},
			[]string{"ANTHROPIC_BASE_URL"}},
		{"another scheme", []string{"eval", data, "--models", "openai:strong", "--base-url", "ftp://host/v1"},
			[]string{"is not an http or https URL"}},
		{"a judge assertion without --judge", []string{"eval", judged, "--models", "openai:strong", "--base-url", srv.OpenAIBaseURL()},
			[]string{judged + ":2 has a judge assertion", "--judge is not set"}},
		{"--assert judge without --judge", []string{"eval", data, "--models", "openai:strong", "--base-url", srv.OpenAIBaseURL(), "--assert", "judge"},
			[]string{"--assert judge needs a grading model"}},
		{"a dry run too", []string{"eval", judged, "--dry-run"}, []string{"has a judge assertion"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h.env["ANTHROPIC_BASE_URL"] = "api.anthropic.com"
			h.env["ANTHROPIC_API_KEY"] = "sk-ant"
			oneLineError(t, h.run(context.Background(), tt.args...), 2, tt.want...)
		})
	}
	if n := srv.Stats().Requests - before; n != 0 {
		t.Errorf("%d requests sent by runs refused as usage errors", n)
	}
}

// TestBaseURLSpellingsShareOneCache: a trailing slash, localhost for
// 127.0.0.1 and an upper-case scheme name the same server, and pay
// nothing again.
func TestBaseURLSpellingsShareOneCache(t *testing.T) {
	srv := arithmeticServer(t)
	data := sums(t)
	h := newHarness(t)
	h.env["OPENAI_API_KEY"] = "sk-test"
	base := srv.OpenAIBaseURL() // http://127.0.0.1:PORT/v1
	if res := h.run(context.Background(), "eval", data, "--models", "openai:strong", "--base-url", base, "-f", "json"); res.code != 0 {
		t.Fatalf("first run: exit %d: %s", res.code, res.errOut)
	}
	paid := len(srv.Requests())
	for _, spelling := range []string{base + "/", strings.Replace(base, "127.0.0.1", "localhost", 1), strings.Replace(base, "http://", "HTTP://", 1)} {
		res := h.run(context.Background(), "eval", data, "--models", "openai:strong", "--base-url", spelling, "-f", "json")
		if res.code != 0 || !strings.Contains(res.out, `"cached": 10`) {
			t.Errorf("--base-url %s: exit %d, want every answer cached: %.300s %s", spelling, res.code, res.out, res.errOut)
		}
	}
	if n := len(srv.Requests()); n != paid {
		t.Errorf("%d requests after the first run, want none", n-paid)
	}
}

// TestHangUpStopsTheRunAsCtrlCDoes: a hang-up (a closed terminal, a CI runner's
// shell going away) stops the real process like Ctrl-C: exit 130, every
// stored summary kept, no claim left behind, and a rerun pays only for
// the rest.
func TestHangUpStopsTheRunAsCtrlCDoes(t *testing.T) {
	signalMidRun(t, syscall.SIGHUP)
}

// TestPasswordInTheBaseURLStaysHome: a base URL with user:password in it
// (a proxy's basic auth) fails every request; the password is in no line
// digest prints, no report and nothing in the database.
func TestPasswordInTheBaseURLStaysHome(t *testing.T) {
	const password = "hunter2-proxy-pass"
	srv := arithmeticServer(t)
	h := newHarness(t)
	h.env["OPENAI_API_KEY"] = "sk-test"
	out := t.TempDir()
	base := strings.Replace(srv.URL(), "http://", "http://svc:"+password+"@", 1) + "/nope/v1"
	res := h.run(context.Background(), "--verbose", "eval", sums(t), "--models", "openai:strong", "--base-url", base, "--max-failures", "0",
		"-f", "jsonl", "-o", filepath.Join(out, "r.jsonl"), "--junit", filepath.Join(out, "junit.xml"), "--html", filepath.Join(out, "r.html"))
	if res.code != 1 || !strings.Contains(res.errOut, "HTTP 404") {
		t.Fatalf("exit %d, want 1 with the 404s: %s", res.code, res.errOut)
	}
	written := map[string][]byte{"stdout": []byte(res.out), "stderr": []byte(res.errOut)}
	readFilesInto(t, written, "report ", out)
	readFilesInto(t, written, "database ", filepath.Dir(h.db))
	for i, p := range decompressedPayloads(t, h.db) {
		written[fmt.Sprintf("payload %d", i)] = p
	}
	if len(written) < 6 {
		t.Fatalf("only %d places read", len(written))
	}
	for name, b := range written {
		if bytes.Contains(b, []byte(password)) {
			t.Errorf("the password is in %s", name)
		}
	}
	// And the bad-address error masks it too.
	res = h.run(context.Background(), "eval", sums(t), "--models", "openai:strong", "--base-url", "svc:"+password+"@proxy/v1")
	oneLineError(t, res, 2, "--base-url")
	if strings.Contains(res.errOut, password) {
		t.Errorf("the password is in %q", res.errOut)
	}
}

// TestDailyQuotaStopsTheRunAtOnce: a 429 asking to wait a day (a daily
// quota) stops the run at once with one line saying so, instead of a
// silent 24 h wait; answers that arrived are kept.
func TestDailyQuotaStopsTheRunAtOnce(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		if calls.Add(1) > 1 {
			w.Header().Set("Retry-After", "86400")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"error":{"message":"Rate limit reached for requests per day (RPD)","type":"requests","code":"rate_limit_exceeded"}}`)
			return
		}
		io.WriteString(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"4"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}`)
	}))
	t.Cleanup(srv.Close)
	h := newHarness(t)
	h.env["OPENAI_API_KEY"] = "sk-test"
	res := h.run(context.Background(), "eval", sums(t), "--models", "openai:strong", "--base-url", srv.URL+"/v1", "-j", "1")
	oneLineError(t, res, 1, "openai:strong", "asks to wait 24h0m", "quota")
	if n := countRows(t, h.db, "SELECT count(*) FROM eval_results"); n != 1 {
		t.Errorf("%d answers stored, want the 1 that arrived", n)
	}
}

// TestBloblessCloneDoesNotPoisonTheCache: a partial clone (git clone
// --filter=blob:none, as CI checkouts often are) lacks the blobs of past
// commits. Its summaries say so, with one warning naming the promisor
// remote; they serve the partial clone again, but a complete clone sharing
// the cache summarizes those commits anew and its summaries replace them.
func TestBloblessCloneDoesNotPoisonTheCache(t *testing.T) {
	f := fixture(t)
	env := gittest.GitEnv(t)
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Skipf("git %v: %v\n%s", args, err, out)
		}
	}
	git("-C", f.Dir, "config", "uploadpack.allowFilter", "true")
	partial := filepath.Join(t.TempDir(), "partial.git")
	git("clone", "-q", "--bare", "--filter=blob:none", "file://"+f.Dir, partial)

	h := newHarness(t)
	res := h.run(context.Background(), "summarize", partial, "-f", "jsonl", "--batch-size", "1")
	if res.code != 0 {
		t.Fatalf("partial clone: exit %d: %s", res.code, res.errOut)
	}
	missing := strings.Count(res.out, `"reason":"missing object"`)
	if missing == 0 {
		t.Fatalf("no file listed as a missing object in a blobless clone:\n%s", res.out)
	}
	if n := strings.Count(res.errOut, `partial clone (promisor remote \"origin\")`); n != 1 {
		t.Errorf("%d warnings naming the promisor remote, want 1: %s", n, res.errOut)
	}
	if strings.Contains(res.errOut, "could not read part of a commit") {
		t.Errorf("a warning per missing object in a partial clone: %s", res.errOut)
	}
	partialCalls := h.calls.Load()

	h.calls.Store(0)
	if res := h.run(context.Background(), "summarize", partial, "-f", "jsonl"); res.code != 0 || h.calls.Load() != 0 {
		t.Errorf("partial clone again: exit %d, %d calls, want its own summaries served: %s", res.code, h.calls.Load(), res.errOut)
	}

	res = h.run(context.Background(), "summarize", f.Dir, "-f", "jsonl", "--batch-size", "1")
	if res.code != 0 || strings.Contains(res.out, "missing object") {
		t.Fatalf("complete clone: exit %d, want no missing object served from the cache:\n%s%s", res.code, res.out, res.errOut)
	}
	if h.calls.Load() == 0 || h.calls.Load() > partialCalls {
		t.Errorf("complete clone made %d calls, want one per commit summarized partially (at most %d)", h.calls.Load(), partialCalls)
	}
	h.calls.Store(0)
	res = h.run(context.Background(), "summarize", partial, "-f", "jsonl")
	if res.code != 0 || h.calls.Load() != 0 || strings.Contains(res.out, "missing object") {
		t.Errorf("partial clone after the complete one: exit %d, %d calls, want the complete summaries: %s", res.code, h.calls.Load(), res.out)
	}
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

// TestJudgeMissingOnStdinSaysGiveAJudge: a dataset read from standard
// input cannot be checked for judge assertions before the run; the
// results that needed a judge end in error, and the error says to give
// one, since running the same command again fails alike.
func TestJudgeMissingOnStdinSaysGiveAJudge(t *testing.T) {
	h := newHarness(t)
	h.stdin = strings.NewReader(`{"id": "polite", "prompt": "Be nice", "assert": [{"type": "llm-rubric", "value": "polite"}]}` + "\n")
	res := h.run(context.Background(), "eval", "-", "--models", "offline", "-f", "json")
	lines := strings.Split(strings.TrimSpace(res.errOut), "\n")
	last := lines[len(lines)-1]
	if res.code != 1 || !strings.Contains(last, "needs --judge MODEL") || !strings.Contains(last, "Try: --judge MODEL") {
		t.Errorf("exit %d, last line %q: want the error to say to give --judge", res.code, last)
	}
}

// TestBadValueFromTheEnvironmentNamesTheVariable: a value checked after
// parsing is refused as its flag's; when it came from DIGEST_*, the error
// says so, since the command line has no such flag to fix.
func TestBadValueFromTheEnvironmentNamesTheVariable(t *testing.T) {
	h := newHarness(t)
	repo := historyRepo(t, 2)
	h.env["DIGEST_FORMAT"] = "tabel"
	for _, args := range [][]string{{"summarize", repo.Dir}, {"eval", sums(t), "--models", "offline"}} {
		res := h.run(context.Background(), args...)
		oneLineError(t, res, 2, `"tabel"`, "(--format was set by DIGEST_FORMAT)")
	}
	delete(h.env, "DIGEST_FORMAT")
	res := h.run(context.Background(), "summarize", repo.Dir, "--format", "tabel")
	oneLineError(t, res, 2, `"tabel"`)
	if strings.Contains(res.errOut, "DIGEST_FORMAT") {
		t.Errorf("a flag given on the command line is said to come from the environment: %s", res.errOut)
	}
}

// crashUnder starts cmd, crashes the PostgreSQL server once the provider
// has had 10 requests, and checks that cmd then exits 1; errOut gets its
// standard error.
func crashUnder(t *testing.T, cmd *exec.Cmd, errOut *bytes.Buffer, srv *fakeprovider.Server, pg *pgtest.Server) {
	t.Helper()
	cmd.Stderr = errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for srv.Stats().Requests < 10 {
		time.Sleep(5 * time.Millisecond)
	}
	pg.Crash(t)
	err := cmd.Wait()
	if exit := (*exec.ExitError)(nil); !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exit %v, want 1: %s", err, errOut.String())
	}
}

// TestPostgresServerLostMidEvalSaysSoOnce: the database server crashes
// under a running digest eval. The run, dropping its record, and reading
// its reports back all find the server gone: the one error line says so
// once, with what to try, and that no reports could be written.
func TestPostgresServerLostMidEvalSaysSoOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildDigest(t)
	pg := pgtest.StartServer(t)
	srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second, Latency: 20 * time.Millisecond})
	cmd := exec.Command(bin, "--db", pg.URL, "eval", evalItems(t, 120), "--models", "openai:m", "--base-url", srv.OpenAIBaseURL(),
		"-j", "1", "-f", "json", "--junit", filepath.Join(t.TempDir(), "junit.xml"))
	cmd.Env = append(os.Environ(), "OPENAI_API_KEY=k")
	var errOut bytes.Buffer
	crashUnder(t, cmd, &errOut, srv, pg)
	lines := strings.Split(strings.TrimSpace(errOut.String()), "\n")
	last := lines[len(lines)-1]
	if strings.Count(last, "Try: ") != 1 || strings.Contains(errOut.String(), "panic") {
		t.Errorf("last line %q, want the server's loss said once, with one Try", last)
	}
}
