package fakeprovider

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/digest-cli/digest/internal/provider"
)

// request is a parsed, valid request in either format.
type request struct {
	model       string
	system      string
	messages    []provider.Message
	maxTokens   int
	temperature *float64
	// schema is the JSON schema the answer is held to (OpenAI's
	// response_format json_schema, Anthropic's output_config.format), nil
	// when none was asked for.
	schema json.RawMessage
	// cacheUpTo is, for Anthropic, how many messages the last
	// cache_control breakpoint covers (0: the system prompt alone); -1
	// when the request marks nothing for caching.
	cacheUpTo int
}

// apiError is an error body's fields; Param and Code are OpenAI's and
// written as null when empty.
type apiError struct {
	Type, Code, Param, Message string
}

type wireMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

func parseOpenAI(body []byte) (request, *apiError) {
	var raw struct {
		Model               *string        `json:"model"`
		Messages            *[]wireMessage `json:"messages"`
		MaxTokens           *int           `json:"max_tokens"`
		MaxCompletionTokens *int           `json:"max_completion_tokens"`
		Temperature         *float64       `json:"temperature"`
		ReasoningEffort     *string        `json:"reasoning_effort"`
		ResponseFormat      *struct {
			Type       string `json:"type"`
			JSONSchema *struct {
				Name   string          `json:"name"`
				Schema json.RawMessage `json:"schema"`
				Strict bool            `json:"strict"`
			} `json:"json_schema"`
		} `json:"response_format"`
		Stream bool `json:"stream"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		if te := (*json.UnmarshalTypeError)(nil); errors.As(err, &te) && te.Field != "" {
			return request{}, &apiError{Type: "invalid_request_error", Code: "invalid_type", Param: te.Field,
				Message: fmt.Sprintf("Invalid type for '%s': expected %s, but got %s instead.", te.Field, te.Type, te.Value)}
		}
		return request{}, &apiError{Type: "invalid_request_error", Message: "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)"}
	}
	if raw.Model == nil || *raw.Model == "" {
		return request{}, &apiError{Type: "invalid_request_error", Message: "you must provide a model parameter"}
	}
	if raw.Messages == nil {
		return request{}, &apiError{Type: "invalid_request_error", Code: "missing_required_parameter", Param: "messages", Message: "Missing required parameter: 'messages'."}
	}
	if len(*raw.Messages) == 0 {
		return request{}, &apiError{Type: "invalid_request_error", Code: "empty_array", Param: "messages", Message: "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead."}
	}
	req := request{model: *raw.Model, temperature: raw.Temperature}
	var system []string
	for i, m := range *raw.Messages {
		text, ok := textOf(m.Content)
		if !ok {
			param := fmt.Sprintf("messages[%d].content", i)
			return request{}, &apiError{Type: "invalid_request_error", Code: "invalid_type", Param: param, Message: fmt.Sprintf("Invalid type for '%s': expected a string or an array of content parts.", param)}
		}
		switch m.Role {
		case "system", "developer":
			system = append(system, text)
		case "user", "assistant", "tool", "function":
			req.messages = append(req.messages, provider.Message{Role: m.Role, Content: text})
		default:
			return request{}, &apiError{Type: "invalid_request_error", Code: "invalid_value", Param: fmt.Sprintf("messages[%d].role", i),
				Message: fmt.Sprintf("Invalid value: '%s'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.", m.Role)}
		}
	}
	req.system = strings.Join(system, "\n\n")
	name, limit := "max_tokens", raw.MaxTokens
	if raw.MaxCompletionTokens != nil {
		name, limit = "max_completion_tokens", raw.MaxCompletionTokens
	}
	if limit != nil {
		if *limit < 1 {
			return request{}, &apiError{Type: "invalid_request_error", Code: "integer_below_min_value", Param: name,
				Message: fmt.Sprintf("Invalid '%s': integer below minimum value. Expected a value >= 1, but got %d instead.", name, *limit)}
		}
		req.maxTokens = *limit
	}
	if t := raw.Temperature; t != nil && (*t < 0 || *t > 2) {
		code, msg := "decimal_above_max_value", "decimal above maximum value. Expected a value <= 2"
		if *t < 0 {
			code, msg = "decimal_below_min_value", "decimal below minimum value. Expected a value >= 0"
		}
		return request{}, &apiError{Type: "invalid_request_error", Code: code, Param: "temperature",
			Message: fmt.Sprintf("Invalid 'temperature': %s, but got %s instead.", msg, strconv.FormatFloat(*t, 'g', -1, 64))}
	}
	if raw.Stream {
		return request{}, &apiError{Type: "invalid_request_error", Param: "stream", Message: "fakeprovider does not stream: send \"stream\": false."}
	}
	if e := openaiModelRules(*raw.Model, raw.MaxTokens != nil, raw.Temperature, raw.ReasoningEffort); e != nil {
		return request{}, e
	}
	if rf := raw.ResponseFormat; rf != nil && rf.Type == "json_schema" {
		if rf.JSONSchema == nil || rf.JSONSchema.Name == "" {
			return request{}, &apiError{Type: "invalid_request_error", Code: "missing_required_parameter", Param: "response_format.json_schema.name",
				Message: "Missing required parameter: 'response_format.json_schema.name'."}
		}
		if problem := strictSchemaProblem(rf.JSONSchema.Schema, rf.JSONSchema.Strict); problem != "" {
			return request{}, &apiError{Type: "invalid_request_error", Code: "invalid_json_schema", Param: "response_format",
				Message: fmt.Sprintf("Invalid schema for response_format '%s': %s", rf.JSONSchema.Name, problem)}
		}
		req.schema = rf.JSONSchema.Schema
	}
	return req, nil
}

// strictSchemaProblem says what OpenAI's structured outputs refuse in a
// schema, or "": a root that is not an object, and in strict mode an
// object without "additionalProperties": false or with a property left
// out of "required".
func strictSchemaProblem(raw json.RawMessage, strict bool) string {
	var root map[string]any
	if json.Unmarshal(raw, &root) != nil || root["type"] != "object" {
		return "schema must be a JSON Schema of 'type: \"object\"', got another type."
	}
	if !strict {
		return ""
	}
	var walk func(v any, where string) string
	walk = func(v any, where string) string {
		obj, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		if obj["type"] == "object" {
			if obj["additionalProperties"] != false {
				return fmt.Sprintf("In context=(%s), 'additionalProperties' is required to be supplied and to be false.", where)
			}
			props, _ := obj["properties"].(map[string]any)
			req, _ := obj["required"].([]any)
			for name := range props {
				found := false
				for _, r := range req {
					found = found || r == name
				}
				if !found {
					return fmt.Sprintf("In context=(%s), 'required' is required to be supplied and to be an array including every key in properties. Missing '%s'.", where, name)
				}
			}
			for name, p := range props {
				if problem := walk(p, strings.TrimPrefix(where+", 'properties', '"+name+"'", ", ")); problem != "" {
					return problem
				}
			}
		}
		if items, ok := obj["items"]; ok {
			return walk(items, strings.TrimPrefix(where+", 'items'", ", "))
		}
		return ""
	}
	return walk(root, "")
}

// openaiReasoning reports whether the API treats model as a reasoning
// model (o1, o3, o4 and gpt-5 families but the -chat snapshots), as its
// model pages say: written here from them, apart from the client's table,
// so that a mistake in either shows.
func openaiReasoning(model string) bool {
	m := strings.ToLower(model)
	if strings.Contains(m, "-chat") {
		return false
	}
	for _, p := range []string{"o1", "o3", "o4"} {
		if m == p || strings.HasPrefix(m, p+"-") {
			return true
		}
	}
	return m == "gpt-5" || strings.HasPrefix(m, "gpt-5-") || strings.HasPrefix(m, "gpt-5.")
}

// openaiModelRules refuses what Chat Completions refuses of a model:
// max_tokens and a temperature other than 1 from reasoning models, and a
// reasoning_effort from the others.
func openaiModelRules(model string, maxTokens bool, temperature *float64, effort *string) *apiError {
	if !openaiReasoning(model) {
		if effort != nil {
			return &apiError{Type: "invalid_request_error", Code: "unsupported_parameter", Param: "reasoning_effort",
				Message: "Unsupported parameter: 'reasoning_effort' is not supported with this model."}
		}
		return nil
	}
	if maxTokens {
		return &apiError{Type: "invalid_request_error", Code: "unsupported_parameter", Param: "max_tokens",
			Message: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."}
	}
	if temperature != nil && *temperature != 1 {
		return &apiError{Type: "invalid_request_error", Code: "unsupported_value", Param: "temperature",
			Message: fmt.Sprintf("Unsupported value: 'temperature' does not support %s with this model. Only the default (1) value is supported.", strconv.FormatFloat(*temperature, 'g', -1, 64))}
	}
	return nil
}

// claudeAfterOpus46 reports whether model was released after Claude Opus
// 4.6 (Opus 4.7 and 4.8, Sonnet 5, the 5 family): such models refuse
// sampling parameters and extended thinking with a budget.
func claudeAfterOpus46(model string) bool {
	m := strings.ToLower(model)
	for _, fam := range []string{"opus", "sonnet", "haiku"} {
		rest, ok := strings.CutPrefix(m, "claude-"+fam+"-")
		if !ok {
			continue
		}
		major, minor := 0, 0
		parts := strings.SplitN(rest, "-", 3)
		major, _ = strconv.Atoi(parts[0])
		if len(parts) > 1 && len(parts[1]) == 1 {
			minor, _ = strconv.Atoi(parts[1])
		}
		return major > 4 || major == 4 && minor > 6
	}
	return false
}

func parseAnthropic(body []byte) (request, *apiError) {
	invalid := func(format string, args ...any) (request, *apiError) {
		return request{}, &apiError{Type: "invalid_request_error", Message: fmt.Sprintf(format, args...)}
	}
	var raw struct {
		Model       *string         `json:"model"`
		System      json.RawMessage `json:"system"`
		Messages    *[]wireMessage  `json:"messages"`
		MaxTokens   *int            `json:"max_tokens"`
		Temperature *float64        `json:"temperature"`
		TopP        *float64        `json:"top_p"`
		TopK        *int            `json:"top_k"`
		Seed        json.RawMessage `json:"seed"`
		Thinking    *struct {
			Type string `json:"type"`
		} `json:"thinking"`
		OutputConfig *struct {
			Effort string `json:"effort"`
			Format *struct {
				Type   string          `json:"type"`
				Schema json.RawMessage `json:"schema"`
			} `json:"format"`
		} `json:"output_config"`
		Stream bool `json:"stream"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		if te := (*json.UnmarshalTypeError)(nil); errors.As(err, &te) && te.Field != "" {
			return invalid("%s: Input should be a valid %s", te.Field, te.Type)
		}
		return invalid("There was an issue with the format of your request body: invalid JSON (%v)", err)
	}
	switch {
	case raw.Model == nil:
		return invalid("model: Field required")
	case *raw.Model == "":
		return invalid("model: String should have at least 1 character")
	case raw.Messages == nil:
		return invalid("messages: Field required")
	case raw.MaxTokens == nil:
		return invalid("max_tokens: Field required")
	case *raw.MaxTokens < 1:
		return invalid("max_tokens: Input should be greater than or equal to 1")
	case len(*raw.Messages) == 0:
		return invalid("messages: at least one message is required")
	case raw.Temperature != nil && *raw.Temperature < 0:
		return invalid("temperature: Input should be greater than or equal to 0")
	case raw.Temperature != nil && *raw.Temperature > 1:
		return invalid("temperature: Input should be less than or equal to 1")
	case raw.Stream:
		return invalid("stream: fakeprovider does not stream; send \"stream\": false")
	case raw.Seed != nil:
		return invalid("seed: Extra inputs are not permitted")
	case claudeAfterOpus46(*raw.Model) && raw.Temperature != nil && *raw.Temperature != 1:
		return invalid("temperature: Models released after Claude Opus 4.6 do not support setting temperature.")
	case claudeAfterOpus46(*raw.Model) && raw.TopP != nil && *raw.TopP < 0.99:
		return invalid("top_p: Models released after Claude Opus 4.6 do not support setting top_p.")
	case claudeAfterOpus46(*raw.Model) && raw.TopK != nil:
		return invalid("top_k: Models released after Claude Opus 4.6 do not accept top_k.")
	case claudeAfterOpus46(*raw.Model) && raw.Thinking != nil && raw.Thinking.Type == "enabled":
		return invalid(`"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.`)
	}
	system, ok := textOf(raw.System)
	if !ok {
		return invalid("system: Input should be a valid string or a list of text blocks")
	}
	req := request{model: *raw.Model, system: system, maxTokens: *raw.MaxTokens, temperature: raw.Temperature, cacheUpTo: -1}
	if oc := raw.OutputConfig; oc != nil && oc.Format != nil {
		if oc.Format.Type != "json_schema" || len(oc.Format.Schema) == 0 {
			return invalid("output_config.format: Input tag '%s' found using 'type' does not match any of the expected tags: 'json_schema'", oc.Format.Type)
		}
		req.schema = oc.Format.Schema
	}
	if cacheMarked(raw.System) {
		req.cacheUpTo = 0
	}
	for i, m := range *raw.Messages {
		switch m.Role {
		case "user", "assistant":
		case "system":
			return invalid("messages: Unexpected role \"system\". The Messages API accepts a top-level `system` parameter, not \"system\" as an input message role.")
		default:
			return invalid("messages.%d.role: Input should be 'user' or 'assistant'", i)
		}
		text, ok := textOf(m.Content)
		if !ok || len(m.Content) == 0 || string(m.Content) == "null" {
			return invalid("messages.%d.content: Input should be a valid string or a list of content blocks", i)
		}
		req.messages = append(req.messages, provider.Message{Role: m.Role, Content: text})
		if cacheMarked(m.Content) {
			req.cacheUpTo = i + 1
		}
	}
	return req, nil
}

