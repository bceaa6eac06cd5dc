package provider

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Rules are what a model's API takes, and how, as the providers' published
// specs and model pages say: one row per model family, read by both wire
// formats (their synchronous and batch requests alike) and by the
// pipelines, which leave out what a model does not take before a
// request's key is made, so the key holds what was really sent.
type Rules struct {
	// Family names the row: what `digest models` shows.
	Family string
	// NoTemperature: the model refuses sampling parameters other than the
	// default (OpenAI reasoning models answer 400 unsupported_value; Claude
	// models after Opus 4.6 refuse temperature, top_p and top_k).
	NoTemperature bool
	// MaxTemperature is the top of the provider's temperature range (2 for
	// OpenAI, 1 for Anthropic); 0 when digest knows none (local servers).
	MaxTemperature float64
	// NoSeed: the API has no seed (Anthropic, OpenAI's Responses API).
	NoSeed bool
	// Reasoning: hidden reasoning counts against the output cap, so the cap
	// sent carries ReasoningAllowance on top when the model thinks.
	Reasoning bool
	// ThinksByDefault: a Claude model that thinks adaptively unless told
	// not to (Sonnet 5). digest turns thinking off ({"type": "disabled"})
	// unless --reasoning-effort asks for it.
	ThinksByDefault bool
	// AdaptiveThinking: a Claude model that thinks adaptively when asked
	// (Opus 4.6 to 4.8, Sonnet 4.6 and 5): --reasoning-effort sends
	// {"type": "adaptive"} with output_config.effort; without it the model
	// does not think (thinking is off by default, or turned off).
	AdaptiveThinking bool
	// Efforts: the model takes --reasoning-effort (OpenAI reasoning_effort
	// or reasoning.effort; Anthropic output_config.effort with adaptive
	// thinking).
	Efforts bool
	// MaxCompletionTokens: the cap goes in max_completion_tokens; the model
	// refuses max_tokens (OpenAI reasoning models).
	MaxCompletionTokens bool
	// DeveloperRole: system instructions go in a "developer" message.
	DeveloperRole bool
	// ResponsesOnly: the model answers only on OpenAI's /v1/responses
	// (pro, codex and deep-research models).
	ResponsesOnly bool
	// TokenFactor is how many of the model's tokens one o200k token makes,
	// on the safe side, for models whose tokenizer counts more (Sonnet 5:
	// 27-42% more); 0 means 1. Pacing, --max-cost and --dry-run use it.
	TokenFactor float64
	// StructuredOutput: the API holds the answer to a JSON schema (OpenAI's
	// response_format json_schema in strict mode, Anthropic's
	// output_config.format) for Request.Schema.
	StructuredOutput bool
	// CacheMinTokens is the shortest prefix Anthropic caches for the model
	// (shorter ones are silently not cached); 0 where caching is not
	// asked for (OpenAI caches prefixes of 1,024+ tokens by itself).
	CacheMinTokens int
}

// Thinks reports whether req's model reasons on this request, so that its
// output cap needs room for the reasoning.
func (r Rules) Thinks(req Request) bool {
	if r.AdaptiveThinking {
		return req.ReasoningEffort != ""
	}
	return r.Reasoning
}

// Factor is TokenFactor, 1 when unset.
func (r Rules) Factor() float64 {
	if r.TokenFactor <= 0 {
		return 1
	}
	return r.TokenFactor
}

// Scale is n o200k tokens as the model counts them, rounded up.
func (r Rules) Scale(n int) int {
	f := r.Factor()
	if f == 1 || n <= 0 {
		return n
	}
	return int(float64(n)*f + 0.999999)
}

// Efforts are the values --reasoning-effort takes.
var Efforts = []string{"low", "medium", "high"}

// Flags a model may not take, as Apply names them.
const (
	FlagTemperature = "--temperature"
	FlagSeed        = "--seed"
	FlagEffort      = "--reasoning-effort"
)

// Apply is req as the model takes it: the sampling parameters it refuses
// left out, and the flags that named them, in a fixed order, so a caller
// can say once per model what was not sent.
func (r Rules) Apply(req Request) (Request, []string) {
	var dropped []string
	if req.Temperature != nil && r.NoTemperature {
		req.Temperature = nil
		dropped = append(dropped, FlagTemperature)
	}
	if req.Seed != nil && r.NoSeed {
		req.Seed = nil
		dropped = append(dropped, FlagSeed)
	}
	if req.ReasoningEffort != "" && !r.Efforts {
		req.ReasoningEffort = ""
		dropped = append(dropped, FlagEffort)
	}
	return req, dropped
}

