package cmd

// Real digest eval processes: what only a process shows (a signal's exit
// code, what a promptfoo config may read of the process's environment and
// files). The pipeline's behaviour is tested in internal/eval.

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/pgtest"
)

// TestHugeRepeatStreamsAndStopsOnSIGTERM runs a real digest eval asking
// one item a hundred million times: its repeats are sent as they are made,
// so answers are stored within moments, and a SIGTERM stops the run with
// exit 130 and what it stored kept (before, the repeats were all made in
// memory first, and the signal went unheard while they were).
func TestHugeRepeatStreamsAndStopsOnSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildDigest(t)
	dir := t.TempDir()
	data, db := filepath.Join(dir, "qa.jsonl"), filepath.Join(dir, "digest.db")
	if err := os.WriteFile(data, []byte(`{"prompt": "What is 2 + 2?", "expected": "4"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--db", db, "eval", data, "--models", "offline", "--repeat", "100000000", "-o", filepath.Join(dir, "out.json"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stored := 0
	for deadline := time.Now().Add(time.Minute); stored == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no result stored within a minute of --repeat 100000000: the repeats are not streamed\n%s", stderr.String())
		}
		select {
		case err := <-done:
			t.Fatalf("the run ended before the signal: %v\n%s", err, stderr.String())
		default:
		}
		stored = storedResults(db)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatalf("still running a minute after SIGTERM\n%s", stderr.String())
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Fatalf("exit: %v, want status 130\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr does not say the run was interrupted:\n%s", stderr.String())
	}
	if n := storedResults(db); n < stored {
		t.Errorf("%d results after the signal, %d before: stored work was lost", n, stored)
	}
}

// storedResults counts a live run's stored results; 0 while the database
// is being made, or busy.
func storedResults(path string) int {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(1000)")
	if err != nil {
		return 0
	}
	defer db.Close()
	n := 0
	if db.QueryRow("SELECT COUNT(*) FROM eval_run_results").Scan(&n) != nil {
		return 0
	}
	return n
}

// confineKey is the API key in the environment of the processes below:
// what /proc/self/environ would hand a config that read it.
const confineKey = "sk-test-SECRETVALUE1234567890"

// runConfined runs the digest binary in dir with the fake key and the fake
// server's address in its environment; it returns the exit code and what
// the process wrote.
func runConfined(t *testing.T, bin, dir string, srv *fakeprovider.Server, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "OPENAI_API_KEY="+confineKey, "OPENAI_BASE_URL="+srv.OpenAIBaseURL(), "GITHUB_STEP_SUMMARY=", "NO_COLOR=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, stdout.String(), stderr.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), stdout.String(), stderr.String()
	}
	t.Fatalf("digest %s: %v", strings.Join(args, " "), err)
	return 0, "", ""
}

// TestEvalPromptfooConfigCannotReadTheKeys runs a real digest eval on
// configs that name /proc/self/environ (directly, through a link, as a
// var, by a glob, with --allow-outside /) or a file outside their folder
// through a link, the API key in the environment. Each is refused before
// anything is sent: exit 2, one line naming the config's line and the
// reference, with what to try; and the key is in no report, stdout,
// stderr, database file or stored payload.
func TestEvalPromptfooConfigCannotReadTheKeys(t *testing.T) {
	bin := buildDigest(t)
	srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second})
	dir := t.TempDir()
	// A file outside the folder that holds the key, as a .env file would.
	elsewhere := filepath.Join(t.TempDir(), "keys.env")
	if err := os.WriteFile(elsewhere, []byte("OPENAI_API_KEY="+confineKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for link, to := range map[string]string{"environ.txt": "/proc/self/environ", "keys.txt": elsewhere} {
		if err := os.Symlink(to, filepath.Join(dir, link)); err != nil {
			t.Skip("no symbolic links here:", err)
		}
	}
	db := filepath.Join(t.TempDir(), "digest.db")
	outputs := []string{"-f", "json", "-o", "report.json", "--junit", "junit.xml", "--html", "report.html", "--rpm", "60000", "--tpm", "100000000"}
	config := func(prompt, x string) {
		t.Helper()
		body := "prompts: [" + prompt + "]\nproviders: [openai:chat:gpt-4o-mini]\ntests:\n  - vars: {x: " + x + "}\n    assert: [{type: contains, value: hello}]\n"
		if err := os.WriteFile(filepath.Join(dir, "promptfooconfig.yaml"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// A config within its folder runs, so that the database and the
	// reports exist and are searched below.
	config(`"Say hello to {{x}}"`, "Ada")
	if code, _, errOut := runConfined(t, bin, dir, srv, append([]string{"--db", db, "eval", "promptfooconfig.yaml"}, outputs...)...); code != 0 {
		t.Fatalf("a config within its folder: exit %d: %s", code, errOut)
	}
	sent := len(srv.Requests())
	if sent != 1 {
		t.Fatalf("%d requests, want 1", sent)
	}
	before := map[string][]byte{}
	readFilesInto(t, before, "", dir)

	written := map[string][]byte{}
	for _, tc := range []struct {
		name, prompt, x string
		args            []string
		want            string
	}{
		{"/proc/self/environ", "file:///proc/self/environ", "Ada", nil,
			"promptfooconfig.yaml:1: prompt file /proc/self/environ: is under /proc, which no config may read, even with --allow-outside"},
		{"/proc/self/environ with --allow-outside /", "file:///proc/self/environ", "Ada", []string{"--allow-outside", "/"},
			"promptfooconfig.yaml:1: prompt file /proc/self/environ: is under /proc, which no config may read"},
		{"a link to /proc/self/environ", "file://environ.txt", "Ada", []string{"--allow-outside", "/"},
			"promptfooconfig.yaml:1: prompt file environ.txt: is under /proc, which no config may read"},
		{"a var from /proc/self/environ", `"{{x}}"`, "file:///proc/self/environ", nil,
			`promptfooconfig.yaml:4: var "x": file:///proc/self/environ: is under /proc, which no config may read`},
		{"a glob over /proc/self", "file:///proc/self/env*", "Ada", []string{"--allow-outside", "/"},
			"promptfooconfig.yaml:1: file:///proc/self/env*: is under /proc, which no config may read"},
		{"a link out of the folder", "file://keys.txt", "Ada", nil,
			"promptfooconfig.yaml:1: prompt file keys.txt: is a symbolic link leading out of the config's folder " + dir + " (to " + elsewhere + "). Try: copy the file into " + dir + ", or --allow-outside " + filepath.Dir(elsewhere)},
		{"an absolute path out of the folder", "file://" + elsewhere, "Ada", nil,
			"promptfooconfig.yaml:1: prompt file " + elsewhere + ": is outside the config's folder " + dir + ". Try: move it into " + dir + ", or --allow-outside " + filepath.Dir(elsewhere) + " to let the config read that folder"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			config(tc.prompt, tc.x)
			args := append(append([]string{"--verbose", "--db", db, "eval", "promptfooconfig.yaml"}, outputs...), tc.args...)
			code, out, errOut := runConfined(t, bin, dir, srv, args...)
			written[tc.name+" stdout"], written[tc.name+" stderr"] = []byte(out), []byte(errOut)
			if code != 2 {
				t.Fatalf("exit %d, want 2: %s", code, errOut)
			}
			line := strings.TrimSuffix(errOut, "\n")
			if strings.Contains(line, "\n") || out != "" {
				t.Errorf("want one line on stderr and nothing on stdout, got %q and %q", errOut, out)
			}
			if !strings.HasPrefix(line, "digest: promptfooconfig.yaml: digest cannot run 1 part of this promptfoo file: (1) "+tc.want) {
				t.Errorf("got  %s\nwant %s", line, tc.want)
			}
			if n := len(srv.Requests()); n != sent {
				t.Errorf("%d requests sent, want none", n-sent)
			}
		})
	}
	// The reports of the first run are as it left them: none was rewritten.
	after := map[string][]byte{}
	readFilesInto(t, after, "", dir)
	for _, name := range []string{"report.json", "junit.xml", "report.html"} {
		if !bytes.Equal(before[name], after[name]) || len(after[name]) == 0 {
			t.Errorf("%s was rewritten or lost", name)
		}
		written[name] = after[name]
	}
	readFilesInto(t, written, "database file ", filepath.Dir(db))
	payloads := decompressedPayloads(t, db)
	if len(payloads) == 0 || !bytes.Contains(bytes.Join(payloads, nil), []byte("Say hello to Ada")) {
		t.Fatalf("the payloads do not hold the first run's prompt: nothing was searched")
	}
	for i, p := range payloads {
		written[fmt.Sprintf("payload %d", i)] = p
	}
	for name, b := range written {
		if found := keyLeaks(b, confineKey); len(found) > 0 {
			t.Errorf("the API key (%q) is in %s", found, name)
		}
	}
}

