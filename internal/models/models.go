// Package models knows what digest knows about models without asking
// them: prices, the rate limits a new account starts with, context and
// output limits, and when each model retires and what replaces it.
package models

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

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

// Info is what is known of a model: its price, the limits a new account
// starts with (requests and tokens per minute), how much it reads and
// writes, and when it retires. Known is false for models digest has no
// figures for.
type Info struct {
	Price Price `json:"price"`
	// BatchPrice is the price through the provider's batch API, when a
	// models file gives one; Batched says what it is otherwise.
	BatchPrice *Price `json:"batch_price,omitempty"`
	RPM        int    `json:"rpm"`
	TPM        int    `json:"tpm"`
	// Context is the model's context window and MaxOutput the most it
	// writes in one answer, in tokens; 0 when not known.
	Context   int `json:"context,omitempty"`
	MaxOutput int `json:"max_output,omitempty"`
	// Retired is the day (YYYY-MM-DD) the provider stops serving the
	// model, past or announced; "" when none is announced. Successor is
	// the model the provider names in its place, of the same provider.
	Retired   string `json:"-"`
	Successor string `json:"-"`
	// Source says where the row's figures were read: a page and a month.
	Source string `json:"-"`
	Known  bool   `json:"-"`
}

// batchDiscount is what the providers' batch APIs charge of the
// synchronous price, as their price lists say: half, input and output.
var batchDiscount = map[string]float64{"openai": 0.5, "openai-responses": 0.5, "anthropic": 0.5}

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

// SourceDate is the month the built-in table was last read against the
// providers' pricing, model, rate-limit and deprecation pages. Each row's
// Source names the page its figures came from.
const SourceDate = "2026-12"

// price is a Price in the order the providers' pages list it: input,
// output, cached input (cache reads), cache writes.
func price(in, out, cachedIn, cacheWrite float64) Price {
	return Price{InputPerM: in, OutputPerM: out, CachedInputPerM: cachedIn, CacheWritePerM: cacheWrite}
}

// The providers' first tiers. OpenAI's model pages give requests and
// tokens per minute per model ("Tier 1"; pages published from late
// September 2026 call the first tier "Build"). Anthropic's rate-limit page
// (tiers Start, Build and Scale since 2026-06-26) gives requests, input
// tokens and output tokens per minute; TPM here is its input tokens per
// minute, the limit digest's token bucket meets first.
const (
	anthropicRPM  = 1_000     // Start tier, every model below
	anthropicITPM = 2_000_000 // Start tier: Opus, Sonnet and Haiku 4.5 and later
	fableITPM     = 500_000   // Start tier: the Fable 5.x pool
)

// Sources, as the rows cite them.
const (
	srcClaudePricing  = "platform.claude.com pricing, models and rate-limits pages, 2026-10"
	srcClaudeRetired  = "Claude model-deprecations page and anthropic-sdk-go model notes, 2026-08"
	srcOpenAIDeprec   = "developers.openai.com deprecations page, 2026-10"
	srcOpenAIPricingP = "developers.openai.com pricing page, 2026-06"
)

