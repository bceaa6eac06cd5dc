package cmd

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/leaktest"
)

// TestEvalSendsTheKeyFromTheEnvironmentInItsHeaderAlone: OPENAI_API_KEY
// reaches the provider in every request's Authorization header, and nowhere
// else digest writes: not its output or --verbose log, the report, or the
// database, which names the account's rate limit by a hash of the key; and
// the run learns its model's token factor and keeps it (how the next run
// counts with it is internal/target's
// TestLearnedTokenFactorIsKeptForTheNextRun). The pipeline's side, with
// every report format, the stored payloads, errors that echo the key and a
// refused key, is internal/eval's TestEvalNeverWritesTheAPIKey.
func TestEvalSendsTheKeyFromTheEnvironmentInItsHeaderAlone(t *testing.T) {
	const key = "sk-proj-evalsecret-4b9e1c7d2a6f8e0b3c5d"
	srv := arithmeticServer(t)
	h := newHarness(t)
	h.env["OPENAI_API_KEY"], h.env["OPENAI_BASE_URL"] = key, srv.OpenAIBaseURL()
	var lines []string // long enough for their tokens to teach the factor
	for i := range 10 {
		lines = append(lines, fmt.Sprintf(`{"prompt": "What is %d + 1? %s", "expected": "%d"}`, i, strings.Repeat("Read the whole question first. ", 12), i+1))
	}
	out := filepath.Join(t.TempDir(), "report.json")
	res := h.run(context.Background(), "--verbose", "eval", writeDataset(t, lines...), "--models", "openai:strong", "-f", "json", "-o", out)
	for _, r := range srv.Requests() {
		if r.Header.Get("Authorization") != "Bearer "+key {
			t.Errorf("a request without the key: %v", r.Header)
		}
	}
	written := map[string][]byte{"stdout": []byte(res.out), "stderr": []byte(res.errOut)}
	leaktest.ReadDir(t, written, "", filepath.Dir(out))
	leaktest.ReadDir(t, written, "database file ", filepath.Dir(h.db))
	if res.code != 0 || len(srv.Requests()) != 10 || len(written) < 4 {
		t.Fatalf("exit %d, %d requests, %d places read: %s", res.code, len(srv.Requests()), len(written), res.errOut)
	}
	for name, b := range written {
		if found := leaktest.Find(b, key); len(found) > 0 {
			t.Errorf("the API key (%q) is in %s", found, name)
		}
	}
	// The run learned its model's token factor and kept it for the next.
	db, err := sql.Open("sqlite", "file:"+h.db+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var samples int
	if err := db.QueryRow(`SELECT samples FROM token_factors WHERE model = 'openai:strong'`).Scan(&samples); err != nil || samples != 10 {
		t.Errorf("the run kept a token factor of %d answers (%v), want its 10", samples, err)
	}
}

// TestEvalScrubsTheSecretsOfItsEnvironment: the secrets eval scrubs are its
// environment's: a variable named for a secret and the API keys, whatever
// the run's provider, are taken out of the prompts sent (--no-redact
// included) and of the answers reported; the redactor runs unless
// --no-redact, and what it replaced is counted on stderr. That no secret
// is sent, stored or reported, whatever its source, is internal/eval's
// TestEvalScrubsTheEnvironmentsSecretsWhateverTheirSource.
func TestEvalScrubsTheSecretsOfItsEnvironment(t *testing.T) {
	const openaiKey, anthropicKey = "sk-proj-scrubme-4b9e1c7d2a6f8e0b3c5d7a9b", "sk-ant-api03-scrubme-9d8c7b6a5f4e3d2c1b0a"
	const ciToken = "ci-token-7f3e9a1c5b2d8e4f6a0c"
	t.Setenv("DIGEST_TEST_CI_TOKEN", ciToken)
	srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second, Answer: func(r fakeprovider.Received) string {
		return "You said: " + r.Messages[len(r.Messages)-1].Content + " Also, " + anthropicKey
	}})
	h := newHarness(t)
	h.env["OPENAI_API_KEY"], h.env["ANTHROPIC_API_KEY"], h.env["OPENAI_BASE_URL"] = openaiKey, anthropicKey, srv.OpenAIBaseURL()
	data := writeDataset(t, `{"id": "environ", "prompt": "OPENAI_API_KEY=`+openaiKey+` DIGEST_TEST_CI_TOKEN=`+ciToken+` HOME=/root", "expected": "x"}`,
		`{"id": "config", "prompt": "Is this config right? api_key: sk-live-Zq8Xw2Vb6Nm4Kj7Hg5Fd3Sa1", "expected": "x"}`)
	for flag, want := range map[string]string{"--no-redact": "OPENAI_API_KEY=<redacted> DIGEST_TEST_CI_TOKEN=<redacted> HOME=/root", "--no-redact=false": "api_key: [REDACTED:"} {
		before := len(srv.Requests())
		res := h.run(context.Background(), "eval", data, "--models", "openai:echo", "-f", "jsonl", flag)
		sent := ""
		for _, r := range srv.Requests()[before:] {
			sent += r.Messages[len(r.Messages)-1].Content + "\n"
		}
		counted := strings.Contains(res.errOut, "secrets replaced by markers before sending")
		if res.code != 0 || !strings.Contains(sent, want) || counted != (flag != "--no-redact") || !strings.Contains(res.out, "You said: ") {
			t.Errorf("%s: exit %d, sent %q; stderr %s", flag, res.code, sent, res.errOut)
		}
		if found := leaktest.Find([]byte(sent+res.out), openaiKey, anthropicKey, ciToken); len(found) > 0 {
			t.Errorf("%s: %q sent or reported", flag, found)
		}
	}
}

// TestPasswordInTheBaseURLStaysHome: a base URL with user:password in it
// (a proxy's basic auth) fails every request; the password is in no line
// digest prints, no report and no database file; and the bad-address
// error masks it too. The stored errors and payloads are internal/eval's
// TestEvalNeverWritesTheAPIKey.
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
	leaktest.ReadDir(t, written, "report ", out)
	leaktest.ReadDir(t, written, "database ", filepath.Dir(h.db))
	res = h.run(context.Background(), "eval", sums(t), "--models", "openai:strong", "--base-url", "svc:"+password+"@proxy/v1")
	oneLineError(t, res, 2, "--base-url")
	written["bad address"] = []byte(res.errOut)
	for name, b := range written {
		if bytes.Contains(b, []byte(password)) {
			t.Errorf("the password is in %s", name)
		}
	}
}