// CheckTemperature refuses a temperature outside the model's range, which
// the API would answer with a 400 for every request.
func (r Rules) CheckTemperature(t float64) error {
	if r.NoTemperature || r.MaxTemperature == 0 || t <= r.MaxTemperature {
		return nil
	}
	return fmt.Errorf("--temperature %g is over the %g its API allows", t, r.MaxTemperature)
}

// Summary is the rules in a few words, for `digest models`.
func (r Rules) Summary() string {
	var s []string
	if r.ResponsesOnly {
		s = append(s, "Responses API only")
	}
	if r.NoTemperature {
		s = append(s, "no temperature")
	} else if r.MaxTemperature > 0 {
		s = append(s, fmt.Sprintf("temperature 0-%g", r.MaxTemperature))
	}
	if r.NoSeed {
		s = append(s, "no seed")
	}
	if r.MaxCompletionTokens {
		s = append(s, "max_completion_tokens")
	}
	if r.DeveloperRole {
		s = append(s, "developer role")
	}
	switch {
	case r.ThinksByDefault:
		s = append(s, "thinks by default (off unless --reasoning-effort)")
	case r.AdaptiveThinking:
		s = append(s, "thinks with --reasoning-effort")
	case r.Reasoning:
		s = append(s, fmt.Sprintf("reasons (+%d output tokens)", ReasoningAllowance))
	}
	if r.Efforts {
		s = append(s, "--reasoning-effort")
	}
	if r.TokenFactor > 1 {
		s = append(s, fmt.Sprintf("tokens x%.2f of o200k", r.TokenFactor))
	}
	if r.CacheMinTokens > 0 {
		s = append(s, fmt.Sprintf("caches prefixes of %d+ tokens on request", r.CacheMinTokens))
	}
	if r.StructuredOutput {
		s = append(s, "JSON schema answers")
	}
	return strings.Join(s, ", ")
}

// The rows, first match wins. A model digest does not recognise gets
// Rules{} (it takes everything: local servers, fine-tunes, routers' own
// names), with the provider's temperature range where the provider is known.
var (
	openaiChat = Rules{Family: "OpenAI chat models", MaxTemperature: 2, StructuredOutput: true}
	// Models from before structured outputs (gpt-4-turbo, gpt-3.5) and the
	// early reasoning previews take no json_schema.
	openaiLegacy = Rules{Family: "OpenAI models before structured outputs", MaxTemperature: 2}
	// The -chat-latest snapshots of gpt-5 are not reasoning models: they
	// take temperature, as gpt-4o does.
	openaiChatLatest = Rules{Family: "OpenAI gpt-5 chat snapshots", MaxTemperature: 2, MaxCompletionTokens: true, StructuredOutput: true}
	openaiReasoning  = Rules{Family: "OpenAI reasoning models", NoTemperature: true, Reasoning: true, Efforts: true,
		MaxCompletionTokens: true, DeveloperRole: true, MaxTemperature: 2, StructuredOutput: true}
	openaiResponsesOnly = Rules{Family: "OpenAI Responses-only models", NoTemperature: true, NoSeed: true, Reasoning: true, Efforts: true,
		MaxCompletionTokens: true, DeveloperRole: true, ResponsesOnly: true, MaxTemperature: 2, StructuredOutput: true}
)

// RulesFor is the rules of a model, by its name (a router's prefix such as
// "openai/" or "anthropic/" is looked through; dated snapshots and
// -latest share their family's row).
func RulesFor(model string) Rules {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	if strings.HasPrefix(m, "claude-fable") || strings.HasPrefix(m, "claude-mythos") {
		// The Fable and Mythos models always think, and take no sampling
		// parameters.
		return Rules{Family: "Claude Fable and Mythos models", MaxTemperature: 1, NoSeed: true, NoTemperature: true,
			Reasoning: true, Efforts: true, StructuredOutput: true, CacheMinTokens: 512}
	}
	if strings.HasPrefix(m, "claude-") {
		return claudeRules(m)
	}
	if !openaiFamily(m) {
		return Rules{}
	}
	switch {
	case responsesOnly(m):
		return openaiResponsesOnly
	case strings.Contains(m, "-chat"):
		if strings.HasPrefix(m, "gpt-5") {
			return openaiChatLatest
		}
		return openaiChat
	case m == "o1-mini" || m == "o1-preview" || strings.HasPrefix(m, "o1-mini-") || strings.HasPrefix(m, "o1-preview-"):
		r := openaiReasoning
		r.StructuredOutput = false
		return r
	case reasoningName(m):
		return openaiReasoning
	case strings.HasPrefix(m, "gpt-3.5") || strings.HasPrefix(m, "gpt-4-") || m == "gpt-4":
		return openaiLegacy
	}
	return openaiChat
}

