package openai

import (
	"bytes"
	"cmp"
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

// The Batch API's limits on one input file.
const (
	MaxBatchRequests = 50_000
	MaxBatchBytes    = 200 << 20
)

// batchEndpoint is the endpoint every line of an input file calls.
const batchEndpoint = "/v1/chat/completions"

// labelKey is the metadata key Submit's label goes under, and
// maxLabelBytes the longest value the API keeps there.
const (
	labelKey      = "digest_batch"
	maxLabelBytes = 512
)

// listPage is the most batches one list call answers.
const listPage = 100

var _ provider.Batcher = (*Client)(nil)

type batchLine struct {
	CustomID string      `json:"custom_id"`
	Method   string      `json:"method"`
	URL      string      `json:"url"`
	Body     chatRequest `json:"body"`
}

// batchLineOf is item's line of the input file, newline included: the
// bytes the file limit counts.
func (c *Client) batchLineOf(it provider.BatchItem) ([]byte, error) {
	b, err := json.Marshal(batchLine{CustomID: it.CustomID, Method: http.MethodPost, URL: batchEndpoint, Body: c.body(it.Request)})
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// SplitBatch cuts items into batches the Batch API takes: at most
// MaxBatchRequests lines and MaxBatchBytes bytes of input file each.
func (c *Client) SplitBatch(items []provider.BatchItem) ([][]provider.BatchItem, error) {
	return provider.SplitBatches(items, MaxBatchRequests, MaxBatchBytes, func(it provider.BatchItem) (int, error) {
		line, err := c.batchLineOf(it)
		return len(line), err
	})
}

// Submit uploads items as an input file and starts a batch over it,
// labelled in its metadata.
func (c *Client) Submit(ctx context.Context, label string, items []provider.BatchItem) (provider.Batch, error) {
	return c.submitBatch(ctx, label, items, c.batchLineOf, batchEndpoint)
}

// Poll reports batch id's state. A batch of another project than the
// key's is a 404, as one that does not exist.
func (c *Client) Poll(ctx context.Context, id string) (provider.Batch, error) {
	resp, data, err := provider.Send(ctx, c.http, c.name, c.baseURL, http.MethodGet, c.baseURL+"/batches/"+url.PathEscape(id), c.authHeader(), "", nil)
	b, err := c.readBatch(resp, data, err, "")
	return b, notFound(err)
}

// Cancel asks for batch id to stop; it ends cancelled within minutes.
func (c *Client) Cancel(ctx context.Context, id string) error {
	resp, data, err := provider.Send(ctx, c.http, c.name, c.baseURL, http.MethodPost, c.baseURL+"/batches/"+url.PathEscape(id)+"/cancel", c.authHeader(), "", nil)
	_, err = c.readBatch(resp, data, err, "")
	return notFound(err)
}

// notFound gives a 404 on a batch the hint that fits it: the key's project
// is not the one the batch was created in (a key sees its project's
// batches alone), rather than a wrong base URL, which listing the batches
// before anything is sent rules out.
func notFound(err error) error {
	var pe *provider.Error
	if errors.As(err, &pe) && pe.StatusCode == http.StatusNotFound {
		pe.Hint = "Try: an API key of the OpenAI project that created the batch"
	}
	return err
}

// List reports the batches created at or after since, newest first, as
// the API pages them. created_at counts whole seconds, so since is taken
// to its second: a batch made in since's second is not left out.
func (c *Client) List(ctx context.Context, since time.Time) ([]provider.Batch, error) {
	cutoff := since.Truncate(time.Second)
	var out []provider.Batch
	seen := map[string]bool{}
	after := ""
	for {
		u := fmt.Sprintf("%s/batches?limit=%d", c.baseURL, listPage)
		if after != "" {
			u += "&after=" + url.QueryEscape(after)
		}
		resp, data, err := provider.Send(ctx, c.http, c.name, c.baseURL, http.MethodGet, u, c.authHeader(), "", nil)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			return nil, c.statusError(resp.StatusCode, resp.Header, data, nil, "")
		}
		var page struct {
			Data    []batchObject `json:"data"`
			HasMore bool          `json:"has_more"`
			LastID  string        `json:"last_id"`
		}
		if err := json.Unmarshal(data, &page); err != nil {
			return nil, provider.UnreadableBody(c.name, resp.StatusCode, nil, data, err)
		}
		for _, o := range page.Data {
			b, problem := c.batchOf(o)
			if problem != "" {
				return nil, provider.Unreadable(c.name, resp.StatusCode, nil, "a listed batch: "+problem)
			}
			// A batch without created_at cannot be placed before since:
			// it is kept rather than ending the list on it.
			if !b.CreatedAt.IsZero() && b.CreatedAt.Before(cutoff) {
				return out, nil
			}
			out = append(out, b)
		}
		if !page.HasMore {
			return out, nil
		}
		if len(page.Data) == 0 {
			return nil, provider.Unreadable(c.name, resp.StatusCode, nil, "the batch list has more pages but this one is empty")
		}
		next := cmp.Or(page.LastID, page.Data[len(page.Data)-1].ID)
		if seen[next] {
			// A server that hands back a cursor twice would be paged forever.
			return nil, provider.Unreadable(c.name, resp.StatusCode, nil, fmt.Sprintf("the batch list pages after %q twice", provider.CleanMessage(next, c.key)))
		}
		seen[next], after = true, next
	}
}

func (c *Client) authHeader() http.Header {
	h := http.Header{}
	if c.key != "" {
		h.Set("Authorization", "Bearer "+c.key)
	}
	return h
}

type batchObject struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	CreatedAt    int64  `json:"created_at"`
	OutputFileID string `json:"output_file_id"`
	ErrorFileID  string `json:"error_file_id"`
	Metadata     struct {
		Label string `json:"digest_batch"`
	} `json:"metadata"`
	RequestCounts struct {
		Total     int `json:"total"`
		Completed int `json:"completed"`
		Failed    int `json:"failed"`
	} `json:"request_counts"`
	Errors struct {
		Data []struct {
			Code    string `json:"code"`
			Message string `json:"message"`
			Line    *int   `json:"line"`
		} `json:"data"`
	} `json:"errors"`
}

