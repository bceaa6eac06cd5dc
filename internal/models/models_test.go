package models

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/provider"
)

func TestLookupMatchesTheLongestFamily(t *testing.T) {
	for _, tt := range []struct {
		spec  provider.Spec
		price Price
		known bool
	}{
		{provider.Spec{Provider: "openai", Model: "gpt-4o-mini"}, Price{0.15, 0.60}, true},
		{provider.Spec{Provider: "openai", Model: "gpt-4o-mini-2024-07-18"}, Price{0.15, 0.60}, true},
		{provider.Spec{Provider: "openai", Model: "gpt-4o-2024-08-06"}, Price{2.50, 10.00}, true},
		{provider.Spec{Provider: "openai", Model: "gpt-4.1-mini"}, Price{0.40, 1.60}, true},
		{provider.Spec{Provider: "anthropic", Model: "claude-haiku-4-5-20251001"}, Price{1, 5}, true},
		{provider.Spec{Provider: "ollama", Model: "llama3.2"}, Price{}, true},
		{provider.Spec{Provider: "offline", Model: "offline"}, Price{}, true},
		{provider.Spec{Provider: "openai", Model: "my-finetune"}, Price{}, false},
		{provider.Spec{Provider: "openai", Model: "gpt-5-pro"}, Price{}, false},
		{provider.Spec{Provider: "openai", Model: "o3-pro"}, Price{}, false},
		{provider.Spec{Provider: "openai", Model: "gpt-5-mini-2025-08-07"}, Price{0.25, 2.00}, true},
		{provider.Spec{Provider: "anthropic", Model: "claude-sonnet-4-5-latest"}, Price{3, 15}, true},
		{provider.Spec{Provider: "vllm", Model: "gpt-4o-mini"}, Price{}, false},
	} {
		got := Lookup(tt.spec)
		if got.Price != tt.price || got.Known != tt.known {
			t.Errorf("Lookup(%v) = %+v, want price %+v known %v", tt.spec, got, tt.price, tt.known)
		}
	}
}

func TestCost(t *testing.T) {
	if got := (Price{0.15, 0.60}).Cost(1_000_000, 500_000); math.Abs(got-0.45) > 1e-12 {
		t.Errorf("cost = %v, want 0.45", got)
	}
}

func TestModelsFileOverridesTheTable(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/models.json"
	os.WriteFile(path, []byte(`{"openai:gpt-4o-mini": {"rpm": 5000}, "openai:ft-1": {"price": {"input_per_million": 0.3, "output_per_million": 1.2}, "tpm": 1000}}`), 0o600)
	f, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	mini := f.Lookup(provider.Spec{Provider: "openai", Model: "gpt-4o-mini"})
	if mini.RPM != 5000 || mini.TPM != 200_000 || mini.Price != (Price{0.15, 0.60}) {
		t.Errorf("gpt-4o-mini = %+v: the file's rpm over the table's tpm and price", mini)
	}
	ft := f.Lookup(provider.Spec{Provider: "openai", Model: "ft-1"})
	if !ft.Known || ft.Price != (Price{0.3, 1.2}) || ft.TPM != 1000 {
		t.Errorf("ft-1 = %+v", ft)
	}
	for _, bad := range []string{`{"gpt-4o": {}}`, `{"openai:x": {"rpm": -1}}`, `[1]`, `{`} {
		os.WriteFile(path, []byte(bad), 0o600)
		if _, err := LoadFile(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("LoadFile(%s) = %v, want an error naming the file", bad, err)
		}
	}
}

func TestParsePrice(t *testing.T) {
	if p, err := ParsePrice("0.15/0.60"); err != nil || p != (Price{0.15, 0.60}) {
		t.Errorf("ParsePrice = %+v, %v", p, err)
	}
	for _, bad := range []string{"", "0.15", "a/b", "-1/2", "1/"} {
		if _, err := ParsePrice(bad); err == nil {
			t.Errorf("ParsePrice(%q) accepted", bad)
		}
	}
}
