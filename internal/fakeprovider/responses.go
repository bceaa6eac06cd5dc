package fakeprovider

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/digest-cli/digest/internal/provider"
)

// ResponsesPath is OpenAI's Responses API, served in the OpenAI format
// (Received.Format is OpenAI, Received.Path this).
const ResponsesPath = "/v1/responses"

// Triggers, looked for in a request's last user message: RefuseTrigger
// makes the model refuse, ContentFilterTrigger has the content filter cut
// a Responses answer.
const (
	RefuseTrigger        = "FAKE_REFUSE"
	ContentFilterTrigger = "FAKE_CONTENT_FILTER"
)

// RefusalText is the refusal a RefuseTrigger gets.
const RefusalText = "I'm sorry, but I can't help with that."

// OpenAI's prompt cache: prefixes of 1,024 tokens and up, in steps of 128.
const (
	responsesCacheMin  = 1024
	responsesCacheStep = 128
)

// promptCache is what the fake remembers of the prompts it answered, for
// cached usage. Guarded by Server.mu.
type promptCache struct {
	// prefixes are OpenAI's (chat and Responses alike), which it caches by
	// itself.
	prefixes map[[sha256.Size]byte]bool
	// anthropic holds the prefixes Anthropic requests asked to cache.
	anthropic map[string]bool
}

// parseAt parses a body posted to path of the OpenAI format: a chat
// completion's, or for ResponsesPath a response's. It is the one place the
// sync and batch endpoints tell the two apart.
func parseAt(path string, body []byte) (request, *apiError) {
	if path == ResponsesPath {
		return parseResponses(body)
	}
	return parseOpenAI(body)
}

// answerAt writes the success body of a request to path: the Responses
// object for ResponsesPath, the format's own answer otherwise.
func (s *Server) answerAt(path, format string, req request, rec Received, promptTokens, id int) []byte {
	if path == ResponsesPath {
		return s.responsesAnswer(req, rec, promptTokens, id)
	}
	return s.answer(format, req, rec, promptTokens, id)
}

// responsesOnlyError is what OpenAI answers a chat completion for a model
// it serves on the Responses API alone: a 404 whose code is null.
var responsesOnlyError = apiError{Type: "invalid_request_error", Param: "model",
	Message: "This model is only supported in v1/responses and not in v1/chat/completions."}

// refuseResponsesOnly answers a chat completion (path OpenAIPath) whose
// body names a model that only the Responses API serves as OpenAI does,
// before looking at the rest of the body, and reports whether it did.
func (s *Server) refuseResponsesOnly(w http.ResponseWriter, rec *Received, path string, body []byte, id int) bool {
	var named struct {
		Model string `json:"model"`
	}
	if path != OpenAIPath || json.Unmarshal(body, &named) != nil || !responsesOnlyModel(named.Model) {
		return false
	}
	s.mu.Lock()
	rec.Model = named.Model
	s.mu.Unlock()
	s.finish(rec, http.StatusNotFound, func(st *Stats) { st.NotFound++ })
	writeError(w, OpenAI, http.StatusNotFound, responsesOnlyError, id)
	return true
}

// responsesOnlyModel reports the models OpenAI's model pages list with
// the Responses API alone: the pro models (gpt-5-pro, gpt-5.2-pro, o3-pro,
// o1-pro), the codex models and the deep-research ones, dated or not, a
// router's prefix ("openai/") looked through. Written here from the pages,
// apart from the client's rules (provider.RulesFor), so that a mistake in
// either shows.
func responsesOnlyModel(model string) bool {
	m := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	base := responsesSnapshot.ReplaceAllString(m, "")
	return strings.HasSuffix(base, "-pro") || strings.Contains(m, "codex") || strings.Contains(m, "deep-research")
}

var responsesSnapshot = regexp.MustCompile(`-(\d{4}-\d{2}-\d{2}|\d{8}|latest)$`)

