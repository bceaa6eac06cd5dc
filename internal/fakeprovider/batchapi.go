package fakeprovider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

// BatchAPIConfig shapes the batch endpoints.
type BatchAPIConfig struct {
	// Processing is how long a batch runs before it ends; 0 ends it at
	// the first look.
	Processing time.Duration
	// Errored picks the items answered with a server error (OpenAI: a 500
	// in the error file; Anthropic: an errored api_error result); nil
	// picks none. It is called with the server's lock held: keep it pure.
	Errored func(customID string) bool
	// Expire picks the items the batch's window runs out on: a batch with
	// any ends expired, them unanswered; nil picks none.
	Expire func(customID string) bool
	// LoseCreate picks batch creations, numbered from 1 across both
	// formats, whose answer is lost on the way back: the batch is created
	// (and counted in BatchesCreated) but the client gets a 500, as when
	// a connection breaks after the server acted. Only List finds such a
	// batch again. nil loses none. It is called with the server's lock
	// held: keep it pure.
	LoseCreate func(n int) bool
	// PerKey keeps each batch and each file to the API key that made it,
	// as OpenAI keeps them to the key's project and Anthropic to its
	// workspace: another key lists only its own, and gets the provider's
	// 404 for the rest on retrieve, cancel, results and file content
	// (OpenAI: "No batch found with id '…'.", "No such File object: …";
	// Anthropic: a not_found_error), as if they did not exist. Any key is
	// taken unless Config.APIKey is set.
	PerKey bool
	// Tamper, when set, rewrites the lines of a batch's results as they
	// are made (OpenAI's output file, Anthropic's results), each line one
	// JSON object in the provider's format without its newline: a test
	// repeats a line, or adds one for a custom_id the batch was not sent.
	// It is called without the server's lock.
	Tamper func(format string, lines [][]byte) [][]byte
	// QueueTokens and QueueRequests are the account's batch queue: what
	// its batches still running may hold at once. OpenAI counts the
	// prompt tokens of their items, and creates a batch that would pass
	// QueueTokens failed with token_limit_exceeded; Anthropic counts
	// their requests, and answers a creation that would pass
	// QueueRequests with a 429 rate_limit_error. 0: no limit.
	QueueTokens, QueueRequests int
}

// Batch API paths.
const (
	OpenAIFilesPath          = "/v1/files"
	OpenAIBatchesPath        = "/v1/batches"
	AnthropicBatchesPath     = "/v1/messages/batches"
	openAIBatchEndpoint      = "/v1/chat/completions"
	openAIBatchWindow        = "24h"
	batchAPIMaxMultipartSize = 256 << 20

	// The list endpoints' page sizes: a default and a largest, as the
	// real ones document them.
	batchListDefault         = 20
	openAIBatchListMax       = 100
	anthropicBatchListMax    = 1000
	openAIMetadataPairs      = 16
	openAIMetadataKeyChars   = 64
	openAIMetadataValueChars = 512
)

type fakeBatch struct {
	format    string
	id        string
	owner     string // the key that made it (BatchAPIConfig.PerKey)
	inputFile string
	endpoint  string            // OpenAI: what its lines call, openAIBatchEndpoint or ResponsesPath
	metadata  map[string]string // OpenAI; nil when none was sent
	created   time.Time
	items     []batchEntry
	invalid   []batchLineError // OpenAI: an input file that failed validation, or a full queue
	tokens    int              // OpenAI: the prompt tokens of its items, as the queue counts them
	runs      time.Duration    // BatchAPIConfig.Processing when it was created

	canceledAt time.Time // zero until a cancel
	ended      bool
	endedAt    time.Time
	once       sync.Once
	counts     batchCounts
	output     []byte // OpenAI output file; Anthropic results
	errors     []byte // OpenAI error file
	outputID   string
	errorID    string
	expired    bool
}

type batchEntry struct {
	customID string
	body     json.RawMessage
}

type batchLineError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Param   any    `json:"param"`
	Line    *int   `json:"line"` // null for an error of the whole batch
}

type batchCounts struct {
	succeeded, errored, canceled, expired int
}

// batchState is what the batch endpoints keep; guarded by Server.mu.
type batchState struct {
	files map[string][]byte
	// owners is the key that made each file, by id (BatchAPIConfig.PerKey).
	owners map[string]string
	byID   map[string]*fakeBatch
	// created is every batch in creation order, which the list endpoints
	// answer newest first.
	created []*fakeBatch
	seq     int
}

