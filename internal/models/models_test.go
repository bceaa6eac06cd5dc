package models

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/provider"
)

func openai(model string) provider.Spec    { return provider.Spec{Provider: "openai", Model: model} }
func anthropic(model string) provider.Spec { return provider.Spec{Provider: "anthropic", Model: model} }

// TestLookupMatchesNameSnapshotAndLatestOnly: a model is found under its
// own name, its dated snapshots and -latest, never under a shorter name
// that begins it: gpt-5.4-mini is not priced as gpt-5.4, nor gpt-5-pro as
// gpt-5.
func TestLookupMatchesNameSnapshotAndLatestOnly(t *testing.T) {
	for _, tt := range []struct {
		spec    provider.Spec
		in, out float64
		known   bool
	}{
		{openai("gpt-4o-mini"), 0.15, 0.60, true},
		{openai("gpt-4o-mini-2024-07-18"), 0.15, 0.60, true},
		{openai("gpt-4o-2024-08-06"), 2.50, 10, true},
		{openai("gpt-4o-2024-05-13"), 5, 15, true}, // a snapshot with a row of its own
		{openai("gpt-4.1-mini"), 0.40, 1.60, true},
		{openai("gpt-5-mini-2025-08-07"), 0.25, 2, true},
		{openai("gpt-5.4"), 2.50, 15, true},
		{openai("gpt-5.4-mini"), 0.75, 4.50, true},
		{openai("gpt-5.4-mini-2026-03-17"), 0.75, 4.50, true},
		{openai("gpt-5.4-nano"), 0.20, 1.25, true},
		{openai("gpt-5.4-pro"), 30, 180, true},
		{openai("gpt-5-pro"), 15, 120, true},
		{openai("gpt-5-pro-2025-10-06"), 15, 120, true},
		{openai("o3-pro"), 20, 80, true},
		{openai("gpt-5.5-2026-04-23"), 5, 30, true},
		{openai("gpt-5.6"), 5, 30, true},
		{openai("gpt-6.1-sol"), 2, 10, true},
		{anthropic("claude-haiku-4-5-20251001"), 1, 5, true},
		{anthropic("claude-sonnet-4-5-latest"), 3, 15, true},
		{anthropic("claude-3-5-haiku-latest"), 0.80, 4, true},
		{anthropic("claude-opus-4-1-20250805"), 15, 75, true},
		{provider.Spec{Provider: "ollama", Model: "llama3.2"}, 0, 0, true},
		{provider.Spec{Provider: "offline", Model: "offline"}, 0, 0, true},
		// Longer names, and names of no row.
		{openai("my-finetune"), 0, 0, false},
		{openai("gpt-5.4-mini-high"), 0, 0, false},
		{openai("gpt-5.4-codex"), 0, 0, false},
		{openai("gpt-5.3"), 0, 0, false}, // the API has no plain gpt-5.3
		{openai("gpt-6-luna-mini"), 0, 0, false},
		{openai("gpt-5-2025"), 0, 0, false},
		{anthropic("claude-sonnet-5-5-fast"), 0, 0, false},
		{anthropic("claude-haiku-5-5"), 0, 0, false}, // priced by prompt length: left out
		{provider.Spec{Provider: "vllm", Model: "gpt-4o-mini"}, 0, 0, false},
		// OpenAI's models through its Responses API cost what they cost.
		{provider.Spec{Provider: "openai-responses", Model: "gpt-5-pro"}, 15, 120, true},
		{provider.Spec{Provider: "openai-responses", Model: "gpt-4o-mini-2024-07-18"}, 0.15, 0.60, true},
		{provider.Spec{Provider: "openai-responses", Model: "claude-sonnet-5"}, 0, 0, false},
	} {
		got := Lookup(tt.spec)
		if got.Price.InputPerM != tt.in || got.Price.OutputPerM != tt.out || got.Known != tt.known {
			t.Errorf("Lookup(%v) = %+v, want %v/%v known %v", tt.spec, got, tt.in, tt.out, tt.known)
		}
	}
}