// builtin holds list prices, first-tier limits, context and output limits
// and retirement dates as published by the providers; accounts on higher
// tiers raise the limits with --rpm/--tpm or a models file. A key matches
// its own name and its dated snapshots (gpt-4o-mini-2024-07-18,
// claude-haiku-4-5-20251001) and -latest, never a longer name: gpt-5-pro is
// not priced as gpt-5, nor gpt-5.4-mini as gpt-5.4.
//
// To update it, read each provider's pricing, model, rate-limit and
// deprecation pages, change the rows and their Source, set SourceDate, and
// run go test ./internal/models: TestTableRowsArePinned holds the figures
// a change must mean to move.
//
// A row's RPM or TPM is 0 where the stored copy of the model's page gave
// none: digest then learns the limit from the provider's headers. Prices
// are the list prices for prompts of up to 272,000 input tokens (OpenAI
// charges 2x input and 1.5x output on longer ones) and Anthropic's
// 5-minute cache writes. Left out: models offered by invitation only
// (Claude Mythos, OpenAI's Daybreak aliases) and Claude Haiku 5.5, whose
// price depends on the prompt's length (give --price, such as
// 0.10/0.50/0.01/0.125 for prompts up to 100,000 tokens).
var builtin = map[string]map[string]Info{
	"openai": {
		// GPT-6, September 2026. Cache writes are 1.25x input from GPT-5.6 on.
		"gpt-6-astra": {Price: price(10, 50, 1, 12.50), Context: 1_050_000, MaxOutput: 128_000,
			Source: "developers.openai.com models/gpt-6-astra, 2026-09 (its limits not in the stored copy)"},
		"gpt-6.1-sol": {Price: price(2, 10, 0.10, 2.50), Context: 1_050_000, MaxOutput: 128_000, RPM: 5_000, TPM: 1_000_000,
			Source: "developers.openai.com models/gpt-6.1-sol, 2026-10 (Build tier)"},
		"gpt-6-sol": {Price: price(2, 10, 0.20, 2.50), Context: 1_050_000, MaxOutput: 128_000, RPM: 500, TPM: 500_000,
			Source: "developers.openai.com models/gpt-6-sol, 2026-09"},
		// Luna's own model page is not among the stored copies: its price,
		// context and output limit are as projects quoting OpenAI's pricing
		// page and GPT-6 guide in 2026-09 give them.
		"gpt-6-luna": {Price: price(0.10, 0.50, 0.01, 0.125), Context: 1_050_000, MaxOutput: 128_000,
			Source: "developers.openai.com pricing page as quoted, 2026-09"},

		// GPT-5.6, July 2026. Sol's list price: a promotion charged $4/$20
		// from 2026-08-21 to at least 2026-11-21, and the higher list price
		// errs on the safe side for --max-cost. Terra and Luna at the prices
		// cut on 2026-07-30; their own model pages are not among the stored
		// copies, so their limits are Sol's (Luna's Tier 1 quoted as such).
		"gpt-5.6-sol": {Price: price(5, 30, 0.50, 6.25), Context: 1_050_000, MaxOutput: 128_000, RPM: 500, TPM: 500_000,
			Source: "developers.openai.com models/gpt-5.6-sol, 2026-07"},
		"gpt-5.6": {Price: price(5, 30, 0.50, 6.25), Context: 1_050_000, MaxOutput: 128_000, RPM: 500, TPM: 500_000,
			Source: "developers.openai.com models/gpt-5.6-sol (the alias routes to Sol), 2026-07"},
		"gpt-5.6-terra": {Price: price(2, 12, 0.20, 2.50), Context: 1_050_000, MaxOutput: 128_000, RPM: 500, TPM: 500_000,
			Source: "OpenAI price cut of 2026-07-30 as quoted, 2026-08; limits as gpt-5.6-sol"},
		"gpt-5.6-luna": {Price: price(0.20, 1.20, 0.02, 0.25), MaxOutput: 128_000, RPM: 500, TPM: 500_000,
			Source: "OpenAI price cut of 2026-07-30 as quoted, 2026-08; context not confirmed"},

		"gpt-5.5": {Price: price(5, 30, 0.50, 0), Context: 1_050_000, MaxOutput: 128_000, RPM: 500, TPM: 500_000,
			Source: "developers.openai.com models/gpt-5.5 and pricing, 2026-06"},
		"gpt-5.5-pro": {Price: price(30, 180, 0, 0), Context: 1_050_000, MaxOutput: 128_000, Source: srcOpenAIPricingP},
		"gpt-5.4": {Price: price(2.50, 15, 0.25, 0), Context: 1_050_000, MaxOutput: 128_000, RPM: 500, TPM: 500_000,
			Source: "developers.openai.com models/gpt-5.4 and pricing, 2026-06"},
		"gpt-5.4-pro": {Price: price(30, 180, 0, 0), Context: 1_050_000, MaxOutput: 128_000, Source: srcOpenAIPricingP},
		"gpt-5.4-mini": {Price: price(0.75, 4.50, 0.075, 0), Context: 400_000, MaxOutput: 128_000, RPM: 500, TPM: 500_000,
			Source: "developers.openai.com models/gpt-5.4-mini, 2026-07"},
		"gpt-5.4-nano": {Price: price(0.20, 1.25, 0.02, 0), Context: 400_000, MaxOutput: 128_000, RPM: 500, TPM: 200_000,
			Source: "developers.openai.com models/gpt-5.4-nano, 2026-07"},
		// There is no plain gpt-5.3 in the API: only the codex model and the
		// chat snapshot below.
		"gpt-5.3-codex": {Price: price(1.75, 14, 0.175, 0), Context: 400_000, MaxOutput: 128_000,
			Source: "developers.openai.com pricing page, 2026-06"},
		"gpt-5.2": {Price: price(1.75, 14, 0.175, 0), Context: 400_000, MaxOutput: 128_000,
			Source: "developers.openai.com pricing page, 2026-06"},
		"gpt-5.2-pro": {Price: price(21, 168, 0, 0), Context: 400_000, MaxOutput: 128_000,
			Source: "developers.openai.com pricing page, 2026-06"},
		// gpt-5.1's shutdown is as a reading of the deprecations page of
		// 2026-10-27 gives it; that reading names no replacement.
		"gpt-5.1": {Price: price(1.25, 10, 0.125, 0), Context: 400_000, MaxOutput: 128_000, Retired: "2027-04-01",
			Source: "developers.openai.com deprecations page as read 2026-10-27"},
		"gpt-5": {Price: price(1.25, 10, 0.125, 0), Context: 400_000, MaxOutput: 128_000, RPM: 500, TPM: 500_000,
			Retired: "2026-12-11", Successor: "gpt-5.6-sol", Source: srcOpenAIDeprec},
		"gpt-5-mini": {Price: price(0.25, 2, 0.025, 0), Context: 400_000, MaxOutput: 128_000, RPM: 500, TPM: 500_000,
			Retired: "2026-12-11", Successor: "gpt-5.6-terra", Source: "developers.openai.com models/gpt-5-mini and deprecations, 2026-10"},
		"gpt-5-nano": {Price: price(0.05, 0.40, 0.005, 0), Context: 400_000, MaxOutput: 128_000, RPM: 500, TPM: 200_000,
			Retired: "2026-12-11", Successor: "gpt-5.6-luna", Source: srcOpenAIDeprec},
		"gpt-5-pro": {Price: price(15, 120, 0, 0), Context: 400_000, MaxOutput: 272_000, RPM: 500, TPM: 30_000,
			Retired: "2026-12-11", Successor: "gpt-5.6-sol", Source: "developers.openai.com models/gpt-5-pro and deprecations, 2026-10"},

		// Codex and chat snapshots, shut down in July and August 2026.
		"gpt-5-codex": {Price: price(1.25, 10, 0.125, 0), Context: 400_000, MaxOutput: 128_000,
			Retired: "2026-07-23", Successor: "gpt-5.5", Source: srcOpenAIDeprec},
		"gpt-5.1-codex": {Price: price(1.25, 10, 0.125, 0), Context: 400_000, MaxOutput: 128_000,
			Retired: "2026-07-23", Successor: "gpt-5.5", Source: srcOpenAIDeprec},
		"gpt-5.1-codex-max": {Price: price(1.25, 10, 0.125, 0), Context: 400_000, MaxOutput: 128_000,
			Retired: "2026-07-23", Successor: "gpt-5.5", Source: srcOpenAIDeprec},
		"gpt-5.1-codex-mini": {Price: price(0.25, 2, 0.025, 0), Context: 400_000, MaxOutput: 128_000,
			Retired: "2026-07-23", Successor: "gpt-5.4-mini", Source: srcOpenAIDeprec},
		"gpt-5.2-codex": {Price: price(1.75, 14, 0.175, 0), Context: 400_000, MaxOutput: 128_000,
			Retired: "2026-07-23", Successor: "gpt-5.5", Source: srcOpenAIDeprec},
		"codex-mini-latest": {Price: price(1.50, 6, 0.375, 0), Context: 200_000, MaxOutput: 100_000,
			Retired: "2026-02-12", Successor: "gpt-5-codex-mini", Source: srcOpenAIDeprec},
		"gpt-5-chat-latest": {Price: price(1.25, 10, 0.125, 0), Context: 128_000, MaxOutput: 16_384,
			Retired: "2026-07-23", Successor: "gpt-5.5", Source: srcOpenAIDeprec},
		"gpt-5.1-chat-latest": {Price: price(1.25, 10, 0.125, 0), Context: 128_000, MaxOutput: 16_384,
			Retired: "2026-07-23", Successor: "gpt-5.5", Source: srcOpenAIDeprec},
		"gpt-5.2-chat-latest": {Price: price(1.75, 14, 0.175, 0), Context: 128_000, MaxOutput: 16_384,
			Retired: "2026-08-10", Successor: "gpt-5.5", Source: srcOpenAIDeprec},
		"gpt-5.3-chat-latest": {Price: price(1.75, 14, 0.175, 0), Context: 128_000, MaxOutput: 16_384,
			Retired: "2026-08-10", Successor: "gpt-5.5", Source: srcOpenAIDeprec},

		// GPT-4.1 and GPT-4o: cached input at 25% and 50% of input.
		"gpt-4.1": {Price: price(2, 8, 0.50, 0), Context: 1_047_576, MaxOutput: 32_768, RPM: 500, TPM: 30_000,
			Retired: "2027-01-14", Successor: "gpt-6-luna", Source: srcOpenAIDeprec},
		"gpt-4.1-mini": {Price: price(0.40, 1.60, 0.10, 0), Context: 1_047_576, MaxOutput: 32_768, RPM: 500, TPM: 200_000,
			Retired: "2027-01-14", Successor: "gpt-6-luna", Source: srcOpenAIDeprec},
		"gpt-4.1-nano": {Price: price(0.10, 0.40, 0.025, 0), Context: 1_047_576, MaxOutput: 32_768,
			Retired: "2026-10-23", Successor: "gpt-5.4-nano", Source: "developers.openai.com deprecations page, 2026-06"},
		"gpt-4o": {Price: price(2.50, 10, 1.25, 0), Context: 128_000, MaxOutput: 16_384, RPM: 500, TPM: 30_000,
			Retired: "2027-01-14", Successor: "gpt-6-luna", Source: srcOpenAIDeprec},
		"gpt-4o-2024-05-13": {Price: price(5, 15, 0, 0), Context: 128_000, MaxOutput: 4_096,
			Retired: "2026-10-23", Successor: "gpt-5.6-sol", Source: srcOpenAIDeprec},
		"gpt-4o-mini": {Price: price(0.15, 0.60, 0.075, 0), Context: 128_000, MaxOutput: 16_384, RPM: 500, TPM: 200_000,
			Retired: "2027-01-14", Successor: "gpt-6-luna", Source: srcOpenAIDeprec},
		"chatgpt-4o-latest": {Price: price(5, 15, 0, 0), Context: 128_000, MaxOutput: 16_384,
			Retired: "2026-02-17", Successor: "gpt-5.1-chat-latest", Source: srcOpenAIDeprec},
		"gpt-4.5-preview": {Price: price(75, 150, 37.50, 0), Context: 128_000, MaxOutput: 16_384,
			Retired: "2025-07-14", Successor: "gpt-4.1", Source: srcOpenAIDeprec},

		// The o-series: all of it deprecated or shut down by 2026-12.
		"o3": {Price: price(2, 8, 0.50, 0), Context: 200_000, MaxOutput: 100_000, RPM: 500, TPM: 30_000,
			Retired: "2026-12-11", Successor: "gpt-5.6-sol", Source: srcOpenAIDeprec},
		"o3-pro": {Price: price(20, 80, 0, 0), Context: 200_000, MaxOutput: 100_000, RPM: 500, TPM: 30_000,
			Retired: "2026-12-11", Successor: "gpt-5.6-sol", Source: srcOpenAIDeprec},
		"o3-mini": {Price: price(1.10, 4.40, 0.55, 0), Context: 200_000, MaxOutput: 100_000,
			Retired: "2026-10-23", Successor: "gpt-5.6-sol", Source: srcOpenAIDeprec},
		"o4-mini": {Price: price(1.10, 4.40, 0.275, 0), Context: 200_000, MaxOutput: 100_000,
			Retired: "2026-10-23", Successor: "gpt-5.6-terra", Source: srcOpenAIDeprec},
		"o1": {Price: price(15, 60, 7.50, 0), Context: 200_000, MaxOutput: 100_000,
			Retired: "2026-10-23", Successor: "gpt-5.6-sol", Source: srcOpenAIDeprec},
		"o1-pro": {Price: price(150, 600, 0, 0), Context: 200_000, MaxOutput: 100_000,
			Retired: "2026-10-23", Successor: "gpt-5.6-sol", Source: srcOpenAIDeprec},
		"o1-mini": {Price: price(1.10, 4.40, 0.55, 0), Context: 128_000, MaxOutput: 65_536,
			Retired: "2025-10-27", Successor: "o4-mini", Source: srcOpenAIDeprec},
		"o1-preview": {Price: price(15, 60, 7.50, 0), Context: 128_000, MaxOutput: 32_768,
			Retired: "2025-07-28", Successor: "o3", Source: srcOpenAIDeprec},
		"o3-deep-research": {Price: price(10, 40, 2.50, 0), Context: 200_000, MaxOutput: 100_000,
			Retired: "2026-07-23", Successor: "gpt-5.5-pro", Source: srcOpenAIDeprec},
		"o4-mini-deep-research": {Price: price(2, 8, 0.50, 0), Context: 200_000, MaxOutput: 100_000,
			Retired: "2026-07-23", Successor: "gpt-5.5-pro", Source: srcOpenAIDeprec},
	},
	"anthropic": {
		// Cache reads are 10% of input and 5-minute cache writes 125%,
		// except where the pricing page says otherwise (Fable 5.1 2.5%,
		// Opus 5.5 and Sonnet 5.5 5% since 2026-10-07).
		"claude-fable-5-1": {Price: price(10, 50, 0.25, 12.50), Context: 1_000_000, MaxOutput: 128_000, RPM: anthropicRPM, TPM: fableITPM, Source: srcClaudePricing},
		"claude-fable-5":   {Price: price(10, 50, 1, 12.50), Context: 1_000_000, MaxOutput: 128_000, RPM: anthropicRPM, TPM: fableITPM, Source: srcClaudePricing},
		"claude-opus-5-5":  {Price: price(4, 20, 0.20, 5), Context: 1_000_000, MaxOutput: 128_000, RPM: anthropicRPM, TPM: anthropicITPM, Source: srcClaudePricing},
		"claude-opus-5":    {Price: price(5, 25, 0.50, 6.25), Context: 1_000_000, MaxOutput: 128_000, RPM: anthropicRPM, TPM: anthropicITPM, Source: srcClaudePricing},
		"claude-opus-4-8":  {Price: price(5, 25, 0.50, 6.25), Context: 1_000_000, MaxOutput: 128_000, RPM: anthropicRPM, TPM: anthropicITPM, Source: srcClaudePricing},
		"claude-opus-4-7":  {Price: price(5, 25, 0.50, 6.25), Context: 1_000_000, MaxOutput: 128_000, RPM: anthropicRPM, TPM: anthropicITPM, Source: srcClaudePricing},
		"claude-opus-4-6":  {Price: price(5, 25, 0.50, 6.25), Context: 1_000_000, MaxOutput: 128_000, RPM: anthropicRPM, TPM: anthropicITPM, Source: srcClaudePricing},
		"claude-opus-4-5":  {Price: price(5, 25, 0.50, 6.25), Context: 200_000, MaxOutput: 64_000, RPM: anthropicRPM, TPM: anthropicITPM, Source: srcClaudePricing},
		"claude-sonnet-5-5": {Price: price(2, 10, 0.10, 2.50), Context: 1_000_000, MaxOutput: 128_000, RPM: anthropicRPM, TPM: anthropicITPM,
			Source: "platform.claude.com pricing (cache reads cut 2026-10-07), 2026-10"},
		// Sonnet 5's introductory $2/$10 stayed: the rise to $3/$15 set for
		// 2026-09-01 was called off.
		"claude-sonnet-5":   {Price: price(2, 10, 0.20, 2.50), Context: 1_000_000, MaxOutput: 128_000, RPM: anthropicRPM, TPM: anthropicITPM, Source: srcClaudePricing},
		"claude-sonnet-4-6": {Price: price(3, 15, 0.30, 3.75), Context: 1_000_000, MaxOutput: 64_000, RPM: anthropicRPM, TPM: anthropicITPM, Source: srcClaudePricing},
		"claude-sonnet-4-5": {Price: price(3, 15, 0.30, 3.75), Context: 200_000, MaxOutput: 64_000, RPM: anthropicRPM, TPM: anthropicITPM, Source: srcClaudePricing},
		"claude-haiku-4-5":  {Price: price(1, 5, 0.10, 1.25), Context: 200_000, MaxOutput: 64_000, RPM: anthropicRPM, TPM: anthropicITPM, Source: srcClaudePricing},

		// Retired on the Claude API (some still served on Bedrock or Google
		// Cloud, whose dates differ).
		"claude-opus-4-1": {Price: price(15, 75, 1.50, 18.75), Context: 200_000, MaxOutput: 32_000,
			Retired: "2026-08-05", Successor: "claude-opus-4-8", Source: srcClaudeRetired},
		"claude-opus-4": {Price: price(15, 75, 1.50, 18.75), Context: 200_000, MaxOutput: 32_000,
			Retired: "2026-06-15", Successor: "claude-opus-4-8", Source: "Claude release notes, 2026-06"},
		"claude-opus-4-0": {Price: price(15, 75, 1.50, 18.75), Context: 200_000, MaxOutput: 32_000,
			Retired: "2026-06-15", Successor: "claude-opus-4-8", Source: "Claude release notes, 2026-06"},
		"claude-sonnet-4": {Price: price(3, 15, 0.30, 3.75), Context: 200_000, MaxOutput: 64_000,
			Retired: "2026-06-15", Successor: "claude-sonnet-4-6", Source: "Claude release notes, 2026-06"},
		"claude-sonnet-4-0": {Price: price(3, 15, 0.30, 3.75), Context: 200_000, MaxOutput: 64_000,
			Retired: "2026-06-15", Successor: "claude-sonnet-4-6", Source: "Claude release notes, 2026-06"},
		"claude-3-haiku": {Price: price(0.25, 1.25, 0.03, 0.30), Context: 200_000, MaxOutput: 4_096,
			Retired: "2026-04-20", Successor: "claude-haiku-4-5", Source: srcClaudeRetired},
		// The SDK's notes for these say only "a newer model"; the successors
		// are those Anthropic's deprecation notices of 2025 named.
		"claude-3-7-sonnet": {Price: price(3, 15, 0.30, 3.75), Context: 200_000, MaxOutput: 64_000,
			Retired: "2026-02-19", Successor: "claude-sonnet-4-5", Source: srcClaudeRetired},
		"claude-3-5-haiku": {Price: price(0.80, 4, 0.08, 1), Context: 200_000, MaxOutput: 8_192,
			Retired: "2026-02-19", Successor: "claude-haiku-4-5", Source: srcClaudeRetired},
		"claude-3-opus": {Price: price(15, 75, 1.50, 18.75), Context: 200_000, MaxOutput: 4_096,
			Retired: "2026-01-05", Successor: "claude-opus-4-1", Source: srcClaudeRetired},
		"claude-3-5-sonnet": {Price: price(3, 15, 0.30, 3.75), Context: 200_000, MaxOutput: 8_192,
			Retired: "2025-10-22", Successor: "claude-sonnet-4", Source: srcClaudeRetired},
	},
}