// responsesKeys are CreateResponse's fields, as OpenAI's spec lists them:
// any other key is refused.
var responsesKeys = map[string]bool{
	"background": true, "context_management": true, "conversation": true, "include": true, "input": true,
	"instructions": true, "max_output_tokens": true, "max_tool_calls": true, "metadata": true, "model": true,
	"moderation": true, "parallel_tool_calls": true, "previous_response_id": true, "prompt": true,
	"prompt_cache_key": true, "prompt_cache_options": true, "prompt_cache_retention": true, "reasoning": true,
	"safety_identifier": true, "service_tier": true, "store": true, "stream": true, "stream_options": true,
	"temperature": true, "text": true, "tool_choice": true, "tools": true, "top_logprobs": true, "top_p": true,
	"truncation": true, "user": true,
}

// responsesMoved are Chat Completions keys whose Responses counterparts
// have another name: refused with the API's pointer to it.
var responsesMoved = map[string]string{
	"messages":              "input",
	"max_completion_tokens": "max_output_tokens",
	"reasoning_effort":      "reasoning.effort",
	"response_format":       "text.format",
}

// responsesEfforts are reasoning.effort's values (ReasoningEffort).
var responsesEfforts = []string{"none", "minimal", "low", "medium", "high", "xhigh", "max"}

const responsesInvalidJSON = "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)"