// TestCurrentModelsAreInTheTable: every model the issue names, and the
// older ones still served, has a price, a context, a limit on its output
// and a source.
func TestCurrentModelsAreInTheTable(t *testing.T) {
	for _, spec := range []provider.Spec{
		anthropic("claude-sonnet-5"), anthropic("claude-opus-4-8"), anthropic("claude-opus-4-7"), anthropic("claude-opus-4-6"),
		anthropic("claude-sonnet-4-6"), anthropic("claude-opus-4-5"), anthropic("claude-sonnet-4-5"), anthropic("claude-haiku-4-5"),
		anthropic("claude-sonnet-5-5"), anthropic("claude-opus-5-5"), anthropic("claude-opus-5"), anthropic("claude-fable-5-1"),
		openai("gpt-5.1"), openai("gpt-5.2"), openai("gpt-5.3-codex"), openai("gpt-5.4"), openai("gpt-5.5"), openai("gpt-5.6-sol"),
		openai("gpt-5.6-terra"), openai("gpt-5.6-luna"), openai("gpt-5.4-mini"), openai("gpt-5.4-nano"), openai("gpt-5-pro"),
		openai("gpt-5.2-pro"), openai("gpt-5.4-pro"), openai("gpt-5.5-pro"), openai("o3-pro"), openai("o1-pro"),
		openai("gpt-4.1"), openai("gpt-4.1-mini"), openai("gpt-4.1-nano"), openai("gpt-4o"), openai("gpt-4o-mini"),
		openai("o3"), openai("o4-mini"), openai("o3-mini"), openai("gpt-6-sol"), openai("gpt-6-luna"), openai("gpt-6-astra"),
	} {
		info := Lookup(spec)
		if !info.Known || info.Price.InputPerM <= 0 || info.Price.OutputPerM <= 0 || info.MaxOutput <= 0 || info.Source == "" {
			t.Errorf("%s: %+v, want a price, a max output and a source", spec, info)
		}
		if info.Context <= 0 && spec.Model != "gpt-5.6-luna" { // Luna's context is not confirmed
			t.Errorf("%s: no context window", spec)
		}
	}
}