// localProviders run on the user's own hardware: free, limited only by
// the concurrency the server accepts.
var localProviders = map[string]bool{provider.Offline: true, "ollama": true}

// Lookup returns what is known of a model: the row of its exact name,
// else the row whose dated snapshot (-2024-07-18, -20251001) or -latest
// alias it is. A longer name is never another model's: gpt-5.4-mini is not
// gpt-5.4, nor gpt-5-pro gpt-5.
func Lookup(spec provider.Spec) Info {
	if localProviders[spec.Provider] {
		return Info{Known: true}
	}
	rows := builtin[spec.Provider]
	if spec.Provider == "openai-responses" {
		rows = builtin["openai"] // OpenAI's models through /v1/responses, at the same prices
	}
	if info, ok := rows[spec.Model]; ok {
		info.Known = true
		return info
	}
	for name, info := range rows {
		if rest, ok := strings.CutPrefix(spec.Model, name); ok && (rest == "-latest" || snapshot.MatchString(rest)) {
			info.Known = true
			return info
		}
	}
	return Info{}
}

var snapshot = regexp.MustCompile(`^-(\d{4}-\d{2}-\d{2}|\d{8})$`)

// Row is one model of the built-in table.
type Row struct {
	Spec provider.Spec
	Info Info
}

// Table is the built-in table, by provider and model name.
func Table() []Row {
	var rows []Row
	for _, p := range []string{"anthropic", "openai"} {
		for _, name := range sortedNames(builtin[p]) {
			info := builtin[p][name]
			info.Known = true
			rows = append(rows, Row{Spec: provider.Spec{Provider: p, Model: name}, Info: info})
		}
	}
	return rows
}

