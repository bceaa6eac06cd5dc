package models

import (
	"math"
	"os"
	"path/filepath"
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

// TestModelsFileRefusesWhatItDoesNotKnow: a misspelt key ("rmp") was
// ignored, leaving the account's limit unset with nothing said. Each
// mistake is one line naming the file, the model, what is wrong, and what
// to write instead.
func TestModelsFileRefusesWhatItDoesNotKnow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "model-config.json")
	for _, tt := range []struct {
		file string
		want []string
	}{
		{`{"openai:gpt-4o-mini": {"rmp": 5000}}`, []string{`openai:gpt-4o-mini: unknown field "rmp". Try: rpm`}},
		{`{"openai:gpt-4o-mini": {"tpm": 1, "RPM": 5000}}`, []string{`unknown field "RPM". Try: rpm`}},
		{`{"openai:x": {"prices": {}}}`, []string{`unknown field "prices". Try: price`}},
		{`{"openai:x": {"known": true}}`, []string{`unknown field "known". Try: one of batch_price, price, rpm, tpm`}},
		{`{"openai:x": {"price": {"input_per_milion": 1, "output_per_million": 2}}}`, []string{`openai:x: price: unknown field "input_per_milion". Try: input_per_million`}},
		{`{"openai:x": {"price": {"input_per_million": 0.3}}}`, []string{"price has no output_per_million", `Try: "price": {`}},
		{`{"openai:x": {"price": 0.3}}`, []string{"price: want an object, got 0.3. Try: {"}},
		{`{"openai:x": 5}`, []string{`openai:x: want an object, got 5. Try: {"batch_price": {`}},
		{`{"openai:x": {"rpm": "fast"}}`, []string{`rpm is string, not a whole number. Try: "rpm": 500`}},
		{`{"openai:x": {"tpm": 2.5}}`, []string{`tpm is number 2.5, not a whole number. Try: "tpm": 200000`}},
		{`{"openai:x": {"rpm": -1}}`, []string{`rpm is -1; it cannot be negative. Try: "rpm": 500`}},
		{`{"openai:x": {"price": {"input_per_million": 1, "output_per_million": -2}}}`, []string{"price.output_per_million is -2; it cannot be negative"}},
		{`{"openai:x": {"price": {"input_per_million": "1", "output_per_million": 2}}}`, []string{"price.input_per_million is string, not a number of dollars"}},
	} {
		if err := os.WriteFile(path, []byte(tt.file), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := LoadFile(path)
		if err == nil {
			t.Errorf("%s: accepted", tt.file)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "models file "+path+": ") || strings.Contains(msg, "\n") || !strings.Contains(msg, "Try: ") {
			t.Errorf("%s: %q, want one line naming the file, then Try:", tt.file, msg)
		}
		for _, w := range tt.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: %q, want it to say %q", tt.file, msg, w)
			}
		}
	}
}

func TestTypoDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{{"rmp", "rpm", 1}, {"rmp", "tpm", 2}, {"", "rpm", 3}, {"price", "price", 0}, {"prcie", "price", 1}, {"tmp", "tpm", 1}} {
		if got := typoDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("typoDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestBatchPriceIsHalfUnlessTheFileSaysOtherwise(t *testing.T) {
	spec := provider.Spec{Provider: "openai", Model: "gpt-4o-mini"}
	got, ok := Lookup(spec).Batched(spec)
	if !ok || got != (Price{InputPerM: 0.075, OutputPerM: 0.30}) {
		t.Errorf("gpt-4o-mini through the batch API: %+v, %v; want half of 0.15/0.60", got, ok)
	}
	path := filepath.Join(t.TempDir(), "models.json")
	os.WriteFile(path, []byte(`{"anthropic:claude-haiku-4-5": {"batch_price": {"input_per_million": 0.4, "output_per_million": 2}}}`), 0o644)
	file, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	haiku := provider.Spec{Provider: "anthropic", Model: "claude-haiku-4-5"}
	if got, ok := file.Lookup(haiku).Batched(haiku); !ok || got != (Price{InputPerM: 0.4, OutputPerM: 2}) {
		t.Errorf("batch_price from the file: %+v, %v", got, ok)
	}
	if _, ok := Lookup(provider.Spec{Provider: "ollama", Model: "llama3"}).Batched(provider.Spec{Provider: "ollama", Model: "llama3"}); ok {
		t.Error("ollama has no batch API, yet a batch price came back")
	}
	os.WriteFile(path, []byte(`{"openai:x": {"batch_price": {"input_per_million": 0.4}}}`), 0o644)
	if _, err := LoadFile(path); err == nil || !strings.Contains(err.Error(), "batch_price has no output_per_million") {
		t.Errorf("half a batch_price: %v", err)
	}
}