// TestTableRowsArePinned holds figures read from the providers' pages
// (see each row's Source): a change to the table must change them here
// too, on purpose.
func TestTableRowsArePinned(t *testing.T) {
	for _, tt := range []struct {
		spec               provider.Spec
		price              Price
		context, maxOutput int
		rpm, tpm           int
		retired, successor string
	}{
		{anthropic("claude-sonnet-5"), price(2, 10, 0.20, 2.50), 1_000_000, 128_000, 1_000, 2_000_000, "", ""},
		{anthropic("claude-opus-4-8"), price(5, 25, 0.50, 6.25), 1_000_000, 128_000, 1_000, 2_000_000, "", ""},
		{anthropic("claude-opus-4-5"), price(5, 25, 0.50, 6.25), 200_000, 64_000, 1_000, 2_000_000, "", ""},
		{anthropic("claude-sonnet-4-6"), price(3, 15, 0.30, 3.75), 1_000_000, 64_000, 1_000, 2_000_000, "", ""},
		{anthropic("claude-haiku-4-5"), price(1, 5, 0.10, 1.25), 200_000, 64_000, 1_000, 2_000_000, "", ""},
		{anthropic("claude-sonnet-5-5"), price(2, 10, 0.10, 2.50), 1_000_000, 128_000, 1_000, 2_000_000, "", ""},
		{anthropic("claude-opus-4-1"), price(15, 75, 1.50, 18.75), 200_000, 32_000, 0, 0, "2026-08-05", "claude-opus-4-8"},
		{anthropic("claude-sonnet-4"), price(3, 15, 0.30, 3.75), 200_000, 64_000, 0, 0, "2026-06-15", "claude-sonnet-4-6"},
		{anthropic("claude-3-5-haiku"), price(0.80, 4, 0.08, 1), 200_000, 8_192, 0, 0, "2026-02-19", "claude-haiku-4-5"},
		{openai("gpt-5.6-sol"), price(5, 30, 0.50, 6.25), 1_050_000, 128_000, 500, 500_000, "", ""},
		{openai("gpt-5.5"), price(5, 30, 0.50, 0), 1_050_000, 128_000, 500, 500_000, "", ""},
		{openai("gpt-5.4-mini"), price(0.75, 4.50, 0.075, 0), 400_000, 128_000, 500, 500_000, "", ""},
		{openai("gpt-5.4-nano"), price(0.20, 1.25, 0.02, 0), 400_000, 128_000, 500, 200_000, "", ""},
		{openai("gpt-5-pro"), price(15, 120, 0, 0), 400_000, 272_000, 500, 30_000, "2026-12-11", "gpt-5.6-sol"},
		{openai("gpt-4.1"), price(2, 8, 0.50, 0), 1_047_576, 32_768, 500, 30_000, "2027-01-14", "gpt-6-luna"},
		{openai("gpt-4o-mini"), price(0.15, 0.60, 0.075, 0), 128_000, 16_384, 500, 200_000, "2027-01-14", "gpt-6-luna"},
		{openai("gpt-4.5-preview"), price(75, 150, 37.50, 0), 128_000, 16_384, 0, 0, "2025-07-14", "gpt-4.1"},
		{openai("o1-preview"), price(15, 60, 7.50, 0), 128_000, 32_768, 0, 0, "2025-07-28", "o3"},
		{openai("o1-mini"), price(1.10, 4.40, 0.55, 0), 128_000, 65_536, 0, 0, "2025-10-27", "o4-mini"},
		{openai("gpt-6.1-sol"), price(2, 10, 0.10, 2.50), 1_050_000, 128_000, 5_000, 1_000_000, "", ""},
	} {
		got := Lookup(tt.spec)
		if got.Price != tt.price || got.Context != tt.context || got.MaxOutput != tt.maxOutput || got.RPM != tt.rpm || got.TPM != tt.tpm ||
			got.Retired != tt.retired || got.Successor != tt.successor {
			t.Errorf("%s = %+v\nwant price %+v, context %d, max output %d, %d rpm, %d tpm, retired %q, successor %q",
				tt.spec, got, tt.price, tt.context, tt.maxOutput, tt.rpm, tt.tpm, tt.retired, tt.successor)
		}
	}
}

// TestTableRowsHoldTogether: each row's cache prices are the share of its
// input price its provider's page gives, its retirement a date, and its
// successor a row of the table (but one OpenAI names and no longer lists).
func TestTableRowsHoldTogether(t *testing.T) {
	cachedShare := map[string]float64{
		// OpenAI: 50% for the gpt-4o family, 25% for gpt-4.1 and o4-mini,
		// 10% for the gpt-5 family and GPT-6, 5% for GPT-6.1 Sol.
		"gpt-4o": 0.5, "gpt-4o-mini": 0.5, "o1": 0.5, "o1-mini": 0.5, "o1-preview": 0.5, "o3-mini": 0.5, "gpt-4.5-preview": 0.5,
		"gpt-4.1": 0.25, "gpt-4.1-mini": 0.25, "gpt-4.1-nano": 0.25, "o3": 0.25, "o4-mini": 0.25, "o3-deep-research": 0.25,
		"o4-mini-deep-research": 0.25, "codex-mini-latest": 0.25, "gpt-6.1-sol": 0.05,
		// Anthropic: 10%, but where the pricing page says less.
		"claude-fable-5-1": 0.025, "claude-opus-5-5": 0.05, "claude-sonnet-5-5": 0.05,
	}
	// Claude Haiku 3's page rounds its cache prices to the cent.
	tolerance := map[string]float64{"claude-3-haiku": 0.02}
	for _, row := range Table() {
		info, name := row.Info, row.Spec.Model
		tol := max(tolerance[name], 1e-9)
		if info.Source == "" {
			t.Errorf("%s has no source", row.Spec)
		}
		if p := info.Price; p.CachedInputPerM != 0 {
			share, ok := cachedShare[name]
			if !ok {
				share = 0.1
			}
			if math.Abs(p.CachedInputPerM-share*p.InputPerM) > tol {
				t.Errorf("%s: cached input $%v is not %v of input $%v", row.Spec, p.CachedInputPerM, share, p.InputPerM)
			}
		}
		if p := info.Price; p.CacheWritePerM != 0 && math.Abs(p.CacheWritePerM-1.25*p.InputPerM) > tol {
			t.Errorf("%s: cache writes $%v are not 125%% of input $%v", row.Spec, p.CacheWritePerM, p.InputPerM)
		}
		if row.Spec.Provider == "anthropic" && (info.Price.CachedInputPerM == 0 || info.Price.CacheWritePerM == 0) {
			t.Errorf("%s: Claude models price cache reads and writes", row.Spec)
		}
		if info.Retired != "" {
			if _, err := time.Parse(time.DateOnly, info.Retired); err != nil {
				t.Errorf("%s: retired %q is not YYYY-MM-DD", row.Spec, info.Retired)
			}
		}
		if info.Successor != "" && !Lookup(provider.Spec{Provider: row.Spec.Provider, Model: info.Successor}).Known && info.Successor != "gpt-5-codex-mini" {
			t.Errorf("%s: successor %s is not in the table", row.Spec, info.Successor)
		}
		if info.Successor != "" && info.Retired == "" {
			t.Errorf("%s names a successor but no retirement", row.Spec)
		}
	}
}