// parseResponses reads a CreateResponse body, refusing what OpenAI
// refuses, in its order: the model, then keys it does not know, then the
// values, then what the model does not take.
func parseResponses(body []byte) (request, *apiError) {
	invalid := func(code, param, format string, args ...any) (request, *apiError) {
		return request{}, &apiError{Type: "invalid_request_error", Code: code, Param: param, Message: fmt.Sprintf(format, args...)}
	}
	wrongType := func(param, want string, raw json.RawMessage) (request, *apiError) {
		return invalid("invalid_type", param, "Invalid type for '%s': expected %s, but got %s instead.", param, want, respTypeWord(raw))
	}
	keys, fields, ok := respObjectFields(body)
	if !ok {
		return invalid("", "", "%s", responsesInvalidJSON)
	}
	rawModel, ok := fields["model"]
	if !ok {
		return invalid("missing_required_parameter", "model", "Missing required parameter: 'model'.")
	}
	var model string
	if respKind(rawModel) != "string" || json.Unmarshal(rawModel, &model) != nil {
		return wrongType("model", "a string", rawModel)
	}
	if model == "" {
		return invalid("model_not_found", "model", "The requested model '' does not exist.")
	}
	for _, k := range keys {
		if to, ok := responsesMoved[k]; ok {
			return invalid("unsupported_parameter", "", "Unsupported parameter: '%s'. In the Responses API, this parameter has moved to '%s'. Try again with the new parameter. See the API documentation for more information: https://platform.openai.com/docs/api-reference/responses/create.", k, to)
		}
		if !responsesKeys[k] {
			return invalid("unknown_parameter", k, "Unknown parameter: '%s'.", k)
		}
	}
	rawInput, ok := fields["input"]
	if !ok || respKind(rawInput) == "null" {
		return invalid("missing_required_parameter", "input", "Missing required parameter: 'input'.")
	}
	messages, system, perr := parseResponsesInput(rawInput)
	if perr != nil {
		return request{}, perr
	}
	req := request{model: model, messages: messages}
	if raw, ok := fields["instructions"]; ok && respKind(raw) != "null" {
		var s string
		if respKind(raw) != "string" || json.Unmarshal(raw, &s) != nil {
			return wrongType("instructions", "a string", raw)
		}
		if s != "" {
			system = append([]string{s}, system...)
		}
	}
	req.system = strings.Join(system, "\n\n")
	if raw, ok := fields["max_output_tokens"]; ok && respKind(raw) != "null" {
		var n int
		if respKind(raw) != "integer" || json.Unmarshal(raw, &n) != nil {
			return wrongType("max_output_tokens", "an integer", raw)
		}
		if n < 16 {
			return invalid("integer_below_min_value", "max_output_tokens", "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got %d instead.", n)
		}
		req.maxTokens = n
	}
	sampling := map[string]*float64{}
	for _, p := range []struct {
		name string
		top  float64
	}{{"temperature", 2}, {"top_p", 1}} {
		raw, ok := fields[p.name]
		if !ok || respKind(raw) == "null" {
			continue
		}
		var f float64
		if k := respKind(raw); (k != "integer" && k != "decimal") || json.Unmarshal(raw, &f) != nil {
			return wrongType(p.name, "a decimal", raw)
		}
		if f < 0 {
			return invalid("decimal_below_min_value", p.name, "Invalid '%s': decimal below minimum value. Expected a value >= 0, but got %s instead.", p.name, strconv.FormatFloat(f, 'g', -1, 64))
		}
		if f > p.top {
			return invalid("decimal_above_max_value", p.name, "Invalid '%s': decimal above maximum value. Expected a value <= %g, but got %s instead.", p.name, p.top, strconv.FormatFloat(f, 'g', -1, 64))
		}
		sampling[p.name] = &f
	}
	req.temperature = sampling["temperature"]
	if raw, ok := fields["text"]; ok && respKind(raw) != "null" {
		var text struct {
			Format *struct {
				Type   string          `json:"type"`
				Name   string          `json:"name"`
				Schema json.RawMessage `json:"schema"`
				Strict bool            `json:"strict"`
			} `json:"format"`
		}
		if json.Unmarshal(raw, &text) != nil {
			return wrongType("text", "an object", raw)
		}
		if f := text.Format; f != nil && f.Type == "json_schema" {
			if f.Name == "" {
				return invalid("missing_required_parameter", "text.format.name", "Missing required parameter: 'text.format.name'.")
			}
			if problem := strictSchemaProblem(f.Schema, f.Strict); problem != "" {
				return invalid("invalid_json_schema", "text.format.schema", "Invalid schema for response_format '%s': %s", f.Name, problem)
			}
			req.schema = f.Schema
		}
	}
	effort := ""
	if raw, ok := fields["reasoning"]; ok && respKind(raw) != "null" {
		rkeys, rfields, ok := respObjectFields(raw)
		if !ok {
			return wrongType("reasoning", "an object", raw)
		}
		for _, k := range rkeys {
			if !slices.Contains([]string{"effort", "summary", "mode", "context"}, k) {
				return invalid("unknown_parameter", "reasoning."+k, "Unknown parameter: 'reasoning.%s'.", k)
			}
		}
		if e, ok := rfields["effort"]; ok && respKind(e) != "null" {
			if respKind(e) != "string" || json.Unmarshal(e, &effort) != nil {
				return wrongType("reasoning.effort", "one of 'none', 'minimal', 'low', 'medium', 'high', 'xhigh', or 'max'", e)
			}
			if !slices.Contains(responsesEfforts, effort) {
				return invalid("invalid_value", "reasoning.effort", "Invalid value: '%s'. Supported values are: 'none', 'minimal', 'low', 'medium', 'high', 'xhigh', and 'max'.", effort)
			}
		}
	}
	for _, name := range []string{"store", "stream", "background", "parallel_tool_calls"} {
		if raw, ok := fields[name]; ok && respKind(raw) != "null" && respKind(raw) != "boolean" {
			return wrongType(name, "a boolean", raw)
		}
	}
	if string(bytes.TrimSpace(fields["stream"])) == "true" {
		return invalid("", "stream", "fakeprovider does not stream: send \"stream\": false.")
	}
	if string(bytes.TrimSpace(fields["background"])) == "true" {
		return invalid("", "background", "fakeprovider does not run responses in the background: send \"background\": false.")
	}
	// What the model takes: reasoning models refuse sampling parameters
	// other than their default; other models refuse an effort.
	rules := provider.RulesFor(model)
	for _, name := range []string{"temperature", "top_p"} {
		if f := sampling[name]; f != nil && *f != 1 && rules.NoTemperature {
			return invalid("", name, "Unsupported parameter: '%s' is not supported with this model.", name)
		}
	}
	if effort != "" && rules.Family != "" && !rules.Efforts {
		return invalid("", "reasoning.effort", "Unsupported parameter: 'reasoning.effort' is not supported with this model.")
	}
	return req, nil
}

