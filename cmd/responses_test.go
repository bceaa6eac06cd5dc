package cmd

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/cmdutil"
	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/iostreams"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/provider/openai"
)

// A Responses-only model named as openai:MODEL, and any model named as
// openai-responses:MODEL, get the Responses client; other OpenAI models the
// chat client. Both wires take the same key and base URL, and share the
// rate limit of the account's model.
func TestProviderPicksTheResponsesAPI(t *testing.T) {
	ios, _, _ := iostreams.Test()
	f := factory{NewFactory(ios, "test")}
	env := map[string]string{"OPENAI_API_KEY": "sk-test-0123456789abcdef", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
	f.Getenv = func(k string) string { return env[k] }
	for _, tt := range []struct {
		model     string
		responses bool
	}{
		{"openai:gpt-5-pro", true},
		{"openai:o3-pro-2025-06-10", true},
		{"openai:gpt-5.1-codex", true},
		{"openai:o3-deep-research", true},
		{"openai-responses:gpt-4o-mini", true},
		{"openai-responses:gpt-5", true},
		{"openai:gpt-4o-mini", false},
		{"openai:gpt-5", false},
	} {
		spec, err := provider.ParseSpec(tt.model)
		if err != nil {
			t.Fatal(err)
		}
		p, err := f.Provider(spec, cmdutil.ProviderOptions{})
		if err != nil {
			t.Fatalf("%s: %v", tt.model, err)
		}
		_, responses := p.(*openai.ResponsesClient)
		_, chat := p.(*openai.Client)
		if responses != tt.responses || chat == tt.responses {
			t.Errorf("%s: %T", tt.model, p)
		}
		if _, ok := p.(provider.Batcher); !ok {
			t.Errorf("%s: %T has no batch API", tt.model, p)
		}
		if url, err := f.BaseURL(spec, ""); err != nil || url != env["OPENAI_BASE_URL"] {
			t.Errorf("%s: base URL %q, %v", tt.model, url, err)
		}
	}
	chat, _ := f.LimitName(provider.Spec{Provider: "openai", Model: "gpt-5"}, "")
	resp, _ := f.LimitName(provider.Spec{Provider: openai.ResponsesProvider, Model: "gpt-5"}, "")
	if chat == "" || chat != resp {
		t.Errorf("limit names %q and %q: one account's model is one limit", chat, resp)
	}
	other, _ := f.LimitName(provider.Spec{Provider: openai.ResponsesProvider, Model: "gpt-5-pro"}, "")
	if other == resp {
		t.Errorf("gpt-5 and gpt-5-pro share the limit %q", other)
	}
}

func TestResponsesProviderNeedsTheOpenAIKey(t *testing.T) {
	f := fixture(t)
	h := newHarness(t)
	res := h.run(context.Background(), "summarize", f.Dir, "--model", "openai-responses:gpt-4o-mini")
	if res.code != 2 || !strings.Contains(res.errOut, "needs an API key in OPENAI_API_KEY") {
		t.Errorf("exit %d: %q", res.code, res.errOut)
	}
	res = h.run(context.Background(), "summarize", f.Dir, "--model", "nosuch:gpt-4o-mini")
	if res.code != 2 || !strings.Contains(res.errOut, "openai-responses") {
		t.Errorf("unknown provider: exit %d: %q", res.code, res.errOut)
	}
}

// openai:gpt-5-pro is answered through /v1/responses, which the chat
// endpoint would refuse; openai-responses:MODEL sends any model there.
func TestSummarizeThroughTheResponsesAPI(t *testing.T) {
	const key = "sk-proj-digest-responses-key-5e4d3c2b1a"
	for _, model := range []string{"openai:gpt-5-pro", "openai-responses:gpt-4o-mini"} {
		t.Run(model, func(t *testing.T) {
			srv := fakeprovider.Start(t, fakeprovider.Config{APIKey: key, SendLimitHeaders: true, RPM: 1000})
			f := fixture(t)
			h := newHarness(t)
			h.env["OPENAI_API_KEY"] = key
			res := h.run(context.Background(), "summarize", f.Dir, "--model", model, "--base-url", srv.OpenAIBaseURL(), "--batch-size", "3", "-f", "jsonl",
				"--tpm", "10000000") // gpt-5-pro's first-tier TPM would pace the run
			if res.code != 0 {
				t.Fatalf("exit %d: %s", res.code, res.errOut)
			}
			got := entries(t, res.out)
			if len(got) != 8 {
				t.Fatalf("%d entries, want 8", len(got))
			}
			for _, e := range got {
				hash, subject := e["commit"].(string), e["subject"].(string)
				if want := "Summary of " + hash[:12] + ": " + subject; e["summary"] != want || e["model"] != model {
					t.Errorf("commit %s: %v by %v, want %q", hash[:7], e["summary"], e["model"], want)
				}
			}
			reqs := srv.Requests()
			if len(reqs) == 0 {
				t.Fatal("no request reached the fake")
			}
			for _, r := range reqs {
				if r.Path != fakeprovider.ResponsesPath || r.Status != 200 || r.Header.Get("Authorization") != "Bearer "+key {
					t.Errorf("%s %s: %d", r.Path, r.Model, r.Status)
				}
				if strings.Contains(string(r.Body), `"messages"`) || !strings.Contains(string(r.Body), `"store":false`) {
					t.Errorf("not a Responses body: %s", r.Body)
				}
			}
			if strings.Contains(res.out+res.errOut, key) {
				t.Error("the API key was printed")
			}
		})
	}
}

// Sent as chat completions, the same model is refused, as OpenAI refuses it.
func TestChatRefusesAResponsesOnlyModel(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{})
	c := openai.New(openai.Options{Name: "openai", BaseURL: srv.OpenAIBaseURL(), HTTPClient: srv.Client()})
	_, err := c.Complete(context.Background(), provider.Request{Model: "gpt-5-pro", MaxTokens: 100, Messages: []provider.Message{{Role: "user", Content: "hi"}}})
	if err == nil || !strings.Contains(err.Error(), "only supported in v1/responses") {
		t.Errorf("chat with gpt-5-pro: %v", err)
	}
}