func (s *Server) newBatchMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+OpenAIFilesPath, s.openAIUpload)
	mux.HandleFunc("GET "+OpenAIFilesPath+"/{id}/content", s.openAIFileContent)
	mux.HandleFunc("POST "+OpenAIBatchesPath, s.openAICreate)
	mux.HandleFunc("GET "+OpenAIBatchesPath, func(w http.ResponseWriter, r *http.Request) { s.listBatches(w, r, OpenAI) })
	mux.HandleFunc("GET "+OpenAIBatchesPath+"/{id}", s.openAIRetrieve)
	mux.HandleFunc("POST "+OpenAIBatchesPath+"/{id}/cancel", s.openAICancel)
	mux.HandleFunc("POST "+AnthropicBatchesPath, s.anthropicCreate)
	mux.HandleFunc("GET "+AnthropicBatchesPath, func(w http.ResponseWriter, r *http.Request) { s.listBatches(w, r, Anthropic) })
	mux.HandleFunc("GET "+AnthropicBatchesPath+"/{id}", s.anthropicRetrieve)
	mux.HandleFunc("GET "+AnthropicBatchesPath+"/{id}/results", s.anthropicResults)
	mux.HandleFunc("POST "+AnthropicBatchesPath+"/{id}/cancel", s.anthropicCancel)
	return mux
}

// batchAuth checks the key and version as the synchronous endpoints do;
// false when it answered an error.
func (s *Server) batchAuth(w http.ResponseWriter, r *http.Request, format string) bool {
	if e, ok := s.checkKey(format, r.Header); !ok {
		s.finish(nil, http.StatusUnauthorized, func(st *Stats) { st.Unauthorized++ })
		writeError(w, format, http.StatusUnauthorized, e, 0)
		return false
	}
	if format == Anthropic && r.Header.Get("anthropic-version") == "" {
		s.batchFail(w, format, http.StatusBadRequest, apiError{Type: "invalid_request_error", Message: "anthropic-version: header is required"})
		return false
	}
	return true
}

// requestKey is the API key a request carries in format's header.
func requestKey(format string, r *http.Request) string {
	if format == Anthropic {
		return r.Header.Get("x-api-key")
	}
	key, _ := cutPrefixFold(r.Header.Get("Authorization"), "Bearer ")
	return key
}

// yours reports whether what owner made may be seen with r's key: always,
// unless BatchAPIConfig.PerKey keeps each key to its own.
func (s *Server) yours(r *http.Request, format, owner string) bool {
	return !s.cfg.BatchAPI.PerKey || requestKey(format, r) == owner
}

// visibleBatch is lookBatch for r's key: nil for a batch of another key
// under BatchAPIConfig.PerKey, as for one that does not exist.
func (s *Server) visibleBatch(r *http.Request, format, id string) *fakeBatch {
	s.mu.Lock()
	b := s.batches.byID[id]
	s.mu.Unlock()
	if b == nil || !s.yours(r, format, b.owner) {
		return nil
	}
	return s.lookBatch(format, id)
}

// openAINoBatch is OpenAI's answer to a batch id the key cannot see: the
// same for one of another project as for one that never was.
func (s *Server) openAINoBatch(w http.ResponseWriter, id string) {
	s.batchFail(w, OpenAI, http.StatusNotFound, apiError{Type: "invalid_request_error", Message: fmt.Sprintf("No batch found with id '%s'.", id)})
}

func (s *Server) batchFail(w http.ResponseWriter, format string, status int, e apiError) {
	s.finish(nil, status, func(st *Stats) {
		if status == http.StatusNotFound {
			st.NotFound++
		} else {
			st.BadRequest++
		}
	})
	writeError(w, format, status, e, 0)
}

func (s *Server) batchOK(w http.ResponseWriter, body any) {
	s.batchOKCounting(w, body, nil)
}

// batchOKCounting answers body, counting it in BatchCalls and with count.
func (s *Server) batchOKCounting(w http.ResponseWriter, body any, count func(*Stats)) {
	s.finish(nil, http.StatusOK, func(st *Stats) {
		st.BatchCalls++
		if count != nil {
			count(st)
		}
	})
	b, err := json.Marshal(body)
	if err != nil {
		panic(err) // plain strings, numbers and raw JSON always marshal
	}
	writeRaw(w, http.StatusOK, b)
}

func (s *Server) nextBatchID(prefix string) string {
	s.batches.seq++
	return fmt.Sprintf("%s%06d", prefix, s.batches.seq)
}