// parseResponsesInput reads input: a string (one user message) or a list of
// message items {"type": "message", "role", "content"} whose content is a
// string or a list of input_text / output_text parts. System and
// developer messages come back apart, as instructions do.
func parseResponsesInput(raw json.RawMessage) (messages []provider.Message, system []string, e *apiError) {
	invalid := func(code, param, format string, args ...any) ([]provider.Message, []string, *apiError) {
		return nil, nil, &apiError{Type: "invalid_request_error", Code: code, Param: param, Message: fmt.Sprintf(format, args...)}
	}
	switch respKind(raw) {
	case "string":
		var s string
		if json.Unmarshal(raw, &s) != nil {
			break
		}
		return []provider.Message{{Role: "user", Content: s}}, nil, nil
	case "array":
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			break
		}
		for i, item := range items {
			at := fmt.Sprintf("input[%d]", i)
			keys, fields, ok := respObjectFields(item)
			if !ok {
				return invalid("invalid_type", at, "Invalid type for '%s': expected an input item, but got %s instead.", at, respTypeWord(item))
			}
			for _, k := range keys {
				if !slices.Contains([]string{"type", "role", "content", "id", "status", "phase"}, k) {
					return invalid("unknown_parameter", at+"."+k, "Unknown parameter: '%s.%s'.", at, k)
				}
			}
			var typ, role string
			if t, ok := fields["type"]; ok && (json.Unmarshal(t, &typ) != nil || typ != "message") {
				return invalid("invalid_value", at+".type", "fakeprovider takes input items of type 'message' only, not %s.", bytes.TrimSpace(t))
			}
			r, ok := fields["role"]
			if !ok {
				return invalid("missing_required_parameter", at+".role", "Missing required parameter: '%s.role'.", at)
			}
			if json.Unmarshal(r, &role) != nil || !slices.Contains([]string{"user", "assistant", "system", "developer"}, role) {
				return invalid("invalid_value", at+".role", "Invalid value: %s. Supported values are: 'assistant', 'system', 'developer', and 'user'.", bytes.TrimSpace(r))
			}
			c, ok := fields["content"]
			if !ok {
				return invalid("missing_required_parameter", at+".content", "Missing required parameter: '%s.content'.", at)
			}
			text, ok := respInputText(c)
			if !ok {
				return invalid("invalid_type", at+".content", "Invalid type for '%s.content': expected one of a string or array of input content items, but got %s instead.", at, respTypeWord(c))
			}
			if role == "system" || role == "developer" {
				system = append(system, text)
			} else {
				messages = append(messages, provider.Message{Role: role, Content: text})
			}
		}
		return messages, system, nil
	}
	return invalid("invalid_type", "input", "Invalid type for 'input': expected one of a string or array of input items, but got %s instead.", respTypeWord(raw))
}

// respInputText reads a message's content: a string, or parts of which the
// input_text and output_text ones hold text.
func respInputText(raw json.RawMessage) (string, bool) {
	var s string
	if respKind(raw) == "string" && json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if respKind(raw) != "array" || json.Unmarshal(raw, &parts) != nil {
		return "", false
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "input_text" || p.Type == "output_text" {
			b.WriteString(p.Text)
		}
	}
	return b.String(), true
}

// respObjectFields reads a JSON object's keys, in order, and values; ok is
// false when data is no object.
func respObjectFields(data []byte) (keys []string, fields map[string]json.RawMessage, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, false
	}
	fields = map[string]json.RawMessage{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, false
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, false
		}
		if _, dup := fields[k]; !dup {
			keys = append(keys, k)
		}
		fields[k] = v
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, nil, false
	}
	if _, err := dec.Token(); err == nil {
		return nil, nil, false // more after the object
	}
	return keys, fields, true
}

