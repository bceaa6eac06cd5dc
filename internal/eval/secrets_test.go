package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/engine"
	"github.com/digest-cli/digest/internal/evalreport"
	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/leaktest"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/provider/anthropic"
	"github.com/digest-cli/digest/internal/provider/openai"
	"github.com/digest-cli/digest/internal/redact"
	"github.com/digest-cli/digest/internal/score"
	"github.com/digest-cli/digest/internal/target"
)

// anthropicEcho is a server speaking Anthropic's error format that repeats
// the caller's key in every error, as misconfigured proxies do: its first
// three answers are 500s, which the engine retries and logs, the rest
// 400s, which end up in the results. What digest keeps of either must not
// keep the key.
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

// written is everything a run left behind, by name: the run's report in
// every format digest writes (each --format, JUnit, HTML; `runs show`
// writes the same from the store), the runs' records, the database file
// with whatever sits beside it, and every stored payload, decompressed.
func (r *testRun) written(t *testing.T, into map[string][]byte, runID string) {
	t.Helper()
	ctx := context.Background()
	run, ok, err := r.st.Run(ctx, runID)
	if err != nil || !ok {
		t.Fatalf("run %s: %v %v", runID, ok, err)
	}
	report := func(name string, write func(io.Writer, *evalreport.Eval) error) {
		e, err := Report(ctx, r.st, run, nil) // its results are read once
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := write(&b, e); err != nil {
			t.Fatal(err)
		}
		into[runID+" "+name] = b.Bytes()
	}
	for _, format := range evalreport.EvalFormats {
		rep, _ := evalreport.ForEvalFormat(format)
		report(format, rep.WriteEval)
	}
	report("junit", evalreport.WriteJUnit)
	report("html", evalreport.WriteHTML)
	runs, err := r.st.Runs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	into["runs"] = fmt.Appendf(nil, "%+v", runs)
	leaktest.ReadDir(t, into, "database file ", filepath.Dir(r.st.Path()))
	for i, b := range leaktest.Payloads(t, r.st.Path()) {
		into[fmt.Sprintf("payload %d", i)] = b
	}
}

// TestEvalNeverWritesTheAPIKey runs real OpenAI and Anthropic clients, as
// cmd builds them from the environment's keys, with debug logging: one
// against a fake that answers, one against a server that fails every
// request repeating the key, one at a base URL holding a proxy's password
// that answers 404; then a run whose key the provider refuses. Neither key
// nor the password is in the logs, the run's error, any report format,
// the database and its sidecar files, or any payload, decompressed.
func TestEvalNeverWritesTheAPIKey(t *testing.T) {
	const openaiKey = "sk-proj-evalsecret-4b9e1c7d2a6f8e0b3c5d"
	const anthropicKey = "sk-ant-api03-evalsecret-9d8c7b6a5f4e3d2c1b0a"
	const password = "hunter2-proxy-pass"
	secrets := []string{openaiKey, anthropicKey, password}
	srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second, APIKey: openaiKey})
	var echoCalls atomic.Int32
	echo := anthropicEcho(t, &echoCalls)
	proxied := strings.Replace(srv.URL(), "http://", "http://svc:"+password+"@", 1) + "/nope/v1"
	model := func(spec, base string, p provider.Provider) target.Target {
		s, _ := provider.ParseSpec(spec)
		return target.Target{Spec: s, BaseURL: base, Provider: p, Limits: engine.Limits{Window: time.Minute}}
	}
	oa := func(base, key string) provider.Provider {
		return openai.New(openai.Options{Name: "openai", BaseURL: base, APIKey: key, KeyEnv: "OPENAI_API_KEY"})
	}
	r := newTestRun(t)
	r.models = []target.Target{
		model("openai:strong", srv.OpenAIBaseURL(), oa(srv.OpenAIBaseURL(), openaiKey)),
		model("anthropic:echo", echo.URL, anthropic.New(anthropic.Options{BaseURL: echo.URL, APIKey: anthropicKey, KeyEnv: "ANTHROPIC_API_KEY"})),
		model("openai:proxied", proxied, oa(proxied, openaiKey)),
	}
	var logs bytes.Buffer
	o := Options{Concurrency: 1, MaxFailures: -1, Log: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Secrets: redact.EnvSecrets([]string{"OPENAI_API_KEY=" + openaiKey, "ANTHROPIC_API_KEY=" + anthropicKey})}
	out, e := r.run(t, sums(10), o)
	if e.Models[0].Errors != 0 || e.Models[1].Errors != 10 || e.Models[2].Errors != 10 || echoCalls.Load() != 13 {
		t.Fatalf("want 10 answers from the fake, 10 failures from the echoing server after 3 retries and 10 404s, got %+v and %d calls", e.Models, echoCalls.Load())
	}
	written := map[string][]byte{"log": logs.Bytes()}
	r.written(t, written, out.RunID)
	if !bytes.Contains(logs.Bytes(), []byte("level=DEBUG msg=retrying")) || !bytes.Contains(logs.Bytes(), []byte("this proxy rejects")) {
		t.Errorf("the retried errors were not logged, so the logs were not searched:\n%s", logs.Bytes())
	}
	if jsonl := written[out.RunID+" jsonl"]; !bytes.Contains(jsonl, []byte("this proxy rejects the request made with key")) || !bytes.Contains(jsonl, []byte("HTTP 404")) {
		t.Errorf("the errors are not in the report, so the test covers nothing:\n%.1000s", jsonl)
	}
	if !bytes.Contains(bytes.Join(mapValues(written, "payload "), nil), []byte("What is 2+2?")) {
		t.Fatal("the payloads do not hold the prompts: the decompression reads nothing")
	}

	// A key the provider refuses stops the run; its error names the
	// variable, not the key.
	refusing := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second, APIKey: "sk-proj-the-right-one"})
	r.models = []target.Target{model("openai:strong", refusing.OpenAIBaseURL(), oa(refusing.OpenAIBaseURL(), openaiKey))}
	o.Dataset, o.Source, o.Models, o.Tokenizer, o.Store, o.Scorer = "sums.jsonl", strings.NewReader(sums(3)), r.models, r.tok, r.st, &score.Scorer{}
	_, err := Run(context.Background(), o)
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.Fatal || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Fatalf("a refused key: %v", err)
	}
	written["401 error"] = []byte(err.Error())
	if got := refusing.Requests(); len(got) != 1 || got[0].Header.Get("Authorization") != "Bearer "+openaiKey {
		t.Errorf("the refusing server should have seen the key once: %d requests", len(got))
	}
	for name, b := range written {
		if found := leaktest.Find(b, secrets...); len(found) > 0 {
			t.Errorf("a secret (%q) is in %s", found, name)
		}
	}
}