// TestRetirement: a retired model's line says when and what to run
// instead; a deprecated one's when it retires; a successor itself retired
// or deprecated is followed to one that is not.
func TestRetirement(t *testing.T) {
	dec := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		spec provider.Spec
		now  time.Time
		want string
	}{
		{anthropic("claude-opus-4-1"), dec,
			"anthropic:claude-opus-4-1 was retired on 2026-08-05; its successor is anthropic:claude-opus-4-8. Try: anthropic:claude-opus-4-8 in its place"},
		{anthropic("claude-opus-4-1-20250805"), dec,
			"anthropic:claude-opus-4-1-20250805 was retired on 2026-08-05; its successor is anthropic:claude-opus-4-8. Try: anthropic:claude-opus-4-8 in its place"},
		{anthropic("claude-opus-4-1"), time.Date(2026, 8, 4, 23, 0, 0, 0, time.UTC),
			"anthropic:claude-opus-4-1 is deprecated and retires on 2026-08-05; its successor is anthropic:claude-opus-4-8. Try: anthropic:claude-opus-4-8 in its place"},
		{openai("gpt-5"), dec,
			"openai:gpt-5 is deprecated and retires on 2026-12-11; its successor is openai:gpt-5.6-sol. Try: openai:gpt-5.6-sol in its place"},
		{openai("gpt-5-2025-08-07"), time.Date(2026, 12, 11, 0, 0, 0, 0, time.UTC),
			"openai:gpt-5-2025-08-07 was retired on 2026-12-11; its successor is openai:gpt-5.6-sol. Try: openai:gpt-5.6-sol in its place"},
		{openai("gpt-4.5-preview"), dec,
			"openai:gpt-4.5-preview was retired on 2025-07-14; its successor is openai:gpt-4.1 (retires on 2027-01-14), then openai:gpt-6-luna. Try: openai:gpt-6-luna in its place"},
		{anthropic("claude-3-5-sonnet-20241022"), dec,
			"anthropic:claude-3-5-sonnet-20241022 was retired on 2025-10-22; its successor is anthropic:claude-sonnet-4 (retired on 2026-06-15), then anthropic:claude-sonnet-4-6. Try: anthropic:claude-sonnet-4-6 in its place"},
		{provider.Spec{Provider: "openai-responses", Model: "o3-pro"}, dec,
			"openai-responses:o3-pro is deprecated and retires on 2026-12-11; its successor is openai-responses:gpt-5.6-sol. Try: openai-responses:gpt-5.6-sol in its place"},
		{openai("gpt-5.1"), dec,
			"openai:gpt-5.1 is deprecated and retires on 2027-04-01. Try: digest models, for a current model"},
		{anthropic("claude-sonnet-5"), dec, ""},
		{openai("gpt-5.4-mini"), dec, ""},
		{openai("my-finetune"), dec, ""},
		{provider.Spec{Provider: "ollama", Model: "llama3.2"}, dec, ""},
	} {
		if got := Retirement(tt.spec, tt.now); got != tt.want {
			t.Errorf("Retirement(%s, %s) =\n%q\nwant\n%q", tt.spec, tt.now.Format(time.DateOnly), got, tt.want)
		}
	}
}