func sortedNames(m map[string]Info) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Status is where a model stands on a day: "" (served, no retirement
// announced), "deprecated" (served until its Retired day) or "retired".
func (i Info) Status(now time.Time) string {
	day, ok := retiredDay(i.Retired)
	switch {
	case !ok:
		return ""
	case now.Before(day):
		return "deprecated"
	}
	return "retired"
}

func retiredDay(s string) (time.Time, bool) {
	if s == "" {
		return time.Time{}, false
	}
	day, err := time.Parse(time.DateOnly, s)
	return day, err == nil
}

// Retirement is the one line to warn with when spec's model is retired or
// deprecated on the day now, "" when it is neither (or digest knows
// nothing of it). It names the provider's successor and what to run
// instead; where the successor is itself retired or deprecated, the line
// follows the provider's successors to one that is not:
//
//	anthropic:claude-opus-4-1 was retired on 2026-08-05; its successor is anthropic:claude-opus-4-8. Try: anthropic:claude-opus-4-8 in its place
func Retirement(spec provider.Spec, now time.Time) string {
	info := Lookup(spec)
	status := info.Status(now)
	if status == "" {
		return ""
	}
	var b strings.Builder
	if status == "retired" {
		fmt.Fprintf(&b, "%s was retired on %s", spec, info.Retired)
	} else {
		fmt.Fprintf(&b, "%s is deprecated and retires on %s", spec, info.Retired)
	}
	chain := successors(spec.Provider, info, now)
	if len(chain) == 0 {
		b.WriteString(". Try: digest models, for a current model")
		return b.String()
	}
	b.WriteString("; its successor is ")
	for i, s := range chain {
		if i > 0 {
			b.WriteString(", then ")
		}
		succ := provider.Spec{Provider: spec.Provider, Model: s}
		b.WriteString(succ.String())
		if i < len(chain)-1 {
			next := Lookup(succ)
			if next.Status(now) == "retired" {
				fmt.Fprintf(&b, " (retired on %s)", next.Retired)
			} else {
				fmt.Fprintf(&b, " (retires on %s)", next.Retired)
			}
		}
	}
	last := provider.Spec{Provider: spec.Provider, Model: chain[len(chain)-1]}
	fmt.Fprintf(&b, ". Try: %s in its place", last)
	return b.String()
}

// successors is the provider's successor of info, then the successor of
// each one that is itself retired or deprecated on now, until one is not
// (or the table knows no further one).
func successors(prov string, info Info, now time.Time) []string {
	var chain []string
	for info.Successor != "" && !slices.Contains(chain, info.Successor) {
		chain = append(chain, info.Successor)
		info = Lookup(provider.Spec{Provider: prov, Model: info.Successor})
		if info.Status(now) == "" {
			break
		}
	}
	return chain
}