func (s *Server) openAIUpload(w http.ResponseWriter, r *http.Request) {
	if !s.batchAuth(w, r, OpenAI) {
		return
	}
	bad := func(msg string) {
		s.batchFail(w, OpenAI, http.StatusBadRequest, apiError{Type: "invalid_request_error", Message: msg})
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "multipart/form-data" {
		bad("Invalid file format. Send multipart/form-data with 'file' and 'purpose'.")
		return
	}
	if err := r.ParseMultipartForm(batchAPIMaxMultipartSize); err != nil {
		bad("Could not parse multipart form: " + err.Error())
		return
	}
	if p := r.FormValue("purpose"); p != "batch" {
		bad(fmt.Sprintf("Invalid purpose %q; this fake takes 'batch'.", p))
		return
	}
	f, hdr, err := r.FormFile("file")
	if err != nil {
		bad("Missing required parameter: 'file'.")
		return
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		bad("Could not read the file.")
		return
	}
	s.mu.Lock()
	id := s.nextBatchID("file-fake")
	s.batches.files[id] = data
	if s.batches.owners == nil {
		s.batches.owners = map[string]string{}
	}
	s.batches.owners[id] = requestKey(OpenAI, r)
	now := s.now()
	s.mu.Unlock()
	s.batchOK(w, map[string]any{"id": id, "object": "file", "bytes": len(data), "created_at": now.Unix(),
		"filename": hdr.Filename, "purpose": "batch", "status": "processed", "status_details": nil})
}

func (s *Server) openAIFileContent(w http.ResponseWriter, r *http.Request) {
	if !s.batchAuth(w, r, OpenAI) {
		return
	}
	s.mu.Lock()
	data, ok := s.batches.files[r.PathValue("id")]
	owner := s.batches.owners[r.PathValue("id")]
	s.mu.Unlock()
	if !ok || !s.yours(r, OpenAI, owner) {
		s.batchFail(w, OpenAI, http.StatusNotFound, apiError{Type: "invalid_request_error", Message: fmt.Sprintf("No such File object: %s", r.PathValue("id"))})
		return
	}
	s.finish(nil, http.StatusOK, func(st *Stats) { st.BatchCalls++ })
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(http.StatusOK)
	w.Write(data) //nolint:errcheck // the client may be gone
}

func (s *Server) openAICreate(w http.ResponseWriter, r *http.Request) {
	if !s.batchAuth(w, r, OpenAI) {
		return
	}
	var in struct {
		InputFileID      string            `json:"input_file_id"`
		Endpoint         string            `json:"endpoint"`
		CompletionWindow string            `json:"completion_window"`
		Metadata         map[string]string `json:"metadata"`
	}
	bad := func(param, msg string) {
		s.batchFail(w, OpenAI, http.StatusBadRequest, apiError{Type: "invalid_request_error", Param: param, Message: msg})
	}
	if body, err := io.ReadAll(r.Body); err != nil || json.Unmarshal(body, &in) != nil {
		bad("", "We could not parse the JSON body of your request.")
		return
	}
	switch {
	case in.Endpoint != openAIBatchEndpoint && in.Endpoint != ResponsesPath:
		bad("endpoint", fmt.Sprintf("Invalid value: '%s'. This fake serves '%s' and '%s'.", in.Endpoint, openAIBatchEndpoint, ResponsesPath))
		return
	case in.CompletionWindow != openAIBatchWindow:
		bad("completion_window", fmt.Sprintf("Invalid value: '%s'. Supported values are: '24h'.", in.CompletionWindow))
		return
	case len(in.Metadata) > openAIMetadataPairs:
		bad("metadata", fmt.Sprintf("Invalid 'metadata': too many properties. Expected an object with at most %d properties, but got an object with %d properties instead.", openAIMetadataPairs, len(in.Metadata)))
		return
	}
	for k, v := range in.Metadata {
		if len(k) > openAIMetadataKeyChars || len(v) > openAIMetadataValueChars {
			bad("metadata", fmt.Sprintf("Invalid 'metadata': keys are at most %d characters and values at most %d.", openAIMetadataKeyChars, openAIMetadataValueChars))
			return
		}
	}
	s.mu.Lock()
	data, ok := s.batches.files[in.InputFileID]
	owner := s.batches.owners[in.InputFileID]
	s.mu.Unlock()
	if !ok || !s.yours(r, OpenAI, owner) {
		s.batchFail(w, OpenAI, http.StatusNotFound, apiError{Type: "invalid_request_error", Message: fmt.Sprintf("No such File object: %s", in.InputFileID)})
		return
	}
	b := &fakeBatch{format: OpenAI, owner: requestKey(OpenAI, r), inputFile: in.InputFileID, endpoint: in.Endpoint, metadata: in.Metadata}
	seen := map[string]bool{}
	for n, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var l struct {
			CustomID string          `json:"custom_id"`
			Method   string          `json:"method"`
			URL      string          `json:"url"`
			Body     json.RawMessage `json:"body"`
		}
		invalid := func(code, msg string) {
			line := n + 1
			b.invalid = append(b.invalid, batchLineError{Code: code, Message: msg, Line: &line})
		}
		switch {
		case json.Unmarshal(line, &l) != nil:
			invalid("invalid_json", "This line is not parseable as valid JSON.")
		case l.CustomID == "":
			invalid("missing_required_parameter", "Missing required parameter: 'custom_id'.")
		case seen[l.CustomID]:
			invalid("duplicate_custom_id", fmt.Sprintf("The custom_id for this request is a duplicate of another request: %s", l.CustomID))
		case l.Method != http.MethodPost:
			invalid("invalid_method", "This line's method must be POST.")
		case l.URL != in.Endpoint:
			invalid("mismatched_endpoint", fmt.Sprintf("The provided endpoint %q does not match the batch's %q.", l.URL, in.Endpoint))
		default:
			seen[l.CustomID] = true
			b.items = append(b.items, batchEntry{customID: l.CustomID, body: l.Body})
			if req, e := parseAt(in.Endpoint, l.Body); e == nil {
				b.tokens += s.promptTokens(req.system, req.messages)
			}
		}
	}
	if len(b.items) == 0 && len(b.invalid) == 0 {
		one := 1
		b.invalid = append(b.invalid, batchLineError{Code: "empty_file", Message: "The input file is empty.", Line: &one})
	}
	if s.createBatch(b, "batch_fake") {
		s.loseAnswer(w, OpenAI)
		return
	}
	s.batchOK(w, s.openAIBatchObject(b))
}