// respKind names a JSON value's type as the API's messages do: "string",
// "integer", "decimal", "boolean", "object", "array", "null" ("" for none).
func respKind(raw json.RawMessage) string {
	s := bytes.TrimSpace(raw)
	if len(s) == 0 {
		return ""
	}
	switch s[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	if bytes.ContainsAny(s, ".eE") {
		return "decimal"
	}
	return "integer"
}

// respTypeWord is a value's type with its article, as the API's invalid_type
// messages say it (null reads as an object there).
func respTypeWord(raw json.RawMessage) string {
	switch k := respKind(raw); k {
	case "integer", "object", "array":
		return "an " + k
	case "null", "":
		return "an object"
	default:
		return "a " + k
	}
}

// responsesAnswer writes a Response object: the same text as a chat
// completion (Config.Answer, ShuffleBatch, DropOne), unless a trigger asks
// for a refusal or a filtered answer; cut to max_output_tokens with status
// incomplete; usage with the prompt's cached prefix.
func (s *Server) responsesAnswer(req request, rec Received, promptTokens, id int) []byte {
	rec.Status = 0
	rec.Messages = slices.Clone(rec.Messages)
	rec.Header = rec.Header.Clone()
	rec.Body = slices.Clone(rec.Body)
	last := ""
	for _, m := range rec.Messages {
		if m.Role == "user" {
			last = m.Content
		}
	}
	type part struct {
		Type        string    `json:"type"`
		Text        *string   `json:"text,omitempty"`
		Refusal     *string   `json:"refusal,omitempty"`
		Annotations *[]string `json:"annotations,omitempty"`
		Logprobs    *[]string `json:"logprobs,omitempty"`
	}
	status, reason := "completed", ""
	var content part
	var completion int
	if strings.Contains(last, RefuseTrigger) {
		refusal := RefusalText
		content = part{Type: "refusal", Refusal: &refusal}
		completion = max(1, s.count(refusal))
	} else {
		text := s.answerText(req, rec, id)
		switch n := s.count(text); {
		case strings.Contains(last, ContentFilterTrigger):
			text, status, reason = s.fit(text, n/2), "incomplete", "content_filter"
		case req.maxTokens > 0 && n > req.maxTokens:
			text, status, reason = s.fit(text, req.maxTokens), "incomplete", "max_output_tokens"
		}
		empty := []string{}
		content = part{Type: "output_text", Text: &text, Annotations: &empty, Logprobs: &empty}
		completion = max(1, s.count(text))
	}
	cached := s.openaiCachedTokens(req.system, req.messages, promptTokens)

	// The request's own settings, echoed as the API echoes them.
	var echo struct {
		Instructions    *string         `json:"instructions"`
		MaxOutputTokens *int            `json:"max_output_tokens"`
		Temperature     *float64        `json:"temperature"`
		TopP            *float64        `json:"top_p"`
		Reasoning       json.RawMessage `json:"reasoning"`
		Store           *bool           `json:"store"`
	}
	json.Unmarshal(rec.Body, &echo) //nolint:errcheck // parsed before: it reads
	one := 1.0
	if echo.Temperature == nil {
		echo.Temperature = &one
	}
	if echo.TopP == nil {
		echo.TopP = &one
	}
	reasoning := any(map[string]any{"effort": nil, "summary": nil})
	if respKind(echo.Reasoning) == "object" {
		reasoning = echo.Reasoning
	}
	store := echo.Store == nil || *echo.Store

	type message struct {
		Type    string `json:"type"`
		ID      string `json:"id"`
		Status  string `json:"status"`
		Role    string `json:"role"`
		Content []part `json:"content"`
	}
	type inputDetails struct {
		CachedTokens     int `json:"cached_tokens"`
		CacheWriteTokens int `json:"cache_write_tokens"`
	}
	type outputDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	}
	type usage struct {
		InputTokens         int           `json:"input_tokens"`
		InputTokensDetails  inputDetails  `json:"input_tokens_details"`
		OutputTokens        int           `json:"output_tokens"`
		OutputTokensDetails outputDetails `json:"output_tokens_details"`
		TotalTokens         int           `json:"total_tokens"`
	}
	var incomplete, completedAt any
	if reason != "" {
		incomplete = map[string]string{"reason": reason}
	} else {
		completedAt = rec.At.Unix()
	}
	body := struct {
		ID                 string         `json:"id"`
		Object             string         `json:"object"`
		CreatedAt          int64          `json:"created_at"`
		Status             string         `json:"status"`
		CompletedAt        any            `json:"completed_at"`
		Error              any            `json:"error"`
		IncompleteDetails  any            `json:"incomplete_details"`
		Instructions       *string        `json:"instructions"`
		MaxOutputTokens    *int           `json:"max_output_tokens"`
		Model              string         `json:"model"`
		Output             []message      `json:"output"`
		ParallelToolCalls  bool           `json:"parallel_tool_calls"`
		PreviousResponseID any            `json:"previous_response_id"`
		Reasoning          any            `json:"reasoning"`
		Store              bool           `json:"store"`
		Temperature        *float64       `json:"temperature"`
		Text               any            `json:"text"`
		ToolChoice         string         `json:"tool_choice"`
		Tools              []string       `json:"tools"`
		TopP               *float64       `json:"top_p"`
		Truncation         string         `json:"truncation"`
		Usage              usage          `json:"usage"`
		User               any            `json:"user"`
		Metadata           map[string]any `json:"metadata"`
	}{
		ID: fmt.Sprintf("resp_fake%06d", id), Object: "response", CreatedAt: rec.At.Unix(), Status: status,
		CompletedAt: completedAt, IncompleteDetails: incomplete, Instructions: echo.Instructions,
		MaxOutputTokens: echo.MaxOutputTokens, Model: req.model,
		Output:            []message{{Type: "message", ID: fmt.Sprintf("msg_fake%06d", id), Status: status, Role: "assistant", Content: []part{content}}},
		ParallelToolCalls: true, Reasoning: reasoning, Store: store, Temperature: echo.Temperature,
		Text: map[string]any{"format": map[string]string{"type": "text"}}, ToolChoice: "auto", Tools: []string{},
		TopP: echo.TopP, Truncation: "disabled",
		Usage: usage{InputTokens: promptTokens, InputTokensDetails: inputDetails{CachedTokens: cached},
			OutputTokens: completion, TotalTokens: promptTokens + completion},
		Metadata: map[string]any{},
	}
	return mustJSON(body)
}