// TestEvalOutputsNeverReplaceWhatThePromptfooConfigReads: an output (-o,
// --junit, --html) naming a file the config reads (a prompt file, a test
// file, a var's file, a file a glob found) is refused before anything is
// sent, exit 2, the file untouched; the config itself was protected before.
func TestEvalOutputsNeverReplaceWhatThePromptfooConfigReads(t *testing.T) {
	bin := buildDigest(t)
	srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second})
	dir := t.TempDir()
	files := map[string]string{
		"promptfooconfig.yaml": "prompts: [file://prompt.txt]\nproviders: [openai:chat:gpt-4o-mini]\ntests:\n  - file://tests.yaml\n  - file://tests.csv\n  - file://more/*.yaml\n  - vars: {name: file://name.txt}\n    assert: [{type: contains, value: hello}]\n",
		"prompt.txt":           "Say hello to {{name}}.",
		"tests.yaml":           "- vars: {name: Ada}\n  assert: [{type: contains, value: Ada}]\n",
		"tests.csv":            "name,__expected\nBob,contains: Bob\n",
		"more/extra.yaml":      "- vars: {name: Cy}\n  assert: [{type: contains, value: Cy}]\n",
		"name.txt":             "Dee",
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ flag, path, file string }{
		{"-o", "tests.csv", "tests.csv"},
		{"--junit", "prompt.txt", "prompt.txt"},
		{"-o", "tests.yaml", "tests.yaml"},
		{"--html", "more/extra.yaml", "more/extra.yaml"},
		{"-o", "./more/../name.txt", "name.txt"},
		{"--junit", filepath.Join(dir, "tests.csv"), "tests.csv"},
	} {
		code, out, errOut := runConfined(t, bin, dir, srv, "--db", filepath.Join(t.TempDir(), "d.db"), "eval", "promptfooconfig.yaml", tc.flag, tc.path)
		want := "digest: " + tc.flag + " " + tc.path + " is a file the promptfoo config reads: writing the report there would destroy it. Try: another " + tc.flag + " path\n"
		if code != 2 || errOut != want || out != "" {
			t.Errorf("%s %s: exit %d, stderr %q, stdout %q; want 2 and %q", tc.flag, tc.path, code, errOut, out, want)
		}
		if b, err := os.ReadFile(filepath.Join(dir, tc.file)); err != nil || string(b) != files[tc.file] {
			t.Errorf("%s %s: %s was changed: %q, %v", tc.flag, tc.path, tc.file, b, err)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
	// A report beside them is written: the check is not a refusal of all.
	if code, _, errOut := runConfined(t, bin, dir, srv, "--db", filepath.Join(t.TempDir(), "d.db"), "eval", "promptfooconfig.yaml", "-o", "report.json", "--rpm", "60000", "--tpm", "100000000"); code != 0 && code != 1 {
		t.Fatalf("-o report.json: exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "report.json")); err != nil {
		t.Errorf("report.json: %v", err)
	}
}

// --allow-outside is for promptfoo configs: with a JSON Lines dataset it
// would open nothing, and is refused rather than ignored; a folder that is
// not one, or /proc, is refused naming the flag.
func TestEvalAllowOutsideFlag(t *testing.T) {
	h := newHarness(t)
	data := writeDataset(t, `{"prompt": "2+2?", "expected": "4"}`)
	res := h.run(context.Background(), "eval", data, "--allow-outside", "/tmp")
	if want := "--allow-outside is for promptfoo configs, whose files it lets them read, and " + data + " is not one. Try: leave out --allow-outside"; res.code != 2 || !strings.Contains(res.errOut, want) {
		t.Errorf("exit %d: %s\nwant %s", res.code, res.errOut, want)
	}
	dir := t.TempDir()
	config := filepath.Join(dir, "promptfooconfig.yaml")
	if err := os.WriteFile(config, []byte("prompts: ['2+2?']\ntests:\n  - assert: [{type: contains, value: '4'}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for allow, want := range map[string]string{
		"/proc":                    "--allow-outside /proc: is under /proc, which no config may read. Try: ",
		filepath.Join(dir, "nope"): "--allow-outside " + filepath.Join(dir, "nope") + ": no such file or directory. Try: the path of an existing folder",
		config:                     "--allow-outside " + config + ": not a directory. Try: the path of an existing folder",
	} {
		res := h.run(context.Background(), "eval", config, "--models", "offline", "--allow-outside", allow)
		if res.code != 2 || !strings.Contains(res.errOut, want) || strings.Count(strings.TrimSpace(res.errOut), "\n") > 0 {
			t.Errorf("--allow-outside %s: exit %d: %s\nwant %s", allow, res.code, res.errOut, want)
		}
	}
	if res := h.run(context.Background(), "eval", config, "--models", "offline", "--allow-outside", t.TempDir(), "-f", "json"); res.code != 0 {
		t.Errorf("--allow-outside an existing folder: exit %d: %s", res.code, res.errOut)
	}
}

// interruptWhilePolling runs a real digest eval --batch-api on data and
// sends it SIGINT once its batch has been looked at: it must exit 130.
// It returns what the process wrote on standard error.
func interruptWhilePolling(t *testing.T, bin string, srv *fakeprovider.Server, db, data string) string {
	t.Helper()
	cmd := exec.Command(bin, "--db", db, "eval", data, "--models", "openai:m", "--base-url", srv.OpenAIBaseURL(),
		"--batch-api", "--batch-poll", "50ms", "-f", "jsonl")
	cmd.Env = append(os.Environ(), "OPENAI_API_KEY=sk-test")
	var stderr lockedBuffer // read while the process writes it
	cmd.Stderr = &stderr
	created := srv.Stats().BatchesCreated
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Polling: the batch is made and the look after it has been answered
	// (it is printed before the next one).
	for deadline := time.Now().Add(30 * time.Second); srv.Stats().BatchesCreated == created || !strings.Contains(stderr.String(), "in_progress"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("no batch looked at after 30s; stderr:\n%s", stderr.String())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Fatalf("exit: %v, want 130; stderr:\n%s", err, stderr.String())
	}
	return stderr.String()
}

// lockedBuffer is a bytes.Buffer safe to read while another goroutine
// writes it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestInterruptWhilePollingNamesAStoredRun: a real digest eval --batch-api
// interrupted with SIGINT while it waits for its batch ends with a line
// saying what it kept. A run that stored no result yet is not kept (its
// report would be empty), and the line names no run then; one that stored
// results (those answered by an earlier run) is named by the id that
// `digest runs show` finds.
func TestInterruptWhilePollingNamesAStoredRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := buildDigest(t)
	srv := fakeprovider.Start(t, fakeprovider.Config{BatchAPI: fakeprovider.BatchAPIConfig{Processing: time.Minute}})
	db := filepath.Join(t.TempDir(), "digest.db")
	named := regexp.MustCompile(`run (\d{8}-\d{6}-[0-9a-f]+)`)

	errOut := interruptWhilePolling(t, bin, srv, db, evalItems(t, 4))
	if !strings.Contains(errOut, "digest: interrupted before any result was stored, so no run is kept") {
		t.Errorf("interrupted with nothing stored, the line should say no run is kept:\n%s", errOut)
	}
	if m := named.FindStringSubmatch(errOut); m != nil {
		t.Errorf("the line names run %s though none is kept:\n%s", m[1], errOut)
	}

	// Two of six items answered synchronously before: the batch run stores
	// their rows at once and waits for the other four.
	if out, errOut, err := runDigest(bin, []string{"--db", db, "eval", evalItems(t, 2), "--models", "openai:m", "--base-url", srv.OpenAIBaseURL(), "-f", "jsonl"}, "sk-test", 0); err != nil {
		t.Fatalf("synchronous run: %v\n%s%s", err, out, errOut)
	}
	errOut = interruptWhilePolling(t, bin, srv, db, evalItems(t, 6))
	m := named.FindStringSubmatch(errOut)
	if m == nil || !strings.Contains(errOut, "digest: interrupted; results so far are stored in") {
		t.Fatalf("interrupted with results stored, the line should name the run:\n%s", errOut)
	}
	show := exec.Command(bin, "--db", db, "runs", "show", m[1], "-f", "json")
	var out, showErr bytes.Buffer
	show.Stdout, show.Stderr = &out, &showErr
	if err := show.Run(); err != nil {
		t.Fatalf("digest runs show %s, the id the interrupt line names: %v\n%s", m[1], err, showErr.String())
	}
	if !strings.Contains(out.String(), m[1]) || !strings.Contains(showErr.String(), "is incomplete") {
		t.Errorf("digest runs show %s: %s\n%s", m[1], out.String(), showErr.String())
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
