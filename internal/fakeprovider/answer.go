package fakeprovider

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/digest-cli/digest/internal/prompt"
	"github.com/digest-cli/digest/internal/provider"
)

// quarterRunes is the default token count: ceil(runes/4).
func quarterRunes(s string) int {
	return (utf8.RuneCountInString(s) + 3) / 4
}

// DefaultAnswer is the answer Config.Answer defaults to: for a request
// holding commits (prompt.Parse over the system text and the messages), the
// JSON array prompt.FormatAnswer writes, one summary per commit in prompt
// order, "Summary of <hash[:12]>: <subject>"; for any other request,
// "fake answer: " and the first 64 characters of the last user message.
func DefaultAnswer(req Received) string {
	var all strings.Builder
	all.WriteString(req.System)
	last := ""
	for _, m := range req.Messages {
		all.WriteString("\n")
		all.WriteString(m.Content)
		if m.Role == "user" {
			last = m.Content
		}
	}
	var answers []prompt.Answer
	seen := map[string]bool{}
	for _, c := range prompt.Parse(all.String()) {
		if seen[c.Hash] {
			continue
		}
		seen[c.Hash] = true
		answers = append(answers, prompt.Answer{Commit: c.Hash, Summary: Summary(c)})
	}
	if len(answers) > 0 {
		return prompt.FormatAnswer(answers)
	}
	last = strings.Join(strings.Fields(last), " ")
	if r := []rune(last); len(r) > 64 {
		last = string(r[:64])
	}
	return "fake answer: " + last
}

// Summary is the default answer's summary of one commit.
func Summary(c prompt.Commit) string {
	subject, _, _ := strings.Cut(strings.TrimSpace(c.Message), "\n")
	if subject = strings.TrimSpace(subject); subject == "" {
		subject = "(no message)"
	}
	return fmt.Sprintf("Summary of %s: %s", c.Hash[:12], subject)
}

// batch applies ShuffleBatch and DropOne to an answer that is a JSON array
// of commit answers.
func (s *Server) batch(text string) string {
	if !s.cfg.ShuffleBatch && !s.cfg.DropOne {
		return text
	}
	var answers []prompt.Answer
	if json.Unmarshal([]byte(strings.TrimSpace(text)), &answers) != nil || len(answers) < 2 {
		return text
	}
	if s.cfg.DropOne {
		answers = answers[:len(answers)-1]
	}
	if s.cfg.ShuffleBatch && len(answers) >= 2 {
		orig := slices.Clone(answers)
		s.mu.Lock()
		s.shuffles.Shuffle(len(answers), func(i, j int) { answers[i], answers[j] = answers[j], answers[i] })
		s.mu.Unlock()
		if slices.Equal(answers, orig) {
			answers = append(answers[1:], answers[0])
		}
	}
	return prompt.FormatAnswer(answers)
}

// fit cuts text to at most limit tokens: the longest prefix (in runes)
// that counts within it.
func (s *Server) fit(text string, limit int) string {
	runes := []rune(text)
	lo, hi := 0, len(runes) // the answer is in [lo, hi]
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if s.count(string(runes[:mid])) <= limit {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return string(runes[:lo])
}

// A RefuseTrigger in a request's last user message makes the fake refuse
// to answer, as a model declines: OpenAI's message.refusal with a null
// content, Anthropic's stop_reason "refusal" with stop_details and no
// content, the refusal's words being RefusalText.

// Refuses reports whether the fake refuses rec.
func Refuses(rec Received) bool {
	for i := len(rec.Messages) - 1; i >= 0; i-- {
		if rec.Messages[i].Role == "user" {
			return strings.Contains(rec.Messages[i].Content, RefuseTrigger)
		}
	}
	return false
}

// wrapForSchema puts an answer that is a JSON array under the schema's
// one array property, as a model held to the schema writes it; any other
// answer is left as it is.
func wrapForSchema(text string, schema json.RawMessage) string {
	var root struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
	}
	if json.Unmarshal(schema, &root) != nil || len(root.Properties) != 1 || !json.Valid([]byte(text)) || !strings.HasPrefix(strings.TrimSpace(text), "[") {
		return text
	}
	for name, p := range root.Properties {
		if p.Type == "array" {
			b, _ := json.Marshal(map[string]json.RawMessage{name: json.RawMessage(text)})
			return string(b)
		}
	}
	return text
}

// anthropicCacheMin is the shortest prefix the fake caches for Anthropic,
// the documented minimum of most models.
const anthropicCacheMin = 1024

// anthropicCache is the cached part of an Anthropic request: the prefix
// its last cache_control breakpoint covers, when it is at least
// anthropicCacheMin tokens, read from the cache when an earlier request
// wrote the same prefix, else written to it.
func (s *Server) anthropicCache(req request) (read, written int) {
	if req.cacheUpTo < 0 || req.cacheUpTo > len(req.messages) {
		return 0, 0
	}
	msgs := req.messages[:req.cacheUpTo]
	tokens := s.promptTokens(req.system, msgs)
	if tokens < anthropicCacheMin {
		return 0, 0
	}
	h := sha256.New()
	for _, p := range append([]string{req.model, req.system}, contents(msgs)...) {
		fmt.Fprintf(h, "%d:%s", len(p), p)
	}
	k := "anthropic:" + string(h.Sum(nil))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cache.anthropic == nil {
		s.cache.anthropic = map[string]bool{}
	}
	if s.cache.anthropic[k] {
		return tokens, 0
	}
	s.cache.anthropic[k] = true
	return 0, tokens
}