func TestCost(t *testing.T) {
	if got := (Price{InputPerM: 0.15, OutputPerM: 0.60}).Cost(1_000_000, 500_000); math.Abs(got-0.45) > 1e-12 {
		t.Errorf("cost = %v, want 0.45", got)
	}
	// Cost is the worst case: no cache discount.
	if got := price(1, 4, 0.1, 1.25).Cost(1_500, 300); math.Abs(got-(1_500+1_200)/1e6) > 1e-15 {
		t.Errorf("cost = %v, want the uncached price", got)
	}
}

// TestCostOfPricesCacheReadsAndWritesApart: with --price 1/4/0.1, an
// answer of 1,500 input tokens of which 1,024 were read from the cache,
// and 300 output tokens, costs 476 x $1 + 1,024 x $0.1 + 300 x $4 per
// million.
func TestCostOfPricesCacheReadsAndWritesApart(t *testing.T) {
	info, err := File{}.Resolve(openai("gpt-5.4-mini"), Overrides{Price: "1/4/0.1"})
	if err != nil {
		t.Fatal(err)
	}
	u := provider.Usage{InputTokens: 1_500, CacheReadTokens: 1_024, OutputTokens: 300}
	if got, want := info.Price.CostOf(u), (476+102.4+1200)/1e6; math.Abs(got-want) > 1e-15 {
		t.Errorf("CostOf = %v, want %v", got, want)
	}
	// Writes at their own price; a cache price not given charges input.
	u = provider.Usage{InputTokens: 1_500, CacheReadTokens: 1_000, CacheWriteTokens: 400, OutputTokens: 0}
	if got, want := price(3, 15, 0.30, 3.75).CostOf(u), (100*3+1_000*0.30+400*3.75)/1e6; math.Abs(got-want) > 1e-15 {
		t.Errorf("CostOf with writes = %v, want %v", got, want)
	}
	if got, want := price(3, 15, 0, 0).CostOf(u), 1_500*3/1e6; math.Abs(got-want) > 1e-15 {
		t.Errorf("CostOf without cache prices = %v, want every input token at the input price, %v", got, want)
	}
	// Counts that make no sense are held to the input's.
	u = provider.Usage{InputTokens: 100, CacheReadTokens: 500, CacheWriteTokens: -5}
	if got, want := price(1, 4, 0.1, 0).CostOf(u), 100*0.1/1e6; math.Abs(got-want) > 1e-15 {
		t.Errorf("CostOf with more cached than input = %v, want %v", got, want)
	}
}

func TestModelsFileOverridesTheTable(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/models.json"
	os.WriteFile(path, []byte(`{"openai:gpt-4o-mini": {"rpm": 5000}, "openai:ft-1": {"price": {"input_per_million": 0.3, "output_per_million": 1.2}, "tpm": 1000, "context": 32000, "max_output": 4096}}`), 0o600)
	f, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	mini := f.Lookup(openai("gpt-4o-mini"))
	if mini.RPM != 5000 || mini.TPM != 200_000 || mini.Price != price(0.15, 0.60, 0.075, 0) || mini.Context != 128_000 {
		t.Errorf("gpt-4o-mini = %+v: the file's rpm over the table's tpm, price and context", mini)
	}
	ft := f.Lookup(openai("ft-1"))
	if !ft.Known || ft.Price != (Price{InputPerM: 0.3, OutputPerM: 1.2}) || ft.TPM != 1000 || ft.Context != 32_000 || ft.MaxOutput != 4096 {
		t.Errorf("ft-1 = %+v", ft)
	}
	for _, bad := range []string{`{"gpt-4o": {}}`, `{"openai:x": {"rpm": -1}}`, `[1]`, `{`} {
		os.WriteFile(path, []byte(bad), 0o600)
		if _, err := LoadFile(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("LoadFile(%s) = %v, want an error naming the file", bad, err)
		}
	}
}

