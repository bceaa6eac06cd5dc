package cmd

// Real digest eval processes: what only a process shows (a signal's exit
// code, what a promptfoo config may read of the process's environment and
// files). The pipeline's behaviour is tested in internal/eval.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/gittest"
	"github.com/digest-cli/digest/internal/leaktest"
	"github.com/digest-cli/digest/internal/pgtest"
)

// TestHugeRepeatStreamsAndStopsOnSIGTERM runs a real digest eval asking
// one item a hundred million times: its repeats are sent as they are made,
// so answers are stored within moments, and a SIGTERM stops the run with
// exit 130 and what it stored kept (before, the repeats were all made in
// memory first, and the signal went unheard while they were).
func TestHugeRepeatStreamsAndStopsOnSIGTERM(t *testing.T) {
	bin := digestBinary(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "digest.db")
	data := writeDataset(t, `{"prompt": "What is 2 + 2?", "expected": "4"}`)
	cmd := exec.Command(bin, "--db", db, "eval", data, "--models", "offline", "--repeat", "100000000", "-o", filepath.Join(dir, "out.json"))
	stored := 0 // within start's minute, or the repeats are not streamed
	p := start(t, cmd, func(string) bool { stored = countRows(t, db, "eval_run_results"); return stored > 0 })
	if code := p.signal(t, syscall.SIGTERM); code != 130 || !strings.Contains(p.errOut.String(), "interrupted") {
		t.Fatalf("exit %d, want 130 and a line saying the run was interrupted:\n%s", code, p.errOut.String())
	}
	if n := countRows(t, db, "eval_run_results"); n < stored {
		t.Errorf("%d results after the signal, %d before: stored work was lost", n, stored)
	}
}

// confineKey is the API key in the environment of the processes below:
// what /proc/self/environ would hand a config that read it.
const confineKey = "sk-test-SECRETVALUE1234567890"

// runConfined runs the digest binary in dir with the fake key and the fake
// server's address in its environment; it returns the exit code and what
// the process wrote.
func runConfined(t *testing.T, bin, dir string, srv *fakeprovider.Server, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "OPENAI_API_KEY="+confineKey, "OPENAI_BASE_URL="+srv.OpenAIBaseURL(), "GITHUB_STEP_SUMMARY=", "NO_COLOR=1")
	res := exited(t, cmd, 0)
	return res.code, res.out, res.errOut
}