// cacheMarked reports whether a system or content field is a list of
// blocks one of which carries cache_control.
func cacheMarked(raw json.RawMessage) bool {
	var blocks []struct {
		CacheControl json.RawMessage `json:"cache_control"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return false
	}
	for _, b := range blocks {
		if len(b.CacheControl) > 0 && string(b.CacheControl) != "null" {
			return true
		}
	}
	return false
}

// textOf reads a content field: absent, null, a string, or an array of
// parts of which the text parts count.
func textOf(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return "", false
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String(), true
}

// rateLimitError is a 429's body, worded like the provider's.
func rateLimitError(format, model string, v verdict, requested int) apiError {
	if format == OpenAI {
		abbr := map[string]string{"requests": "RPM", "tokens": "TPM"}[v.dim]
		if v.tooLarge {
			return apiError{Type: v.dim, Code: "rate_limit_exceeded", Message: fmt.Sprintf(
				"Request too large for %s in organization org-fake on %s per min (%s): Limit %d, Requested %d. The input or output tokens must be reduced in order to run successfully. Visit https://platform.openai.com/account/rate-limits to learn more.",
				model, v.dim, abbr, v.limit, requested)}
		}
		n := 1
		if v.dim == "tokens" {
			n = requested
		}
		return apiError{Type: v.dim, Code: "rate_limit_exceeded", Message: fmt.Sprintf(
			"Rate limit reached for %s in organization org-fake on %s per min (%s): Limit %d, Used %d, Requested %d. Please try again in %s. Visit https://platform.openai.com/account/rate-limits to learn more.",
			model, v.dim, abbr, v.limit, v.used, n, ceilMillis(v.wait))}
	}
	if v.tooLarge {
		return apiError{Type: "rate_limit_error", Message: fmt.Sprintf(
			"This request (%d tokens) would exceed the rate limit for your organization (fake-org) of %d tokens per minute on its own. Please reduce the prompt length or the maximum tokens requested.",
			requested, v.limit)}
	}
	return apiError{Type: "rate_limit_error", Message: fmt.Sprintf(
		"This request would exceed the rate limit for your organization (fake-org) of %d %s per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits. You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later.",
		v.limit, v.dim)}
}

// writeError writes an error in the format's body.
func writeError(w http.ResponseWriter, format string, status int, e apiError, id int) {
	writeRaw(w, status, errorJSON(format, e, id))
}

// errorJSON is an error's body in the format.
func errorJSON(format string, e apiError, id int) []byte {
	nullable := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	var body any
	if format == OpenAI {
		type inner struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Param   *string `json:"param"`
			Code    *string `json:"code"`
		}
		body = struct {
			Error inner `json:"error"`
		}{inner{e.Message, e.Type, nullable(e.Param), nullable(e.Code)}}
	} else {
		type inner struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		}
		body = struct {
			Type      string `json:"type"`
			Error     inner  `json:"error"`
			RequestID string `json:"request_id"`
		}{"error", inner{e.Type, e.Message}, requestID(id)}
	}
	b, err := json.Marshal(body)
	if err != nil {
		panic(err) // plain strings always marshal
	}
	return b
}

// writeRaw writes a JSON body with its length.
func writeRaw(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body) //nolint:errcheck // the client may be gone; nothing to do
}

func requestID(id int) string { return fmt.Sprintf("req_fake%06d", id) }

func setRequestID(w http.ResponseWriter, format string, id int) {
	if format == OpenAI {
		w.Header().Set("x-request-id", requestID(id))
	} else {
		w.Header().Set("request-id", requestID(id))
	}
}

// guessFormat picks the error format for a path neither format serves.
func guessFormat(h http.Header) string {
	if h.Get("x-api-key") != "" || h.Get("anthropic-version") != "" {
		return Anthropic
	}
	return OpenAI
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// maskKey shows a key the way OpenAI's 401 does: its ends only.
func maskKey(key string) string {
	if len(key) <= 8 {
		return strings.Repeat("*", len(key))
	}
	return key[:3] + strings.Repeat("*", len(key)-7) + key[len(key)-4:]
}