// createBatch keeps b as a new batch; lost is true when
// BatchAPIConfig.LoseCreate picks this creation. An OpenAI batch the queue
// has no room for is kept failed, as OpenAI keeps it.
func (s *Server) createBatch(b *fakeBatch, prefix string) (lost bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b.id = s.nextBatchID(prefix)
	b.created, b.runs = s.now(), s.cfg.BatchAPI.Processing
	if limit := s.cfg.BatchAPI.QueueTokens; b.format == OpenAI && limit > 0 && len(b.invalid) == 0 {
		if queued := s.queued(OpenAI, func(q *fakeBatch) int { return q.tokens }); queued+b.tokens > limit {
			b.invalid = []batchLineError{{Code: "token_limit_exceeded", Message: fmt.Sprintf(
				"Enqueued token limit reached for %s in organization org-fake. Limit: %d enqueued tokens. Please try submitting fewer tasks or try again later.",
				s.batchModel(b), limit)}}
			s.stats.BatchesRefused++
		}
	}
	s.batches.byID[b.id] = b
	s.batches.created = append(s.batches.created, b)
	s.stats.BatchesCreated++
	if len(b.invalid) == 0 {
		s.stats.BatchItems += len(b.items)
	}
	return s.cfg.BatchAPI.LoseCreate != nil && s.cfg.BatchAPI.LoseCreate(len(s.batches.created))
}

// SetBatchProcessing changes BatchAPIConfig.Processing for the batches
// created from now on: a test can keep one batch running for long while
// others end at once.
func (s *Server) SetBatchProcessing(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cfg.BatchAPI.Processing = d
}

// queued adds up size over the batches of format still running: neither
// ended (Processing has not passed), canceled nor failed. Called with
// s.mu held.
func (s *Server) queued(format string, size func(*fakeBatch) int) int {
	now, n := s.now(), 0
	for _, q := range s.batches.created {
		if q.format == format && !q.ended && q.canceledAt.IsZero() && len(q.invalid) == 0 && now.Before(q.created.Add(q.runs)) {
			n += size(q)
		}
	}
	return n
}