func contents(msgs []provider.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Role + ":" + m.Content
	}
	return out
}

// answerText is the answer to request number id, before it is cut to
// its cap: Config.Answer's or the default, batched as configured, held to
// the request's schema, or garbled when Sloppy picks it.
func (s *Server) answerText(req request, rec Received, id int) string {
	var text string
	if s.cfg.Answer != nil {
		text = s.cfg.Answer(rec)
	} else {
		text = DefaultAnswer(rec)
	}
	text = s.batch(text)
	if req.schema != nil {
		return wrapForSchema(text, req.schema)
	}
	if s.cfg.Sloppy > 0 && id%s.cfg.Sloppy == 0 && strings.HasPrefix(text, "[") {
		return "Here are the summaries:\n" + text[:len(text)/2]
	}
	return text
}

// answer writes a successful response body.
func (s *Server) answer(format string, req request, rec Received, promptTokens, id int) []byte {
	rec.Status = 0
	rec.Messages = slices.Clone(rec.Messages)
	rec.Header = rec.Header.Clone()
	rec.Body = slices.Clone(rec.Body)
	text := s.answerText(req, rec, id)
	truncated := false
	if req.maxTokens > 0 && s.count(text) > req.maxTokens {
		text, truncated = s.fit(text, req.maxTokens), true
	}
	refused := Refuses(rec)
	if refused {
		text, truncated = RefusalText, false
	}
	completion := max(1, s.count(text))

	var body any
	if format == OpenAI {
		finish := "stop"
		if truncated {
			finish = "length"
		}
		type message struct {
			Role    string  `json:"role"`
			Content *string `json:"content"`
			Refusal *string `json:"refusal"`
		}
		msg := message{Role: "assistant", Content: &text}
		if refused {
			// A refusal: content null, the model's words in refusal.
			msg = message{Role: "assistant", Refusal: &text}
		}
		type choice struct {
			Index        int     `json:"index"`
			Message      message `json:"message"`
			Logprobs     *string `json:"logprobs"`
			FinishReason string  `json:"finish_reason"`
		}
		type details struct {
			CachedTokens int `json:"cached_tokens"`
		}
		type usage struct {
			PromptTokens        int      `json:"prompt_tokens"`
			CompletionTokens    int      `json:"completion_tokens"`
			TotalTokens         int      `json:"total_tokens"`
			PromptTokensDetails *details `json:"prompt_tokens_details,omitempty"`
		}
		var cached *details
		if n := s.openaiCachedTokens(req.system, req.messages, promptTokens); n > 0 {
			cached = &details{CachedTokens: n} // OpenAI caches long prefixes by itself
		}
		body = struct {
			ID                string   `json:"id"`
			Object            string   `json:"object"`
			Created           int64    `json:"created"`
			Model             string   `json:"model"`
			Choices           []choice `json:"choices"`
			Usage             usage    `json:"usage"`
			SystemFingerprint string   `json:"system_fingerprint"`
		}{
			ID: fmt.Sprintf("chatcmpl-fake%06d", id), Object: "chat.completion", Created: rec.At.Unix(), Model: req.model,
			Choices:           []choice{{Message: msg, FinishReason: finish}},
			Usage:             usage{promptTokens, completion, promptTokens + completion, cached},
			SystemFingerprint: "fp_fake",
		}
	} else {
		stop := "end_turn"
		if truncated {
			stop = "max_tokens"
		}
		type block struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		type stopDetails struct {
			Type        string  `json:"type"`
			Category    *string `json:"category"`
			Explanation string  `json:"explanation"`
		}
		content := []block{{Type: "text", Text: text}}
		var details *stopDetails
		if refused {
			// A refusal: no content, the reason in stop_details.
			stop, content, details = "refusal", []block{}, &stopDetails{Type: "refusal", Explanation: text}
		}
		type usage struct {
			InputTokens              int `json:"input_tokens"`
			OutputTokens             int `json:"output_tokens"`
			CacheReadInputTokens     int `json:"cache_read_input_tokens,omitempty"`
			CacheCreationInputTokens int `json:"cache_creation_input_tokens,omitempty"`
		}
		read, written := s.anthropicCache(req)
		body = struct {
			ID           string       `json:"id"`
			Type         string       `json:"type"`
			Role         string       `json:"role"`
			Model        string       `json:"model"`
			Content      []block      `json:"content"`
			StopReason   string       `json:"stop_reason"`
			StopSequence *string      `json:"stop_sequence"`
			StopDetails  *stopDetails `json:"stop_details"`
			Usage        usage        `json:"usage"`
		}{
			ID: fmt.Sprintf("msg_fake%06d", id), Type: "message", Role: "assistant", Model: req.model,
			Content:     content,
			StopReason:  stop,
			StopDetails: details,
			Usage:       usage{promptTokens - read - written, completion, read, written},
		}
	}
	b, err := json.Marshal(body)
	if err != nil {
		panic(err) // plain strings and numbers always marshal
	}
	return b
}