// --batch-api with a Responses-only model sends /v1/responses batches.
func TestBatchAPIThroughTheResponsesAPI(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{BatchAPI: fakeprovider.BatchAPIConfig{Processing: 20 * time.Millisecond}})
	h := newHarness(t)
	h.raw = true
	h.env["OPENAI_BASE_URL"], h.env["OPENAI_API_KEY"] = srv.OpenAIBaseURL(), "sk-test-batch"
	res := h.run(context.Background(), "summarize", historyRepo(t, 12).Dir, "--model", "openai:gpt-5-pro", "--batch-api", "--batch-poll", "20ms", "-f", "jsonl")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.errOut)
	}
	es := entries(t, res.out)
	for _, e := range es {
		if s, _ := e["summary"].(string); !strings.HasPrefix(s, "Summary of ") {
			t.Errorf("commit %v: %q", e["commit"], s)
		}
	}
	// Every batch was made for /v1/responses.
	req, _ := http.NewRequest(http.MethodGet, srv.OpenAIBaseURL()+"/batches?limit=100", nil)
	req.Header.Set("Authorization", "Bearer sk-test-batch")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Data []struct {
			Endpoint string `json:"endpoint"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || len(list.Data) == 0 {
		t.Fatalf("batches: %+v, %v", list, err)
	}
	for _, b := range list.Data {
		if b.Endpoint != "/v1/responses" {
			t.Errorf("a batch for %q", b.Endpoint)
		}
	}
	st := srv.Stats()
	if len(es) != 12 || st.Succeeded != 0 || st.BatchesCreated < 1 || st.BatchItemsAnswered != st.BatchItems {
		t.Errorf("%d entries; fake: %d synchronous, %d batches, %d items, %d answered", len(es), st.Succeeded, st.BatchesCreated, st.BatchItems, st.BatchItemsAnswered)
	}
}
