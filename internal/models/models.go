// Package models knows what digest knows about models without asking
// them: prices, and the rate limits a new account starts with.
package models

import (
	"regexp"
	"strings"

	"github.com/digest-cli/digest/internal/provider"
)

// Price is what a model charges, in US dollars per million tokens.
// CachedInputPerM is the price of input tokens read from the provider's
// prompt cache and CacheWritePerM of those written to it (Anthropic's
// 5-minute cache writes); 0 charges them as input, which errs on the safe
// side for a cost cap.
type Price struct {
	InputPerM       float64 `json:"input_per_million"`
	OutputPerM      float64 `json:"output_per_million"`
	CachedInputPerM float64 `json:"cached_input_per_million,omitempty"`
	CacheWritePerM  float64 `json:"cache_write_per_million,omitempty"`
}

// Cost is the price of input and output tokens, none of them cached: what
// a request can cost at most, for --max-cost and --dry-run.
func (p Price) Cost(input, output int) float64 {
	return (float64(input)*p.InputPerM + float64(output)*p.OutputPerM) / 1e6
}

// CostOf is what a call that used u costs: its cached input at the cached
// price, its cache writes at the write price, the rest of its input and
// its output at theirs.
func (p Price) CostOf(u provider.Usage) float64 {
	read := min(max(u.CacheReadTokens, 0), u.InputTokens)
	write := min(max(u.CacheWriteTokens, 0), u.InputTokens-read)
	readPrice, writePrice := p.CachedInputPerM, p.CacheWritePerM
	if readPrice == 0 {
		readPrice = p.InputPerM
	}
	if writePrice == 0 {
		writePrice = p.InputPerM
	}
	return (float64(u.InputTokens-read-write)*p.InputPerM + float64(read)*readPrice +
		float64(write)*writePrice + float64(u.OutputTokens)*p.OutputPerM) / 1e6
}

// Info is a model's price and default limits (requests and tokens per
// minute); Known is false for models digest has no figures for.
type Info struct {
	Price Price `json:"price"`
	// BatchPrice is the price through the provider's batch API, when a
	// models file gives one; Batched says what it is otherwise.
	BatchPrice *Price `json:"batch_price,omitempty"`
	RPM        int    `json:"rpm"`
	TPM        int    `json:"tpm"`
	Known      bool   `json:"-"`
}

// batchDiscount is what the providers' batch APIs charge of the
// synchronous price, as their price lists say: half, input and output.
var batchDiscount = map[string]float64{"openai": 0.5, "anthropic": 0.5}

// Batched is the model's price through its provider's batch API: the
// models file's batch_price, else the price at the provider's batch
// discount. ok is false for a provider with no batch API digest knows.
func (i Info) Batched(spec provider.Spec) (p Price, ok bool) {
	d, ok := batchDiscount[spec.Provider]
	if !ok {
		return Price{}, false
	}
	if i.BatchPrice != nil {
		return *i.BatchPrice, true
	}
	return Price{InputPerM: i.Price.InputPerM * d, OutputPerM: i.Price.OutputPerM * d,
		CachedInputPerM: i.Price.CachedInputPerM * d, CacheWritePerM: i.Price.CacheWritePerM * d}, true
}

// builtin holds list prices and first-tier limits as published by the
// providers; accounts on higher tiers raise the limits with --rpm/--tpm or
// a models file. A key matches its own name and its dated snapshots
// (gpt-4o-mini-2024-07-18, claude-haiku-4-5-20251001) and -latest, never a
// longer name: gpt-5-pro is not priced as gpt-5.
var builtin = map[string]map[string]Info{
	"openai": {
		"gpt-4o-mini":  {Price: Price{InputPerM: 0.15, OutputPerM: 0.60}, RPM: 500, TPM: 200_000},
		"gpt-4o":       {Price: Price{InputPerM: 2.50, OutputPerM: 10.00}, RPM: 500, TPM: 30_000},
		"gpt-4.1-nano": {Price: Price{InputPerM: 0.10, OutputPerM: 0.40}, RPM: 500, TPM: 200_000},
		"gpt-4.1-mini": {Price: Price{InputPerM: 0.40, OutputPerM: 1.60}, RPM: 500, TPM: 200_000},
		"gpt-4.1":      {Price: Price{InputPerM: 2.00, OutputPerM: 8.00}, RPM: 500, TPM: 30_000},
		"gpt-5-nano":   {Price: Price{InputPerM: 0.05, OutputPerM: 0.40}, RPM: 500, TPM: 200_000},
		"gpt-5-mini":   {Price: Price{InputPerM: 0.25, OutputPerM: 2.00}, RPM: 500, TPM: 200_000},
		"gpt-5":        {Price: Price{InputPerM: 1.25, OutputPerM: 10.00}, RPM: 500, TPM: 30_000},
		"o4-mini":      {Price: Price{InputPerM: 1.10, OutputPerM: 4.40}, RPM: 1_000, TPM: 100_000},
		"o3-mini":      {Price: Price{InputPerM: 1.10, OutputPerM: 4.40}, RPM: 1_000, TPM: 100_000},
		"o3":           {Price: Price{InputPerM: 2.00, OutputPerM: 8.00}, RPM: 500, TPM: 30_000},
	},
	"anthropic": {
		"claude-haiku-4-5":  {Price: Price{InputPerM: 1.00, OutputPerM: 5.00}, RPM: 50, TPM: 50_000},
		"claude-3-5-haiku":  {Price: Price{InputPerM: 0.80, OutputPerM: 4.00}, RPM: 50, TPM: 50_000},
		"claude-sonnet-4-5": {Price: Price{InputPerM: 3.00, OutputPerM: 15.00}, RPM: 50, TPM: 30_000},
		"claude-sonnet-4":   {Price: Price{InputPerM: 3.00, OutputPerM: 15.00}, RPM: 50, TPM: 30_000},
		"claude-opus-4-1":   {Price: Price{InputPerM: 15.00, OutputPerM: 75.00}, RPM: 50, TPM: 30_000},
		"claude-opus-4":     {Price: Price{InputPerM: 15.00, OutputPerM: 75.00}, RPM: 50, TPM: 30_000},
	},
}

// localProviders run on the user's own hardware: free, limited only by
// the concurrency the server accepts.
var localProviders = map[string]bool{provider.Offline: true, "ollama": true}

// Lookup returns what is known of a model.
func Lookup(spec provider.Spec) Info {
	if localProviders[spec.Provider] {
		return Info{Known: true}
	}
	for name, info := range builtin[spec.Provider] {
		if rest, ok := strings.CutPrefix(spec.Model, name); ok && (rest == "" || rest == "-latest" || snapshot.MatchString(rest)) {
			info.Known = true
			return info
		}
	}
	return Info{}
}

var snapshot = regexp.MustCompile(`^-(\d{4}-\d{2}-\d{2}|\d{8})$`)
