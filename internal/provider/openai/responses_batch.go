package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"time"

	"github.com/digest-cli/digest/internal/provider"
)

// The Batch API takes Responses requests as it takes chat completions:
// lines {"custom_id", "method": "POST", "url": "/v1/responses", "body"}
// in a file of a batch created with "endpoint": "/v1/responses", whose
// output lines carry the Responses answer in response.body. Polling,
// canceling and listing are the same for both wires.

// answerParser reads one success body of a wire: Client.parseAnswer for
// Chat Completions, ResponsesClient.parseAnswer for Responses.
type answerParser func(req provider.Request, status int, header http.Header, limits *provider.Limits, data []byte) (provider.Response, error)

type responsesBatchLine struct {
	CustomID string           `json:"custom_id"`
	Method   string           `json:"method"`
	URL      string           `json:"url"`
	Body     responsesRequest `json:"body"`
}

// batchLineOf is item's line of the input file, newline included.
func (r *ResponsesClient) batchLineOf(it provider.BatchItem) ([]byte, error) {
	b, err := json.Marshal(responsesBatchLine{CustomID: it.CustomID, Method: http.MethodPost, URL: responsesEndpoint, Body: r.body(it.Request)})
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// SplitBatch cuts items into batches the Batch API takes: at most
// MaxBatchRequests lines and MaxBatchBytes bytes of input file each.
func (r *ResponsesClient) SplitBatch(items []provider.BatchItem) ([][]provider.BatchItem, error) {
	return provider.SplitBatches(items, MaxBatchRequests, MaxBatchBytes, func(it provider.BatchItem) (int, error) {
		line, err := r.batchLineOf(it)
		return len(line), err
	})
}

// Submit uploads items as an input file of /v1/responses lines and starts
// a batch over it, labelled in its metadata.
func (r *ResponsesClient) Submit(ctx context.Context, label string, items []provider.BatchItem) (provider.Batch, error) {
	return r.chat.submitBatch(ctx, label, items, r.batchLineOf, responsesEndpoint)
}

// Poll reports batch id's state.
func (r *ResponsesClient) Poll(ctx context.Context, id string) (provider.Batch, error) {
	return r.chat.Poll(ctx, id)
}

// Cancel asks for batch id to stop.
func (r *ResponsesClient) Cancel(ctx context.Context, id string) error {
	return r.chat.Cancel(ctx, id)
}

// List reports the batches created at or after since, newest first.
func (r *ResponsesClient) List(ctx context.Context, since time.Time) ([]provider.Batch, error) {
	return r.chat.List(ctx, since)
}

// Results reads the batch's output file, then its error file, each answer
// by the Responses parser.
func (r *ResponsesClient) Results(ctx context.Context, b provider.Batch, sent map[string]provider.Request) iter.Seq2[provider.BatchResult, error] {
	return r.chat.batchResults(ctx, b, sent, r.parseAnswer)
}

// submitBatch is Submit for any wire: lineOf encodes an item as a line of
// the input file, endpoint is the path every line calls.
func (c *Client) submitBatch(ctx context.Context, label string, items []provider.BatchItem, lineOf func(provider.BatchItem) ([]byte, error), endpoint string) (provider.Batch, error) {
	if err := provider.CheckBatchIDs(c.name, items); err != nil {
		return provider.Batch{}, err
	}
	if len(label) > maxLabelBytes {
		// Refused here, not by the API: by then the input file would be
		// uploaded for nothing.
		return provider.Batch{}, &provider.Error{Provider: c.name, Kind: provider.Permanent,
			Message: fmt.Sprintf("a batch label of %d bytes; the Batch API keeps %d", len(label), maxLabelBytes), Hint: "Try: a shorter label"}
	}
	if len(items) == 0 || len(items) > MaxBatchRequests {
		return provider.Batch{}, &provider.Error{Provider: c.name, Kind: provider.Permanent,
			Message: fmt.Sprintf("a batch of %d requests; the Batch API takes 1 to %d", len(items), MaxBatchRequests), Hint: "Try: cut the list with SplitBatch"}
	}
	var file bytes.Buffer
	for _, it := range items {
		line, err := lineOf(it)
		if err != nil {
			return provider.Batch{}, &provider.Error{Provider: c.name, Kind: provider.Permanent, Message: fmt.Sprintf("cannot encode batch item %q", it.CustomID), Err: err}
		}
		file.Write(line)
	}
	if file.Len() > MaxBatchBytes {
		return provider.Batch{}, &provider.Error{Provider: c.name, Kind: provider.Permanent,
			Message: fmt.Sprintf("a batch input file of %d bytes; the Batch API takes %d", file.Len(), MaxBatchBytes), Hint: "Try: cut the list with SplitBatch"}
	}
	model := items[0].Request.Model
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	if err := mw.WriteField("purpose", "batch"); err != nil {
		return provider.Batch{}, err
	}
	part, err := mw.CreatePart(textproto.MIMEHeader{
		"Content-Disposition": {`form-data; name="file"; filename="batch.jsonl"`},
		"Content-Type":        {"application/jsonl"},
	})
	if err != nil {
		return provider.Batch{}, err
	}
	part.Write(file.Bytes()) //nolint:errcheck // a bytes.Buffer does not fail
	if err := mw.Close(); err != nil {
		return provider.Batch{}, err
	}
	resp, data, err := provider.Send(ctx, c.http, c.name, c.baseURL, http.MethodPost, c.baseURL+"/files", c.authHeader(), mw.FormDataContentType(), form.Bytes())
	if err != nil {
		return provider.Batch{}, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return provider.Batch{}, c.statusError(resp.StatusCode, resp.Header, data, nil, model)
	}
	var uploaded struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(data, &uploaded); err != nil {
		return provider.Batch{}, provider.UnreadableBody(c.name, resp.StatusCode, nil, data, err)
	}
	if uploaded.ID == "" {
		return provider.Batch{}, provider.Unreadable(c.name, resp.StatusCode, nil, "the uploaded file has no id")
	}
	create := map[string]any{"input_file_id": uploaded.ID, "endpoint": endpoint, "completion_window": "24h"}
	if label != "" {
		create["metadata"] = map[string]string{labelKey: label}
	}
	resp, data, err = provider.Post(ctx, c.http, c.name, c.baseURL, c.baseURL+"/batches", c.authHeader(), create)
	return c.readBatch(resp, data, err, model)
}

// batchResults is Results for any wire: parse reads each success body.
func (c *Client) batchResults(ctx context.Context, b provider.Batch, sent map[string]provider.Request, parse answerParser) iter.Seq2[provider.BatchResult, error] {
	return func(yield func(provider.BatchResult, error) bool) {
		if !b.Status.Done() {
			yield(provider.BatchResult{}, &provider.Error{Provider: c.name, Kind: provider.Permanent,
				Message: fmt.Sprintf("batch %s is %s: it has no results yet", b.ID, b.Status), Hint: "Try: Poll until it is done"})
			return
		}
		for _, id := range []string{b.OutputFileID, b.ErrorFileID} {
			if id == "" {
				continue
			}
			if !c.readResultsFile(ctx, id, sent, parse, yield) {
				return
			}
		}
	}
}

// readResultsFile yields the results in file id; false when yield asked
// to stop.
func (c *Client) readResultsFile(ctx context.Context, id string, sent map[string]provider.Request, parse answerParser, yield func(provider.BatchResult, error) bool) bool {
	h := c.authHeader()
	h.Set("Accept", "application/jsonl, application/json")
	resp, err := provider.Open(ctx, c.http, c.name, c.baseURL, http.MethodGet, c.baseURL+"/files/"+url.PathEscape(id)+"/content", h, "", nil)
	if err != nil {
		return yield(provider.BatchResult{}, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return yield(provider.BatchResult{}, c.statusError(resp.StatusCode, resp.Header, provider.ReadErrorBody(resp), nil, ""))
	}
	defer resp.Body.Close()
	line := func(data []byte) (provider.BatchResult, string) { return c.resultLine(data, sent, parse) }
	more := provider.YieldBatchLines(resp.Body, c.name, "file "+id, line, yield)
	if more && ctx.Err() != nil {
		return yield(provider.BatchResult{}, ctx.Err())
	}
	return more
}

// resultLine reads one line of an output or error file (the spec's
// BatchRequestOutput: custom_id, response {status_code, body}, error
// {code, message}), or says what is wrong with it.
func (c *Client) resultLine(data []byte, sent map[string]provider.Request, parse answerParser) (provider.BatchResult, string) {
	var line struct {
		CustomID string `json:"custom_id"`
		Response *struct {
			StatusCode int             `json:"status_code"`
			Body       json.RawMessage `json:"body"`
		} `json:"response"`
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &line); err != nil {
		return provider.BatchResult{}, provider.DescribeJSON("the line", data, err)
	}
	if line.CustomID == "" {
		return provider.BatchResult{}, "the line has no custom_id"
	}
	req, ok := sent[line.CustomID]
	if !ok {
		return provider.BatchResult{}, fmt.Sprintf("custom_id %q was not in the batch", provider.CleanMessage(line.CustomID, c.key))
	}
	res := provider.BatchResult{CustomID: line.CustomID}
	switch {
	case line.Error != nil:
		kind := provider.ItemErrored
		switch line.Error.Code {
		case "batch_expired":
			kind = provider.ItemExpired
		case "batch_cancelled":
			kind = provider.ItemCanceled
		}
		res.Err = &provider.ItemError{Kind: kind, Type: provider.CleanMessage(line.Error.Code, c.key), Message: provider.CleanMessage(line.Error.Message, c.key)}
	case line.Response == nil:
		return provider.BatchResult{}, "the line has neither a response nor an error"
	case line.Response.StatusCode < 200 || line.Response.StatusCode > 299:
		e := c.statusError(line.Response.StatusCode, http.Header{}, line.Response.Body, nil, req.Model)
		res.Err = &provider.ItemError{Kind: provider.ItemErrored, StatusCode: e.StatusCode, Type: e.Type, Message: e.Message}
	default:
		resp, err := parse(req, line.Response.StatusCode, http.Header{}, nil, line.Response.Body)
		if err != nil {
			res.Err = &provider.ItemError{Kind: provider.ItemErrored, StatusCode: line.Response.StatusCode, Message: err.Error()}
			var pe *provider.Error
			if errors.As(err, &pe) {
				res.Err.Type, res.Err.Message = pe.Type, pe.Message
			}
		} else {
			res.Response = resp
		}
	}
	return res, ""
}
