package key

import (
	"testing"

	"github.com/digest-cli/digest/internal/provider"
)

func TestOfIsCanonical(t *testing.T) {
	if Of("ab", "c") == Of("a", "bc") {
		t.Error(`Of("ab","c") == Of("a","bc"): parts are not delimited`)
	}
	if Of("a") == Of("a", "") {
		t.Error("an empty trailing part does not change the key")
	}
	// Pinned: every stored key is made this way; a change of encoding
	// would orphan every cache.
	if got := Of("x", "y"); got != "231ff9ae421066bd352810e4e3042f3475d6a5c5bb87539070a6afbd9232f785" {
		t.Errorf("Of(x, y) = %s: the encoding changed", got)
	}
	if got := Of(); got != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Errorf("Of() = %s, want the SHA-256 of nothing", got)
	}
}

func TestRepoID(t *testing.T) {
	a := RepoID("a2730b5417d427fa4a1150f40040d89252132138")
	if len(a) != 16 || a == RepoID("be57f07ffffffffffffffffffffffffffffffff0") {
		t.Errorf("RepoID = %q: want 16 hex digits that differ between roots", a)
	}
	if got := Commit(a, "abc"); got != a+":abc" {
		t.Errorf("Commit = %q", got)
	}
}

// TestRepoIDIsStable pins the id of a known root: changing how ids are
// derived would orphan every cache that exists.
func TestRepoIDIsStable(t *testing.T) {
	if got := RepoID("a2730b5417d427fa4a1150f40040d89252132138"); got != "7f0d143149efbadb" {
		t.Errorf("RepoID changed to %s", got)
	}
}

func TestRequestKeyCoversEverythingThatShapesTheAnswer(t *testing.T) {
	temp := 0.0
	base := Request{Provider: "openai", BaseURL: "https://api.openai.com/v1", Model: "gpt-4o-mini", Temperature: &temp,
		MaxTokens: 100, System: "be brief", Messages: []provider.Message{{Role: "user", Content: "2+2?"}}}
	seed := 7
	hot := 1.0
	variants := map[string]func(r *Request){
		"provider":    func(r *Request) { r.Provider = "ollama" },
		"base url":    func(r *Request) { r.BaseURL = "http://localhost:8000/v1" },
		"model":       func(r *Request) { r.Model = "gpt-4o" },
		"temperature": func(r *Request) { r.Temperature = &hot },
		"no temp":     func(r *Request) { r.Temperature = nil },
		"max tokens":  func(r *Request) { r.MaxTokens = 101 },
		"seed":        func(r *Request) { r.Seed = &seed },
		"system":      func(r *Request) { r.System = "" },
		"message":     func(r *Request) { r.Messages = []provider.Message{{Role: "user", Content: "2+3?"}} },
		"role":        func(r *Request) { r.Messages = []provider.Message{{Role: "assistant", Content: "2+2?"}} },
		"repeat":      func(r *Request) { r.Repeat = 1 },
	}
	seen := map[string]string{base.Key(): "base"}
	for name, change := range variants {
		r := base
		change(&r)
		k := r.Key()
		if other, dup := seen[k]; dup {
			t.Errorf("%s gives the same key as %s", name, other)
		}
		seen[k] = name
	}
	// Pinned, as Of is: a changed canonical encoding would pay every
	// stored answer again.
	if got := base.Key(); got != "43a623fcbc9a49df14e5d0ec844cf471951e381f7de1ec40e544bfd7db8030b4" {
		t.Errorf("the request's key is %s: its encoding changed", got)
	}
}

func TestBaseURLGivesOneKeyPerServer(t *testing.T) {
	for _, tt := range []struct {
		spellings []string
		want      string
	}{
		{[]string{"https://api.openai.com/v1", "https://api.openai.com/v1/", "HTTPS://API.OpenAI.com/v1", "https://api.openai.com:443/v1",
			"https://key:secret@api.openai.com/v1"}, "https://api.openai.com/v1"},
		{[]string{"http://localhost:11434/v1", "http://127.0.0.1:11434/v1/", "http://[::1]:11434/v1", "http://LOCALHOST:11434/v1",
			"http://127.0.0.2:11434/v1"}, "http://localhost:11434/v1"},
		{[]string{"http://vllm.internal/v1", "http://vllm.internal:80/v1", "http://user:pass@vllm.internal/v1//"}, "http://vllm.internal/v1"},
	} {
		for _, s := range tt.spellings {
			if got := BaseURL(s); got != tt.want {
				t.Errorf("BaseURL(%q) = %q, want %q", s, got, tt.want)
			}
		}
	}
	// Different servers stay apart: another port, another path, another scheme.
	distinct := []string{"http://localhost:8000/v1", "http://localhost:8001/v1", "http://localhost:8000/v2", "https://localhost:8000/v1",
		"http://10.0.0.5:8000/v1"}
	seen := map[string]string{}
	for _, s := range distinct {
		k := BaseURL(s)
		if other, dup := seen[k]; dup {
			t.Errorf("%s and %s share the key %s", s, other, k)
		}
		seen[k] = s
	}
}