// batchModel is the model of b's first item, as the queue's error names it.
func (s *Server) batchModel(b *fakeBatch) string {
	var m struct {
		Model string `json:"model"`
	}
	if len(b.items) > 0 {
		json.Unmarshal(b.items[0].body, &m) //nolint:errcheck // an unreadable body names no model
	}
	return m.Model
}

// loseAnswer answers a request whose work was done with the provider's
// 500, as a client sees an answer lost after the server acted.
func (s *Server) loseAnswer(w http.ResponseWriter, format string) {
	s.finish(nil, http.StatusInternalServerError, func(st *Stats) { st.ServerErrors++ })
	e := apiError{Type: "api_error", Message: "Internal server error"}
	if format == OpenAI {
		e = apiError{Type: "server_error", Message: "The server had an error while processing your request. Sorry about that!"}
	}
	writeError(w, format, http.StatusInternalServerError, e, 0)
}

// listBatches answers a list endpoint: format's batches newest first, a
// page of the limit asked for (20 unless asked) after the cursor (OpenAI
// "after", Anthropic "after_id"). A cursor naming no batch of the format
// is a 400 here, so that a client that loses its place is caught rather
// than handed an empty page.
func (s *Server) listBatches(w http.ResponseWriter, r *http.Request, format string) {
	if !s.batchAuth(w, r, format) {
		return
	}
	bad := func(param, msg string) {
		s.batchFail(w, format, http.StatusBadRequest, apiError{Type: "invalid_request_error", Param: param, Message: msg})
	}
	q := r.URL.Query()
	maxLimit, cursorParam := openAIBatchListMax, "after"
	if format == Anthropic {
		maxLimit, cursorParam = anthropicBatchListMax, "after_id"
	}
	limit := batchListDefault
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxLimit {
			bad("limit", fmt.Sprintf("Invalid 'limit': %q is not an integer from 1 to %d.", v, maxLimit))
			return
		}
		limit = n
	}
	cursor := q.Get(cursorParam)
	s.mu.Lock()
	var newestFirst []string
	for i := len(s.batches.created) - 1; i >= 0; i-- {
		if b := s.batches.created[i]; b.format == format && s.yours(r, format, b.owner) {
			newestFirst = append(newestFirst, b.id)
		}
	}
	s.mu.Unlock()
	if cursor != "" {
		i := slices.Index(newestFirst, cursor)
		if i < 0 {
			bad(cursorParam, fmt.Sprintf("Invalid '%s': no batch %s.", cursorParam, cursor))
			return
		}
		newestFirst = newestFirst[i+1:]
	}
	page := newestFirst[:min(limit, len(newestFirst))]
	data := make([]map[string]any, 0, len(page))
	for _, id := range page {
		// A list is a look like any other: a batch due ends now.
		b := s.lookBatch(format, id)
		if format == OpenAI {
			data = append(data, s.openAIBatchObject(b))
		} else {
			data = append(data, s.anthropicBatchObject(r, b))
		}
	}
	var first, last any
	if len(page) > 0 {
		first, last = page[0], page[len(page)-1]
	}
	body := map[string]any{"data": data, "has_more": len(newestFirst) > len(page), "first_id": first, "last_id": last}
	if format == OpenAI {
		body["object"] = "list"
	}
	s.batchOKCounting(w, body, func(st *Stats) { st.BatchLists++ })
}

// lookBatch finds batch id of format and ends it if it is due; nil when
// there is none.
func (s *Server) lookBatch(format, id string) *fakeBatch {
	s.mu.Lock()
	b := s.batches.byID[id]
	if b == nil || b.format != format {
		s.mu.Unlock()
		return nil
	}
	now := s.now()
	due := !b.canceledAt.IsZero() || len(b.invalid) > 0 || !now.Before(b.created.Add(b.runs))
	s.mu.Unlock()
	if due {
		// Answering calls Config.Answer and may take the lock: outside it,
		// and once, however many look at the same time.
		b.once.Do(func() { s.endBatch(b) })
	}
	return b
}

