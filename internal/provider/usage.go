package provider

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
)

// Token counts in answers are the server's word, and servers get them
// wrong: a negative count, 1e15, a string. Costs, --max-cost and the token
// budget are all computed from them, so a count outside what the request
// could have used is not taken as given.

// TokenCount reads a count of tokens as a server wrote it (a number, or a
// number in a string); -1 when it is absent, null, not a number, negative
// or fractional. A count too large for an int comes back as MaxTokenCount.
func TokenCount(raw json.RawMessage) int {
	s := strings.Trim(strings.TrimSpace(string(raw)), `"`)
	if s == "" || !strings.ContainsAny(s[:1], "0123456789") {
		return -1 // also refuses what ParseFloat would take: "Inf", "NaN", "-5", "+1"
	}
	f, err := strconv.ParseFloat(s, 64)
	switch {
	case errors.Is(err, strconv.ErrRange): // beyond float64: 1e400
		return MaxTokenCount
	case err != nil || f != math.Trunc(f):
		return -1
	case f >= MaxTokenCount:
		return MaxTokenCount
	}
	return int(f)
}

// MaxTokenCount is where TokenCount stops counting: far past any request.
const MaxTokenCount = 1 << 40

// promptOverhead is what a server may add to a prompt's own tokens: a chat
// template's few tokens per message, and a model file's system prompt
// (Ollama's Modelfile SYSTEM). Byte-level tokenizers (GPT, Claude, Llama 3)
// and byte-fallback ones (Llama 2, Gemma) never make more tokens of a text
// than it has bytes, so the prompt's bytes plus this bound its input.
const (
	promptOverhead     = 4096
	messageOverhead    = 16
	uncappedOutputSize = 1 << 20 // no model writes a million tokens in one answer
	// outputSlack covers servers that count the end-of-turn token, or
	// overshoot max_tokens by a few, in the tokens they report.
	outputSlack = 64
)

// SaneUsage is the usage a server reported for req, each count held to
// what req could possibly have used: a count that is unknown or negative
// (-1 from TokenCount) is 0, as from a server that reports none; a count
// beyond the bound is the bound, the most the request could have cost, so
// that a cost cap errs on the safe side. req.MaxTokens must be the cap the
// request was sent with.
func SaneUsage(req Request, input, output int) Usage {
	return Usage{InputTokens: clampCount(input, InputBound(req)), OutputTokens: clampCount(output, OutputBound(req))}
}

func clampCount(n, bound int) int {
	return min(max(n, 0), bound)
}

// InputBound is the most input tokens req can use: its prompt's bytes plus
// what a server adds around them.
func InputBound(req Request) int {
	n := len(req.System) + promptOverhead
	for _, m := range req.Messages {
		n += len(m.Content) + messageOverhead
	}
	return n
}

// OutputBound is the most output tokens req can use: its cap (reasoning
// included) when it has one.
func OutputBound(req Request) int {
	if req.MaxTokens <= 0 {
		return uncappedOutputSize
	}
	return OutputCap(req) + outputSlack
}

// CachedPart is a count of cached input tokens as a server reported it,
// held to the input it is part of: unknown (-1) or negative is 0.
func CachedPart(cached, input int) int {
	return min(max(cached, 0), input)
}