// TestModelsFileTakesCachePrices: "price" and "batch_price" take the
// cached-input and cache-write prices beside the two they need.
func TestModelsFileTakesCachePrices(t *testing.T) {
	path := filepath.Join(t.TempDir(), "models.json")
	os.WriteFile(path, []byte(`{"anthropic:my-claude": {
		"price": {"input_per_million": 3, "output_per_million": 15, "cached_input_per_million": 0.3, "cache_write_per_million": 3.75},
		"batch_price": {"input_per_million": 1.5, "output_per_million": 7.5, "cached_input_per_million": 0.15}}}`), 0o600)
	f, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	spec := anthropic("my-claude")
	info := f.Lookup(spec)
	if !info.Known || info.Price != price(3, 15, 0.3, 3.75) {
		t.Errorf("price from the file: %+v", info)
	}
	if got, ok := info.Batched(spec); !ok || got != price(1.5, 7.5, 0.15, 0) {
		t.Errorf("batch_price from the file: %+v, %v", got, ok)
	}
}

func TestParsePrice(t *testing.T) {
	for in, want := range map[string]Price{
		"0.15/0.60":          price(0.15, 0.60, 0, 0),
		" 1 / 4 / 0.1 ":      price(1, 4, 0.1, 0),
		"3/15/0.30/3.75":     price(3, 15, 0.30, 3.75),
		"0/0":                {},
		"1e-1/2/0.01/0.125 ": price(0.1, 2, 0.01, 0.125),
	} {
		if p, err := ParsePrice(in); err != nil || p != want {
			t.Errorf("ParsePrice(%q) = %+v, %v; want %+v", in, p, err, want)
		}
	}
	for bad, says := range map[string]string{
		"":            "has 1 part(s)",
		"0.15":        "has 1 part(s)",
		"1/2/3/4/5":   "has 5 part(s)",
		"a/b":         `"a" is not a number of dollars`,
		"1/":          `"" is not a number of dollars`,
		"1/2/x":       `"x" is not a number of dollars`,
		"NaN/1":       `"NaN" is not a number of dollars`,
		"1/Inf":       `"Inf" is not a number of dollars`,
		"-1/2":        "-1 cannot be negative",
		"1/2/0.1/-3":  "-3 cannot be negative",
		"1/2/-0.5/-3": "-0.5 cannot be negative",
	} {
		_, err := ParsePrice(bad)
		if err == nil {
			t.Errorf("ParsePrice(%q) accepted", bad)
			continue
		}
		msg := err.Error()
		for _, w := range []string{"--price", says, "INPUT/OUTPUT[/CACHED_INPUT[/CACHE_WRITE]]", "Try: --price "} {
			if !strings.Contains(msg, w) {
				t.Errorf("ParsePrice(%q): %q, want it to say %q", bad, msg, w)
			}
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
		{`{"openai:x": {"known": true}}`, []string{`unknown field "known". Try: one of batch_price, context, max_output, price, rpm, tpm`}},
		{`{"openai:x": {"contxt": 1000}}`, []string{`unknown field "contxt". Try: context`}},
		{`{"openai:x": {"price": {"input_per_milion": 1, "output_per_million": 2}}}`, []string{`openai:x: price: unknown field "input_per_milion". Try: input_per_million`}},
		{`{"openai:x": {"price": {"input_per_million": 1, "output_per_million": 2, "cached_input_per_milion": 0.1}}}`, []string{`price: unknown field "cached_input_per_milion". Try: cached_input_per_million`}},
		{`{"openai:x": {"price": {"input_per_million": 1, "output_per_million": 2, "cache_writes_per_million": 0.1}}}`, []string{`price: unknown field "cache_writes_per_million". Try: cache_write_per_million`}},
		{`{"openai:x": {"price": {"input_per_million": 0.3}}}`, []string{"price has no output_per_million", `Try: "price": {`}},
		{`{"openai:x": {"price": {"output_per_million": 2, "cached_input_per_million": 0.1}}}`, []string{"price has no input_per_million"}},
		{`{"openai:x": {"price": 0.3}}`, []string{"price: want an object, got 0.3. Try: {"}},
		{`{"openai:x": 5}`, []string{`openai:x: want an object, got 5. Try: {"batch_price": {`}},
		{`{"openai:x": {"rpm": "fast"}}`, []string{`rpm is string, not a whole number. Try: "rpm": 500`}},
		{`{"openai:x": {"tpm": 2.5}}`, []string{`tpm is number 2.5, not a whole number. Try: "tpm": 200000`}},
		{`{"openai:x": {"context": 1.5}}`, []string{`context is number 1.5, not a whole number. Try: "context": 128000`}},
		{`{"openai:x": {"rpm": -1}}`, []string{`rpm is -1; it cannot be negative. Try: "rpm": 500`}},
		{`{"openai:x": {"max_output": -1}}`, []string{`max_output is -1; it cannot be negative. Try: "max_output": 16384`}},
		{`{"openai:x": {"price": {"input_per_million": 1, "output_per_million": -2}}}`, []string{"price.output_per_million is -2; it cannot be negative"}},
		{`{"openai:x": {"price": {"input_per_million": 1, "output_per_million": 2, "cached_input_per_million": -0.1}}}`, []string{"price.cached_input_per_million is -0.1; it cannot be negative", `Try: "cached_input_per_million": 0.075`}},
		{`{"openai:x": {"batch_price": {"input_per_million": 1, "output_per_million": 2, "cache_write_per_million": -1}}}`, []string{"batch_price.cache_write_per_million is -1; it cannot be negative"}},
		{`{"openai:x": {"batch_price": {"input_per_million": -1, "output_per_million": 2}}}`, []string{"batch_price.input_per_million is -1; it cannot be negative"}},
		{`{"openai:x": {"price": {"input_per_million": "1", "output_per_million": 2}}}`, []string{"price.input_per_million is string, not a number of dollars"}},
		{`{"openai:x": {"price": {"input_per_million": 1, "output_per_million": 2, "cached_input_per_million": "cheap"}}}`, []string{"price.cached_input_per_million is string, not a number of dollars"}},
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
	spec := openai("gpt-4o-mini")
	got, ok := Lookup(spec).Batched(spec)
	if !ok || got != price(0.075, 0.30, 0.0375, 0) {
		t.Errorf("gpt-4o-mini through the batch API: %+v, %v; want half of 0.15/0.60/0.075", got, ok)
	}
	viaResponses := provider.Spec{Provider: "openai-responses", Model: "gpt-5.4-mini"}
	if got, ok := Lookup(viaResponses).Batched(viaResponses); !ok || got != price(0.375, 2.25, 0.0375, 0) {
		t.Errorf("gpt-5.4-mini through the Responses batch API: %+v, %v; want half", got, ok)
	}
	sonnet := anthropic("claude-sonnet-5")
	if got, ok := Lookup(sonnet).Batched(sonnet); !ok || got != price(1, 5, 0.10, 1.25) {
		t.Errorf("claude-sonnet-5 through the batch API: %+v, %v; want half of every figure", got, ok)
	}
	path := filepath.Join(t.TempDir(), "models.json")
	os.WriteFile(path, []byte(`{"anthropic:claude-haiku-4-5": {"batch_price": {"input_per_million": 0.4, "output_per_million": 2}}}`), 0o644)
	file, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	haiku := anthropic("claude-haiku-4-5")
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