// endBatch answers every item of b.
func (s *Server) endBatch(b *fakeBatch) {
	s.mu.Lock()
	canceled := !b.canceledAt.IsZero()
	cfg := s.cfg.BatchAPI
	type plan struct {
		entry             batchEntry
		cancel, expire, e bool
		id                int
	}
	plans := make([]plan, len(b.items))
	for i, it := range b.items {
		s.seq++
		p := plan{entry: it, id: s.seq, cancel: canceled}
		if !canceled {
			p.expire = cfg.Expire != nil && cfg.Expire(it.customID)
			p.e = !p.expire && cfg.Errored != nil && cfg.Errored(it.customID)
		}
		plans[i] = p
	}
	now := s.now()
	s.mu.Unlock()

	var output, errs bytes.Buffer
	var counts batchCounts
	expired := false
	for _, p := range plans {
		var status int
		var body []byte
		kind := "succeeded"
		switch {
		case len(b.invalid) > 0:
			continue
		case p.cancel:
			kind = "canceled"
		case p.expire:
			kind, expired = "expired", true
		case p.e:
			kind, status = "errored", http.StatusInternalServerError
			e := apiError{Type: "api_error", Message: "Internal server error"}
			if b.format == OpenAI {
				e = apiError{Type: "server_error", Message: "The server had an error processing your request."}
			}
			body = errorJSON(b.format, e, p.id)
		default:
			var parsed request
			var perr *apiError
			if b.format == OpenAI {
				parsed, perr = parseAt(b.endpoint, p.entry.body)
			} else {
				parsed, perr = parseAnthropic(p.entry.body)
			}
			if perr != nil {
				kind, status = "errored", http.StatusBadRequest
				body = errorJSON(b.format, *perr, p.id)
				break
			}
			path := b.endpoint
			if b.format == Anthropic {
				path = AnthropicPath
			}
			rec := Received{Format: b.format, Path: path, At: now, Model: parsed.model, System: parsed.system, Messages: parsed.messages,
				MaxTokens: parsed.maxTokens, Temperature: parsed.temperature, Body: p.entry.body}
			status, body = http.StatusOK, s.answerAt(path, b.format, parsed, rec, s.promptTokens(parsed.system, parsed.messages), p.id)
		}
		switch kind {
		case "succeeded":
			counts.succeeded++
		case "errored":
			counts.errored++
		case "canceled":
			counts.canceled++
		case "expired":
			counts.expired++
		}
		if b.format == OpenAI {
			line := map[string]any{"id": fmt.Sprintf("batch_req_fake%06d", p.id), "custom_id": p.entry.customID, "response": nil, "error": nil}
			switch kind {
			case "canceled":
				line["error"] = map[string]string{"code": "batch_cancelled", "message": "This request was cancelled before it was executed."}
			case "expired":
				line["error"] = map[string]string{"code": "batch_expired", "message": "This request could not be executed before the completion window expired."}
			default:
				line["response"] = map[string]any{"status_code": status, "request_id": requestID(p.id), "body": json.RawMessage(body)}
			}
			dst := &errs
			if kind == "succeeded" {
				dst = &output
			}
			dst.Write(mustJSON(line))
			dst.WriteByte('\n')
			continue
		}
		result := map[string]any{"type": kind}
		switch kind {
		case "succeeded":
			result["message"] = json.RawMessage(body)
		case "errored":
			result["error"] = json.RawMessage(body)
		}
		output.Write(mustJSON(map[string]any{"custom_id": p.entry.customID, "result": result}))
		output.WriteByte('\n')
	}

	if tamper := cfg.Tamper; tamper != nil && output.Len() > 0 {
		// A copy: the lines are written back into the buffer they came from.
		lines := tamper(b.format, bytes.Split(bytes.TrimSuffix(bytes.Clone(output.Bytes()), []byte("\n")), []byte("\n")))
		output.Reset()
		for _, l := range lines {
			output.Write(l)
			output.WriteByte('\n')
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	b.ended, b.endedAt, b.counts, b.expired = true, s.now(), counts, expired && !canceled
	b.output, b.errors = output.Bytes(), errs.Bytes()
	s.stats.BatchItemsAnswered += counts.succeeded + counts.errored
	if b.format == OpenAI && len(b.invalid) == 0 {
		if s.batches.owners == nil {
			s.batches.owners = map[string]string{}
		}
		if output.Len() > 0 {
			b.outputID = s.nextBatchID("file-fake")
			s.batches.files[b.outputID], s.batches.owners[b.outputID] = b.output, b.owner
		}
		if errs.Len() > 0 {
			b.errorID = s.nextBatchID("file-fake")
			s.batches.files[b.errorID], s.batches.owners[b.errorID] = b.errors, b.owner
		}
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // plain strings, numbers and raw JSON always marshal
	}
	return b
}

func (s *Server) openAIRetrieve(w http.ResponseWriter, r *http.Request) {
	if !s.batchAuth(w, r, OpenAI) {
		return
	}
	b := s.visibleBatch(r, OpenAI, r.PathValue("id"))
	if b == nil {
		s.openAINoBatch(w, r.PathValue("id"))
		return
	}
	s.batchOK(w, s.openAIBatchObject(b))
}

func (s *Server) openAICancel(w http.ResponseWriter, r *http.Request) {
	if !s.batchAuth(w, r, OpenAI) {
		return
	}
	b, ok := s.cancelBatch(r, OpenAI, r.PathValue("id"))
	switch {
	case b == nil:
		s.openAINoBatch(w, r.PathValue("id"))
	case !ok:
		s.batchFail(w, OpenAI, http.StatusBadRequest, apiError{Type: "invalid_request_error", Message: fmt.Sprintf("Cannot cancel a batch with status '%s'.", s.openAIBatchObject(b)["status"])})
	default:
		s.batchOK(w, s.openAIBatchObject(b))
	}
}

// cancelBatch marks batch id canceled unless it has ended; ok is false
// for a batch that ended already.
func (s *Server) cancelBatch(r *http.Request, format, id string) (b *fakeBatch, ok bool) {
	if b = s.visibleBatch(r, format, id); b == nil {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if b.ended {
		return b, false
	}
	if b.canceledAt.IsZero() {
		b.canceledAt = s.now()
	}
	return b, true
}

func (s *Server) openAIBatchObject(b *fakeBatch) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	nullable := func(id string) any {
		if id == "" {
			return nil
		}
		return id
	}
	unix := func(t time.Time) any {
		if t.IsZero() {
			return nil
		}
		return t.Unix()
	}
	status, counts := "in_progress", map[string]int{"total": len(b.items), "completed": 0, "failed": 0}
	var errs any
	var endedAt = map[string]any{"completed_at": nil, "failed_at": nil, "expired_at": nil, "cancelled_at": nil}
	switch {
	case len(b.invalid) > 0:
		status = "failed"
		errs = map[string]any{"object": "list", "data": b.invalid}
		endedAt["failed_at"] = unix(b.created)
	case b.ended:
		counts["completed"], counts["failed"] = b.counts.succeeded, b.counts.errored
		status = "completed"
		if !b.canceledAt.IsZero() {
			status = "cancelled"
		} else if b.expired {
			status = "expired"
		}
		endedAt[status+"_at"] = unix(b.endedAt)
	case !b.canceledAt.IsZero():
		status = "cancelling"
	}
	o := map[string]any{
		"id": b.id, "object": "batch", "endpoint": b.endpoint, "errors": errs, "input_file_id": b.inputFile,
		"completion_window": openAIBatchWindow, "status": status, "output_file_id": nullable(b.outputID), "error_file_id": nullable(b.errorID),
		"created_at": b.created.Unix(), "in_progress_at": b.created.Unix(), "expires_at": b.created.Add(24 * time.Hour).Unix(),
		"finalizing_at": unix(b.endedAt), "cancelling_at": unix(b.canceledAt), "request_counts": counts, "metadata": b.metadata,
	}
	for k, v := range endedAt {
		o[k] = v
	}
	return o
}

func (s *Server) anthropicCreate(w http.ResponseWriter, r *http.Request) {
	if !s.batchAuth(w, r, Anthropic) {
		return
	}
	bad := func(msg string) {
		s.batchFail(w, Anthropic, http.StatusBadRequest, apiError{Type: "invalid_request_error", Message: msg})
	}
	var in struct {
		Requests *[]struct {
			CustomID *string         `json:"custom_id"`
			Params   json.RawMessage `json:"params"`
		} `json:"requests"`
	}
	if body, err := io.ReadAll(r.Body); err != nil || json.Unmarshal(body, &in) != nil {
		bad("There was an issue with the format of your request body: invalid JSON")
		return
	}
	if in.Requests == nil {
		bad("requests: Field required")
		return
	}
	if len(*in.Requests) == 0 {
		bad("requests: List should have at least 1 item after validation, not 0")
		return
	}
	if limit := s.cfg.BatchAPI.QueueRequests; limit > 0 {
		s.mu.Lock()
		queued := s.queued(Anthropic, func(q *fakeBatch) int { return len(q.items) })
		if queued+len(*in.Requests) > limit {
			s.stats.BatchesRefused++
			s.mu.Unlock()
			s.finish(nil, http.StatusTooManyRequests, func(st *Stats) { st.RateLimited++ })
			writeError(w, Anthropic, http.StatusTooManyRequests, apiError{Type: "rate_limit_error", Message: fmt.Sprintf(
				"Number of batch requests in the processing queue would exceed your organization's limit of %d. Please wait for batches to finish processing.", limit)}, 0)
			return
		}
		s.mu.Unlock()
	}
	b := &fakeBatch{format: Anthropic, owner: requestKey(Anthropic, r)}
	seen := map[string]bool{}
	for i, rq := range *in.Requests {
		switch {
		case rq.CustomID == nil || *rq.CustomID == "":
			bad(fmt.Sprintf("requests.%d.custom_id: Field required", i))
			return
		case seen[*rq.CustomID]:
			bad(fmt.Sprintf("Duplicate custom_id: %s. Each request in a batch must have a unique custom_id.", *rq.CustomID))
			return
		case len(rq.Params) == 0 || rq.Params[0] != '{':
			bad(fmt.Sprintf("requests.%d.params: Input should be a valid dictionary", i))
			return
		}
		seen[*rq.CustomID] = true
		b.items = append(b.items, batchEntry{customID: *rq.CustomID, body: rq.Params})
	}
	if s.createBatch(b, "msgbatch_fake") {
		s.loseAnswer(w, Anthropic)
		return
	}
	s.batchOK(w, s.anthropicBatchObject(r, b))
}

func (s *Server) anthropicRetrieve(w http.ResponseWriter, r *http.Request) {
	if !s.batchAuth(w, r, Anthropic) {
		return
	}
	b := s.visibleBatch(r, Anthropic, r.PathValue("id"))
	if b == nil {
		s.batchFail(w, Anthropic, http.StatusNotFound, apiError{Type: "not_found_error", Message: "Not Found"})
		return
	}
	s.batchOK(w, s.anthropicBatchObject(r, b))
}

func (s *Server) anthropicResults(w http.ResponseWriter, r *http.Request) {
	if !s.batchAuth(w, r, Anthropic) {
		return
	}
	b := s.visibleBatch(r, Anthropic, r.PathValue("id"))
	s.mu.Lock()
	ended := b != nil && b.ended
	var data []byte
	if ended {
		data = b.output
	}
	s.mu.Unlock()
	if !ended {
		s.batchFail(w, Anthropic, http.StatusNotFound, apiError{Type: "not_found_error", Message: "Not Found"})
		return
	}
	s.finish(nil, http.StatusOK, func(st *Stats) { st.BatchCalls++ })
	w.Header().Set("Content-Type", "application/binary")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(http.StatusOK)
	w.Write(data) //nolint:errcheck // the client may be gone
}

func (s *Server) anthropicCancel(w http.ResponseWriter, r *http.Request) {
	if !s.batchAuth(w, r, Anthropic) {
		return
	}
	b, ok := s.cancelBatch(r, Anthropic, r.PathValue("id"))
	switch {
	case b == nil:
		s.batchFail(w, Anthropic, http.StatusNotFound, apiError{Type: "not_found_error", Message: "Not Found"})
	case !ok:
		s.batchFail(w, Anthropic, http.StatusBadRequest, apiError{Type: "invalid_request_error", Message: fmt.Sprintf("Batch %s has already ended and cannot be canceled.", b.id)})
	default:
		s.batchOK(w, s.anthropicBatchObject(r, b))
	}
}

func (s *Server) anthropicBatchObject(r *http.Request, b *fakeBatch) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	stamp := func(t time.Time) any {
		if t.IsZero() {
			return nil
		}
		return t.UTC().Format(time.RFC3339Nano)
	}
	status := "in_progress"
	counts := map[string]int{"processing": len(b.items), "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
	var results any
	switch {
	case b.ended:
		status = "ended"
		counts = map[string]int{"processing": 0, "succeeded": b.counts.succeeded, "errored": b.counts.errored,
			"canceled": b.counts.canceled, "expired": b.counts.expired}
		results = "http://" + r.Host + AnthropicBatchesPath + "/" + b.id + "/results"
	case !b.canceledAt.IsZero():
		status = "canceling"
	}
	var ended time.Time
	if b.ended {
		ended = b.endedAt
	}
	return map[string]any{
		"id": b.id, "type": "message_batch", "processing_status": status, "request_counts": counts,
		"ended_at": stamp(ended), "created_at": stamp(b.created), "expires_at": stamp(b.created.Add(24 * time.Hour)),
		"archived_at": nil, "cancel_initiated_at": stamp(b.canceledAt), "results_url": results,
	}
}
