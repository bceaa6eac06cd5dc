package cmd

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/fakeprovider"
)

// keyLeaks names the secrets found in b: each whole, and its distinctive
// part without the well-known prefix, so a key cut at its first characters
// is found too.
func keyLeaks(b []byte, secrets ...string) []string {
	var found []string
	for _, s := range secrets {
		for _, needle := range []string{s, s[len(s)/3:]} {
			if bytes.Contains(b, []byte(needle)) {
				found = append(found, needle)
				break
			}
		}
	}
	return found
}

// anthropicEcho is a server speaking Anthropic's error format that repeats
// the caller's key in every error, as misconfigured proxies do: its first
// three answers are 500s, which digest retries and logs, the rest 400s,
// which end up in the reports. What digest keeps of either must not keep
// the key.
func anthropicEcho(t *testing.T, calls *atomic.Int32) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status, kind := http.StatusBadRequest, "invalid_request_error"
		if calls.Add(1) <= 3 {
			status, kind = http.StatusInternalServerError, "api_error"
		}
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]string{
			"type":    kind,
			"message": "this proxy rejects the request made with key " + r.Header.Get("x-api-key"),
		}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestEvalNeverWritesTheAPIKey runs digest eval with verbose logging against
// an OpenAI-format fake that answers and an Anthropic-format server that
// fails every request repeating the key, writes every report format, then a
// run refused with 401, and looks for either key in everything digest
// wrote: standard output and error, each report, the database and its
// sidecar files, and every gzipped payload, decompressed.
func TestEvalNeverWritesTheAPIKey(t *testing.T) {
	const openaiKey = "sk-proj-evalsecret-4b9e1c7d2a6f8e0b3c5d"
	const anthropicKey = "sk-ant-api03-evalsecret-9d8c7b6a5f4e3d2c1b0a"
	secrets := []string{openaiKey, anthropicKey}

	// The search itself must find a key where there is one.
	if got := keyLeaks([]byte("header\nAuthorization: Bearer "+openaiKey[:12]+openaiKey[12:]+"\n"), secrets...); len(got) != 1 {
		t.Fatalf("keyLeaks found %v in a text holding the OpenAI key", got)
	}
	if got := keyLeaks([]byte("…"+anthropicKey[len(anthropicKey)/3:]), secrets...); len(got) != 1 {
		t.Fatalf("keyLeaks missed the tail of a cut key: %v", got)
	}

	srv := arithmeticServer(t)
	var echoCalls atomic.Int32
	echo := anthropicEcho(t, &echoCalls)
	h := newHarness(t)
	h.env["OPENAI_API_KEY"] = openaiKey
	h.env["OPENAI_BASE_URL"] = srv.OpenAIBaseURL()
	h.env["ANTHROPIC_API_KEY"] = anthropicKey
	h.env["ANTHROPIC_BASE_URL"] = echo.URL
	out := t.TempDir()
	h.env["GITHUB_STEP_SUMMARY"] = filepath.Join(out, "step-summary.md")
	data := sums(t)
	models := "openai:strong,anthropic:echo"

	written := map[string][]byte{} // what digest wrote, by name
	run := func(name string, args ...string) result {
		t.Helper()
		res := h.run(context.Background(), append([]string{"--verbose"}, args...)...)
		written[name+" stdout"] = []byte(res.out)
		written[name+" stderr"] = []byte(res.errOut)
		return res
	}
	first := run("eval", "eval", data, "--models", models, "-f", "json", "-o", filepath.Join(out, "report.json"),
		"--junit", filepath.Join(out, "junit.xml"), "--html", filepath.Join(out, "report.html"), "-j", "1")
	if first.code != 1 { // the echoing server fails every request
		t.Fatalf("exit %d, want 1: %s", first.code, first.errOut)
	}
	var rep evalJSON
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil || json.Unmarshal(b, &rep) != nil || len(rep.Models) != 2 {
		t.Fatalf("report: %v: %s", err, b)
	}
	if rep.Models[0].Passed != 10 || rep.Models[1].Errors != 10 || echoCalls.Load() != 13 {
		t.Fatalf("want 10 answers from the OpenAI fake and 10 failures from the echoing server after 3 retries, got %+v and %d calls", rep.Models, echoCalls.Load())
	}
	for _, format := range []string{"table", "jsonl", "csv", "markdown"} {
		if res := run("eval -f "+format, "eval", data, "--models", models, "-f", format, "-o", filepath.Join(out, "report."+format)); res.code != 1 {
			t.Fatalf("-f %s: exit %d: %s", format, res.code, res.errOut)
		}
	}
	for _, format := range []string{"json", "jsonl", "csv", "markdown", "table"} {
		if res := run("runs show -f "+format, "runs", "show", rep.RunID, "-f", format); res.code != 0 {
			t.Fatalf("runs show -f %s: exit %d: %s", format, res.code, res.errOut)
		}
		if res := run("runs list -f "+format, "runs", "list", "-f", format); res.code != 0 {
			t.Fatalf("runs list -f %s: exit %d: %s", format, res.code, res.errOut)
		}
	}
	// The failure path is in the reports, with the key taken out of it.
	jsonl, _ := os.ReadFile(filepath.Join(out, "report.jsonl"))
	if !bytes.Contains(jsonl, []byte("this proxy rejects the request made with key")) {
		t.Errorf("the echoing server's error is not in the JSON Lines report, so the test covers nothing:\n%.1000s", jsonl)
	}

	// A key the provider refuses stops the run, naming the variable.
	refusing := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second, APIKey: "sk-proj-the-right-one"})
	refused := run("eval 401", "eval", data, "--models", "openai:strong", "--base-url", refusing.OpenAIBaseURL(), "-f", "json")
	if refused.code != 1 || !strings.Contains(refused.errOut, "OPENAI_API_KEY") || !strings.Contains(refused.errOut, "HTTP 401") {
		t.Fatalf("a refused key: exit %d: %s", refused.code, refused.errOut)
	}
	if got := refusing.Requests(); len(got) != 1 || got[0].Header.Get("Authorization") != "Bearer "+openaiKey {
		t.Errorf("the refusing server should have seen the key once: %d requests", len(got))
	}

	readFilesInto(t, written, "", out)
	for _, name := range []string{"report.json", "report.table", "report.jsonl", "report.csv", "report.markdown", "junit.xml", "report.html", "step-summary.md"} {
		if len(written[name]) == 0 {
			t.Errorf("%s was not written", name)
		}
	}
	if !bytes.Contains(written["eval stderr"], []byte("level=DEBUG msg=retrying")) || !bytes.Contains(written["eval stderr"], []byte("this proxy rejects")) {
		t.Errorf("--verbose did not log the retried errors, so the logs were not searched:\n%s", written["eval stderr"])
	}

	// The database, read while closed, with whatever sits beside it.
	readFilesInto(t, written, "database file ", filepath.Dir(h.db))
	payloads := decompressedPayloads(t, h.db)
	if len(payloads) < 20 {
		t.Fatalf("%d payloads, want the 10 requests and 10 answers at least", len(payloads))
	}
	var all []byte
	for i, p := range payloads {
		written[fmt.Sprintf("payload %d", i)] = p
		all = append(all, p...)
	}
	if !bytes.Contains(all, []byte("What is 2 + 0?")) {
		t.Fatalf("the payloads do not hold the prompts: the decompression reads nothing")
	}

	for name, b := range written {
		if found := keyLeaks(b, secrets...); len(found) > 0 {
			t.Errorf("the API key (%q) is in %s", found, name)
		}
	}
}