// statuses maps the Batch API's statuses to the neutral ones.
var statuses = map[string]provider.BatchStatus{
	"validating": provider.BatchInProgress, "in_progress": provider.BatchInProgress,
	"finalizing": provider.BatchInProgress, "cancelling": provider.BatchInProgress,
	"completed": provider.BatchEnded, "failed": provider.BatchFailed,
	"expired": provider.BatchExpired, "cancelled": provider.BatchCanceled,
}

// readBatch reads a batch object answered to a request.
func (c *Client) readBatch(resp *http.Response, data []byte, err error, model string) (provider.Batch, error) {
	if err != nil {
		return provider.Batch{}, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return provider.Batch{}, c.statusError(resp.StatusCode, resp.Header, data, nil, model)
	}
	var o batchObject
	if err := json.Unmarshal(data, &o); err != nil {
		return provider.Batch{}, provider.UnreadableBody(c.name, resp.StatusCode, nil, data, err)
	}
	b, problem := c.batchOf(o)
	if problem != "" {
		return provider.Batch{}, provider.Unreadable(c.name, resp.StatusCode, nil, problem)
	}
	return b, nil
}

// batchOf is the batch o describes, or what is wrong with it.
func (c *Client) batchOf(o batchObject) (provider.Batch, string) {
	status, ok := statuses[o.Status]
	if o.ID == "" || !ok {
		return provider.Batch{}, fmt.Sprintf("the batch has id %q and status %q, not a known one", o.ID, o.Status)
	}
	b := provider.Batch{ID: o.ID, Status: status, OutputFileID: o.OutputFileID, ErrorFileID: o.ErrorFileID,
		Label: o.Metadata.Label, Total: max(o.RequestCounts.Total, 0)}
	if o.CreatedAt > 0 {
		b.CreatedAt = time.Unix(o.CreatedAt, 0).UTC()
	}
	n := o.RequestCounts
	b.Counts.Succeeded, b.Counts.Errored = max(n.Completed, 0), max(n.Failed, 0)
	rest := max(n.Total-b.Counts.Succeeded-b.Counts.Errored, 0)
	switch status {
	case provider.BatchExpired:
		b.Counts.Expired = rest
	case provider.BatchCanceled:
		b.Counts.Canceled = rest
	case provider.BatchInProgress:
		b.Counts.Processing = rest
	}
	for _, e := range o.Errors.Data {
		b.QueueFull = b.QueueFull || status == provider.BatchFailed && e.Code == "token_limit_exceeded"
		msg := provider.CleanMessage(cmp.Or(e.Message, e.Code), c.key)
		if e.Line != nil {
			msg = fmt.Sprintf("line %d: %s", *e.Line, msg)
		}
		b.Message = cmp.Or(b.Message, msg)
	}
	return b, ""
}

// Results reads the batch's output file, then its error file.
func (c *Client) Results(ctx context.Context, b provider.Batch, sent map[string]provider.Request) iter.Seq2[provider.BatchResult, error] {
	return c.batchResults(ctx, b, sent, c.parseAnswer)
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
		return provider.Unsent(line.CustomID, provider.CleanMessage(line.CustomID, c.key))
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