// mapValues are the values of m whose names start with prefix.
func mapValues(m map[string][]byte, prefix string) [][]byte {
	var out [][]byte
	for name, b := range m {
		if strings.HasPrefix(name, prefix) {
			out = append(out, b)
		}
	}
	return out
}

// TestEvalScrubsTheEnvironmentsSecretsWhateverTheirSource: a dataset whose
// prompts hold the environment's secrets (as a file:// to
// /proc/self/environ would, were it allowed) sends none of them: the API
// keys and any variable named for a secret are scrubbed, and the redactor
// replaces what it knows of a secret's shape. A model that writes another
// provider's key in its answer gets it scrubbed before it is stored or
// reported. cmd's TestEvalScrubsTheSecretsOfItsEnvironment checks that
// the secrets are the environment's.
func TestEvalScrubsTheEnvironmentsSecretsWhateverTheirSource(t *testing.T) {
	const openaiKey = "sk-proj-scrubme-4b9e1c7d2a6f8e0b3c5d7a9b"
	const anthropicKey = "sk-ant-api03-scrubme-9d8c7b6a5f4e3d2c1b0a"
	const ciToken = "ci-token-7f3e9a1c5b2d8e4f6a0c"
	secrets := []string{openaiKey, anthropicKey, ciToken}
	srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second, Answer: func(r fakeprovider.Received) string {
		// Repeats its prompt, and a key it should never have known.
		return "You said: " + r.Messages[len(r.Messages)-1].Content + " Also, " + anthropicKey
	}})
	r := newTestRun(t)
	r.models = []target.Target{{Spec: provider.Spec{Provider: "openai", Model: "echo"}, BaseURL: srv.OpenAIBaseURL(),
		Provider: openai.New(openai.Options{BaseURL: srv.OpenAIBaseURL(), APIKey: openaiKey}), Limits: engine.Limits{Window: time.Minute}}}
	data := `{"id": "environ", "prompt": "OPENAI_API_KEY=` + openaiKey + ` DIGEST_TEST_CI_TOKEN=` + ciToken + ` HOME=/root", "expected": "x"}` + "\n" +
		`{"id": "config", "prompt": "Is this config right? api_key: sk-live-Zq8Xw2Vb6Nm4Kj7Hg5Fd3Sa1", "expected": "x"}` + "\n"
	env := redact.EnvSecrets([]string{"OPENAI_API_KEY=" + openaiKey, "ANTHROPIC_API_KEY=" + anthropicKey, "DIGEST_TEST_CI_TOKEN=" + ciToken, "HOME=/root"})
	written := map[string][]byte{}
	sentBy := func(name string, redactor *redact.Redactor) ([]byte, *RunStats) {
		t.Helper()
		before := len(srv.Requests())
		out, _ := r.run(t, data, Options{Secrets: env, Redactor: redactor})
		var sent []byte
		for _, q := range srv.Requests()[before:] {
			for _, m := range q.Messages {
				sent = append(sent, m.Content+"\n"...)
			}
		}
		written[name+" sent"] = sent
		r.written(t, written, out.RunID)
		return sent, out
	}
	// The redactor first: it knows a key by its name and its shape.
	redactor, err := redact.New()
	if err != nil {
		t.Fatal(err)
	}
	sent, out := sentBy("redacted", redactor)
	if !bytes.Contains(sent, []byte("api_key: [REDACTED:")) || !bytes.Contains(sent, []byte("HOME=/root")) || out.Redacted.Total() == 0 {
		t.Errorf("the redactor should replace the key-shaped values, count them (%v) and leave the rest: %s", out.Redacted, sent)
	}
	// Without it, the environment's secrets are still scrubbed, by value.
	sent, _ = sentBy("not redacted", nil)
	if !bytes.Contains(sent, []byte("OPENAI_API_KEY=<redacted> DIGEST_TEST_CI_TOKEN=<redacted> HOME=/root")) || !bytes.Contains(sent, []byte("api_key: sk-live-")) {
		t.Errorf("without the redactor, all but the environment's secrets should be sent: %s", sent)
	}
	if !bytes.Contains(bytes.Join(mapValues(written, out.RunID+" json"), nil), []byte("You said: ")) {
		t.Fatal("the answers are not in the report, so it was not searched")
	}
	for name, b := range written {
		if found := leaktest.Find(b, secrets...); len(found) > 0 {
			t.Errorf("a secret (%q) is in %s", found, name)
		}
	}
}