// decompressedPayloads reads every stored request and response body.
func decompressedPayloads(t *testing.T, path string) [][]byte {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT gz FROM payloads`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out [][]byte
	for rows.Next() {
		var gz []byte
		if err := rows.Scan(&gz); err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(gz))
		if err != nil {
			t.Fatalf("a payload is not gzip: %v", err)
		}
		b, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// readFilesInto reads every file of dir into written, named by prefix and
// the file's name.
func readFilesInto(t *testing.T, written map[string][]byte, prefix, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		written[prefix+e.Name()] = b
	}
}

// TestEvalScrubsTheEnvironmentsSecretsWhateverTheirSource: a dataset whose
// prompts hold the environment's secrets (as a file:// to /proc/self/environ
// would, were it allowed) sends none of them: the API keys and any variable
// named for a secret are scrubbed, and the redactor replaces what it knows
// of a secret's shape. A model that writes another provider's key in its
// answer gets it scrubbed before it is stored or reported.
func TestEvalScrubsTheEnvironmentsSecretsWhateverTheirSource(t *testing.T) {
	const openaiKey = "sk-proj-scrubme-4b9e1c7d2a6f8e0b3c5d7a9b"
	const anthropicKey = "sk-ant-api03-scrubme-9d8c7b6a5f4e3d2c1b0a"
	const ciToken = "ci-token-7f3e9a1c5b2d8e4f6a0c"
	t.Setenv("DIGEST_TEST_CI_TOKEN", ciToken)
	secrets := []string{openaiKey, anthropicKey, ciToken}
	srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second, Answer: func(r fakeprovider.Received) string {
		// Repeats its prompt, and a key it should never have known.
		return "You said: " + r.Messages[len(r.Messages)-1].Content + " Also, " + anthropicKey
	}})
	h := newHarness(t)
	h.env["OPENAI_API_KEY"] = openaiKey
	h.env["ANTHROPIC_API_KEY"] = anthropicKey
	out := t.TempDir()
	data := writeDataset(t,
		`{"id": "environ", "prompt": "OPENAI_API_KEY=`+openaiKey+` DIGEST_TEST_CI_TOKEN=`+ciToken+` HOME=/root", "expected": "x"}`,
		`{"id": "config", "prompt": "Is this config right? api_key: sk-live-Zq8Xw2Vb6Nm4Kj7Hg5Fd3Sa1", "expected": "x"}`)
	written := map[string][]byte{}
	sentBy := func(name string, args ...string) []byte {
		t.Helper()
		before := len(srv.Requests())
		res := h.run(context.Background(), append([]string{"--verbose", "eval", data, "--models", "openai:echo", "--base-url", srv.OpenAIBaseURL(), "-f", "json"}, args...)...)
		if res.code != 0 {
			t.Fatalf("%s: exit %d: %s", name, res.code, res.errOut)
		}
		written[name+" stdout"], written[name+" stderr"] = []byte(res.out), []byte(res.errOut)
		var sent []byte
		for _, r := range srv.Requests()[before:] {
			for _, m := range r.Messages {
				sent = append(sent, m.Content+"\n"...)
			}
		}
		written[name+" sent"] = sent
		return sent
	}
	// The redactor first: it knows a key by its name and its shape.
	sent := sentBy("eval", "-o", filepath.Join(out, "report.json"), "--html", filepath.Join(out, "report.html"))
	if !bytes.Contains(sent, []byte("api_key: [REDACTED:")) || !bytes.Contains(sent, []byte("HOME=/root")) {
		t.Errorf("the redactor should replace the key-shaped values and leave the rest: %s", sent)
	}
	if !strings.Contains(string(written["eval stderr"]), "secrets replaced by markers before sending") {
		t.Errorf("stderr does not count the secrets replaced:\n%s", written["eval stderr"])
	}
	// Without it, the environment's secrets are still scrubbed, by value.
	sent = sentBy("eval --no-redact", "--no-redact", "-o", filepath.Join(out, "report-no-redact.json"))
	if !bytes.Contains(sent, []byte("OPENAI_API_KEY=<redacted> DIGEST_TEST_CI_TOKEN=<redacted> HOME=/root")) || !bytes.Contains(sent, []byte("api_key: sk-live-")) {
		t.Errorf("--no-redact should send all but the environment's secrets: %s\n%s", sent, written["eval --no-redact stderr"])
	}
	readFilesInto(t, written, "", out)
	readFilesInto(t, written, "database file ", filepath.Dir(h.db))
	for i, p := range decompressedPayloads(t, h.db) {
		written[fmt.Sprintf("payload %d", i)] = p
	}
	if !bytes.Contains(written["report.json"], []byte("You said: ")) {
		t.Fatalf("the answers are not in the report, so it was not searched:\n%s", written["report.json"])
	}
	for name, b := range written {
		if found := keyLeaks(b, secrets...); len(found) > 0 {
			t.Errorf("a secret (%q) is in %s", found, name)
		}
	}
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