// openaiCachedTokens is the cached part of an OpenAI prompt: the longest
// prefix of it (the instructions, then each input message in turn) that an
// earlier answered request began with, counted in tokens and rounded down
// to a multiple of responsesCacheStep when it is at least
// responsesCacheMin, else 0. The prompt's own prefixes are remembered for
// the requests after it.
func (s *Server) openaiCachedTokens(system string, msgs []provider.Message, promptTokens int) int {
	h := sha256.New()
	segment := func(role, text string) {
		var n [8]byte
		for _, p := range []string{role, text} {
			binary.BigEndian.PutUint64(n[:], uint64(len(p)))
			h.Write(n[:])
			h.Write([]byte(p))
		}
	}
	prefixes := make([][sha256.Size]byte, 0, len(msgs)+1)
	segment("instructions", system)
	prefixes = append(prefixes, [sha256.Size]byte(h.Sum(nil)))
	for _, m := range msgs {
		segment(m.Role, m.Content)
		prefixes = append(prefixes, [sha256.Size]byte(h.Sum(nil)))
	}
	s.mu.Lock()
	seen := s.cache.prefixes
	if seen == nil {
		seen = map[[sha256.Size]byte]bool{}
		s.cache.prefixes = seen
	}
	longest := -1
	for k := len(prefixes) - 1; k >= 0; k-- {
		if seen[prefixes[k]] {
			longest = k
			break
		}
	}
	for _, p := range prefixes {
		seen[p] = true
	}
	s.mu.Unlock()
	if longest < 0 {
		return 0
	}
	shared := s.promptTokens(system, msgs[:longest])
	if shared < responsesCacheMin {
		return 0
	}
	return min(shared/responsesCacheStep*responsesCacheStep, promptTokens)
}