// ProviderRules is RulesFor, with the provider's temperature range for a
// model of a known provider digest has no row for.
func ProviderRules(spec Spec) Rules {
	r := RulesFor(spec.Model)
	if r.MaxTemperature == 0 {
		switch spec.Provider {
		case "openai", "openai-responses":
			r.MaxTemperature = 2
		case "anthropic":
			r.MaxTemperature, r.NoSeed = 1, true
		}
	}
	if spec.Provider == "openai-responses" {
		// The Responses API has no seed; its caps and roles are its own.
		r.NoSeed = true
	}
	return r
}

func openaiFamily(m string) bool {
	for _, p := range []string{"gpt-", "o1", "o3", "o4", "codex", "chatgpt-"} {
		if strings.HasPrefix(m, p) {
			return true
		}
	}
	return false
}

// reasoningName reports whether m is of the o1, o3, o4 or gpt-5 families.
func reasoningName(m string) bool {
	for _, fam := range []string{"o1", "o3", "o4"} {
		if m == fam || strings.HasPrefix(m, fam+"-") {
			return true
		}
	}
	for _, fam := range []string{"gpt-5", "gpt-6"} {
		if m == fam || strings.HasPrefix(m, fam+"-") || strings.HasPrefix(m, fam+".") {
			return true
		}
	}
	return false
}

// responsesOnly names the models that answer only on /v1/responses: the
// pro models (gpt-5-pro, gpt-5.2-pro, o3-pro, o1-pro), the codex models and
// the deep-research ones, with or without a date.
func responsesOnly(m string) bool {
	base := snapshotSuffix.ReplaceAllString(m, "")
	return strings.HasSuffix(base, "-pro") || strings.Contains(m, "codex") || strings.Contains(m, "deep-research")
}

var snapshotSuffix = regexp.MustCompile(`-(\d{4}-\d{2}-\d{2}|\d{8}|latest)$`)

// claudeVersion reads the family and version of a Claude model name, in
// the new order (claude-sonnet-4-5, claude-opus-4-8, claude-sonnet-5) and
// the old (claude-3-5-haiku, claude-3-7-sonnet).
var (
	claudeNew = regexp.MustCompile(`^claude-(opus|sonnet|haiku)-(\d+)(?:-(\d))?(?:-|$)`)
	claudeOld = regexp.MustCompile(`^claude-(\d+)(?:-(\d))?-(opus|sonnet|haiku)`)
)

func claudeRules(m string) Rules {
	family, major, minor := "", 0, 0
	if g := claudeNew.FindStringSubmatch(m); g != nil {
		family = g[1]
		major, _ = strconv.Atoi(g[2])
		minor, _ = strconv.Atoi(g[3])
	} else if g := claudeOld.FindStringSubmatch(m); g != nil {
		family = g[3]
		major, _ = strconv.Atoi(g[1])
		minor, _ = strconv.Atoi(g[2])
	}
	r := Rules{Family: "Claude models", MaxTemperature: 1, NoSeed: true, CacheMinTokens: 1024}
	if family == "" {
		return r // a name digest cannot place: the API's common rules
	}
	v := major*10 + minor
	// Anthropic's documented minimum cacheable prompt lengths (prompt
	// caching page, 2026): 1,024 unless listed here.
	switch {
	case family == "haiku" && v < 40:
		r.CacheMinTokens = 2048
	case family == "haiku":
		r.CacheMinTokens = 4096
	case family == "opus" && (v == 45 || v == 46):
		r.CacheMinTokens = 4096
	case family == "opus" && v == 47:
		r.CacheMinTokens = 2048
	case major >= 5 && family == "opus":
		r.CacheMinTokens = 512
	}
	// JSON outputs (output_config.format): Opus and Sonnet 4.5 on, Haiku 4.5 on.
	r.StructuredOutput = v >= 45
	if v >= 46 && family != "haiku" {
		// Opus and Sonnet 4.6 on: adaptive thinking with an effort.
		r.Family, r.AdaptiveThinking, r.Efforts = "Claude models with adaptive thinking", true, true
	}
	if v > 46 {
		// Released after Opus 4.6: sampling parameters are refused (400;
		// temperature 1.0 alone is let through).
		r.Family, r.NoTemperature, r.Reasoning = "Claude models after Opus 4.6", true, true
	}
	switch {
	case family == "sonnet" && major >= 5:
		// Sonnet 5 thinks unless told not to, and its tokenizer counts
		// 27-42% more tokens than Sonnet 4.6's for the same text.
		r.Family, r.ThinksByDefault, r.TokenFactor = "Claude Sonnet 5 and later", true, 1.42
	case family == "opus" && major >= 5:
		// Opus 5 cannot be told not to think: it always reasons.
		r.Family, r.AdaptiveThinking, r.CacheMinTokens = "Claude Opus 5 and later", false, 512
	}
	return r
}