// TestEvalPromptfooConfigCannotReadTheKeys runs a real digest eval on
// configs that name /proc/self/environ (directly, as a var, with
// --allow-outside /) or a file outside their folder through a link, the
// API key in the environment. Each is refused before anything is sent:
// exit 2, one line naming the config's line and the reference, with what
// to try; and the key is in no report, stdout, stderr, database file or
// stored payload. (promptfoo.TestConfinedToItsFolder checks the other
// ways out of the folder: links to /proc, globs, absolute paths.)
func TestEvalPromptfooConfigCannotReadTheKeys(t *testing.T) {
	bin := buildDigest(t)
	srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second})
	dir := t.TempDir()
	// A file outside the folder that holds the key, as a .env file would.
	elsewhere := filepath.Join(t.TempDir(), "keys.env")
	if err := os.WriteFile(elsewhere, []byte("OPENAI_API_KEY="+confineKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(dir, "keys.txt")); err != nil {
		t.Skip("no symbolic links here:", err)
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
	leaktest.ReadDir(t, before, "", dir)

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
		{"a var from /proc/self/environ", `"{{x}}"`, "file:///proc/self/environ", nil,
			`promptfooconfig.yaml:4: var "x": file:///proc/self/environ: is under /proc, which no config may read`},
		{"a link out of the folder", "file://keys.txt", "Ada", nil,
			"promptfooconfig.yaml:1: prompt file keys.txt: is a symbolic link leading out of the config's folder " + dir + " (to " + elsewhere + "). Try: copy the file into " + dir + ", or --allow-outside " + filepath.Dir(elsewhere)},
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
	leaktest.ReadDir(t, after, "", dir)
	for _, name := range []string{"report.json", "junit.xml", "report.html"} {
		if !bytes.Equal(before[name], after[name]) || len(after[name]) == 0 {
			t.Errorf("%s was rewritten or lost", name)
		}
		written[name] = after[name]
	}
	leaktest.ReadDir(t, written, "database file ", filepath.Dir(db))
	payloads := leaktest.Payloads(t, db)
	if len(payloads) == 0 || !bytes.Contains(bytes.Join(payloads, nil), []byte("Say hello to Ada")) {
		t.Fatalf("the payloads do not hold the first run's prompt: nothing was searched")
	}
	for i, p := range payloads {
		written[fmt.Sprintf("payload %d", i)] = p
	}
	for name, b := range written {
		if found := leaktest.Find(b, confineKey); len(found) > 0 {
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
	files := map[string]string{
		"promptfooconfig.yaml": "prompts: [file://prompt.txt]\nproviders: [openai:chat:gpt-4o-mini]\ntests:\n  - file://tests.yaml\n  - file://tests.csv\n  - file://more/*.yaml\n  - vars: {name: file://name.txt}\n    assert: [{type: contains, value: hello}]\n",
		"prompt.txt":           "Say hello to {{name}}.",
		"tests.yaml":           "- vars: {name: Ada}\n  assert: [{type: contains, value: Ada}]\n",
		"tests.csv":            "name,__expected\nBob,contains: Bob\n",
		"more/extra.yaml":      "- vars: {name: Cy}\n  assert: [{type: contains, value: Cy}]\n",
		"name.txt":             "Dee",
	}
	folder := gittest.New(t) // a folder to Write the files in
	for name, body := range files {
		folder.Write(name, body)
	}
	dir := folder.Dir
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
// would open nothing, and is refused rather than ignored; a folder it may
// not name is a usage error in one line naming the flag (which folders,
// promptfoo.TestAllowOutsideMustBeAFolder checks); an existing one runs.
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
	res = h.run(context.Background(), "eval", config, "--models", "offline", "--allow-outside", config)
	if want := "--allow-outside " + config + ": not a directory. Try: the path of an existing folder"; res.code != 2 || !strings.Contains(res.errOut, want) || strings.Count(strings.TrimSpace(res.errOut), "\n") > 0 {
		t.Errorf("--allow-outside %s: exit %d: %s\nwant %s", config, res.code, res.errOut, want)
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
	created := srv.Stats().BatchesCreated
	// Polling: the batch is made and the look after it has been answered
	// (it is printed before the next one).
	p := start(t, digestCmd(bin, "sk-test", "--db", db, "eval", data, "--models", "openai:m", "--base-url", srv.OpenAIBaseURL(),
		"--batch-api", "--batch-poll", "50ms", "-f", "jsonl"), func(errOut string) bool {
		return srv.Stats().BatchesCreated > created && strings.Contains(errOut, "in_progress")
	})
	if code := p.signal(t, syscall.SIGINT); code != 130 {
		t.Fatalf("exit %d, want 130; stderr:\n%s", code, p.errOut.String())
	}
	return p.errOut.String()
}

// TestInterruptWhilePollingNamesAStoredRun: a real digest eval --batch-api
// interrupted with SIGINT while it waits for its batch ends with a line
// saying what it kept. A run that stored no result yet is not kept (its
// report would be empty), and the line names no run then; one that stored
// results (those answered by an earlier run) is named by the id that
// `digest runs show` finds.
func TestInterruptWhilePollingNamesAStoredRun(t *testing.T) {
	bin := digestBinary(t)
	srv := fakeprovider.Start(t, fakeprovider.Config{BatchAPI: fakeprovider.BatchAPIConfig{Processing: time.Minute}})
	db := filepath.Join(t.TempDir(), "digest.db")
	named := regexp.MustCompile(`run (\d{8}-\d{6}-[0-9a-f]+)`)

	if errOut := interruptWhilePolling(t, bin, srv, db, evalItems(t, 4)); !strings.Contains(errOut, "digest: interrupted before any result was stored, so no run is kept") || named.MatchString(errOut) {
		t.Errorf("interrupted with nothing stored, the line should say no run is kept, and name none:\n%s", errOut)
	}

	// Two of six items answered synchronously before: the batch run stores
	// their rows at once and waits for the other four.
	if res := exited(t, digestCmd(bin, "sk-test", "--db", db, "eval", evalItems(t, 2), "--models", "openai:m", "--base-url", srv.OpenAIBaseURL(), "-f", "jsonl"), 0); res.code != 0 {
		t.Fatalf("synchronous run: exit %d\n%s", res.code, res.errOut)
	}
	errOut := interruptWhilePolling(t, bin, srv, db, evalItems(t, 6))
	m := named.FindStringSubmatch(errOut)
	if m == nil || !strings.Contains(errOut, "digest: interrupted; results so far are stored in") {
		t.Fatalf("interrupted with results stored, the line should name the run:\n%s", errOut)
	}
	show := exited(t, exec.Command(bin, "--db", db, "runs", "show", m[1], "-f", "json"), 0)
	if show.code != 0 || !strings.Contains(show.out, m[1]) || !strings.Contains(show.errOut, "is incomplete") {
		t.Errorf("digest runs show %s, the id the interrupt line names: exit %d, %s\n%s", m[1], show.code, show.out, show.errOut)
	}
}

// TestPostgresServerLostMidEvalSaysSoOnce: the database server crashes
// under a running digest eval. The run, dropping its record, and reading
// its reports back all find the server gone: the one error line says so
// once, with what to try, and that no reports could be written.
func TestPostgresServerLostMidEvalSaysSoOnce(t *testing.T) {
	bin := digestBinary(t)
	pg := pgtest.StartServer(t)
	srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second, Latency: 20 * time.Millisecond})
	lines := crashUnder(t, digestCmd(bin, "k", "--db", pg.URL, "eval", evalItems(t, 120), "--models", "openai:m", "--base-url", srv.OpenAIBaseURL(),
		"-j", "1", "-f", "json", "--junit", filepath.Join(t.TempDir(), "junit.xml")), srv, pg)
	if last := lines[len(lines)-1]; strings.Count(last, "Try: ") != 1 || strings.Contains(strings.Join(lines, "\n"), "panic") {
		t.Errorf("last line %q, want the server's loss said once, with one Try", last)
	}
}

// TestTwoEvalProcessesPayEachKeyOnce runs two real digest eval processes on
// the same dataset and database at the same time: between them every
// request key is paid for once, and each prints the whole report.
func TestTwoEvalProcessesPayEachKeyOnce(t *testing.T) {
	bin := digestBinary(t)
	forEachDatabase(t, func(t *testing.T, db string) {
		srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second, Latency: 30 * time.Millisecond})
		const items = 40
		data := evalItems(t, items)
		outs := runTogether(t, bin, "--db", db, "eval", data, "--models", "openai:m", "--base-url", srv.OpenAIBaseURL(),
			"--concurrency", "2", "-f", "jsonl")
		for i, out := range outs {
			if seen := reportedField(t, out, "item"); len(seen) != items || len(slices.Compact(slices.Sorted(slices.Values(seen)))) != items {
				t.Errorf("process %d reported %d rows, want each of the %d items once", i, len(seen), items)
			}
		}
		if n := srv.Stats().Requests; n != items {
			t.Errorf("%d requests between the two processes, want %d: one per key", n, items)
		}
		if cached := strings.Count(outs[0]+outs[1], `"cached":true`); cached != items {
			t.Errorf("%d results read from the other process's work, want %d (each key paid by one, read by the other)", cached, items)
		}
	})
}

// TestTwoEvalProcessesAskTheJudgeOnce: two real processes judging the same
// answers at once ask the grading model once per verdict between them:
// verdicts are claimed like answers.
func TestTwoEvalProcessesAskTheJudgeOnce(t *testing.T) {
	bin := digestBinary(t)
	forEachDatabase(t, func(t *testing.T, db string) {
		srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second, Latency: 20 * time.Millisecond, Answer: func(r fakeprovider.Received) string {
			if strings.HasSuffix(r.Model, "grader") {
				time.Sleep(20 * time.Millisecond)
				return "PASS\nA greeting."
			}
			return "Good morning"
		}})
		const items = 24
		lines := make([]string, items)
		for i := range lines {
			lines[i] = fmt.Sprintf(`{"id": "g%d", "prompt": "Say good morning, %d", "assert": [{"type": "llm-rubric", "value": "Is a greeting"}]}`, i, i)
		}
		data := writeDataset(t, lines...)
		t.Setenv("OPENAI_BASE_URL", srv.OpenAIBaseURL()) // where the judge is served from
		// The answers are stored first (graded by another judge), so that
		// both processes come to the same verdicts at the same moments.
		runTogether(t, bin, "--db", db, "eval", data, "--models", "openai:m", "--judge", "openai:first-grader", "-f", "jsonl")
		before := len(srv.Requests())
		outs := runTogether(t, bin, "--db", db, "eval", data, "--models", "openai:m", "--judge", "openai:grader",
			"--concurrency", "2", "-f", "jsonl")
		for i := range 2 {
			if n := strings.Count(outs[i], `"pass":true`); n != items {
				t.Errorf("process %d: %d passing results, want %d", i, n, items)
			}
		}
		var answers, verdicts int
		for _, r := range srv.Requests()[before:] {
			if r.Model == "grader" {
				verdicts++
			} else {
				answers++
			}
		}
		if answers != 0 || verdicts != items {
			t.Errorf("%d answers and %d verdicts paid between two processes, want the %d verdicts once each and no answer again", answers, verdicts, items)
		}
	})
}
