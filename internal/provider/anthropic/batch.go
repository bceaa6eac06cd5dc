package anthropic

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"time"

	"github.com/digest-cli/digest/internal/provider"
)

// The Message Batches API's limits on one batch.
const (
	MaxBatchRequests = 100_000
	MaxBatchBytes    = 256 << 20
)

var _ provider.Batcher = (*Client)(nil)

// listPage is the most batches one list call asks for.
const listPage = 100

type batchRequest struct {
	CustomID string          `json:"custom_id"`
	Params   messagesRequest `json:"params"`
}

// envelope is what a batch's body holds besides its requests: the
// `{"requests":[` and `]}` around them.
const envelope = len(`{"requests":[]}`)

func batchRequestOf(it provider.BatchItem) ([]byte, error) {
	return json.Marshal(batchRequest{CustomID: it.CustomID, Params: body(it.Request)})
}

// SplitBatch cuts items into batches the API takes: at most
// MaxBatchRequests requests and MaxBatchBytes bytes of body each.
func (c *Client) SplitBatch(items []provider.BatchItem) ([][]provider.BatchItem, error) {
	return provider.SplitBatches(items, MaxBatchRequests, MaxBatchBytes-envelope, func(it provider.BatchItem) (int, error) {
		b, err := batchRequestOf(it)
		return len(b) + 1, err // the comma between requests
	})
}

// Submit creates a batch of items. The label is not sent: a message batch
// has no metadata to keep it in.
func (c *Client) Submit(ctx context.Context, _ string, items []provider.BatchItem) (provider.Batch, error) {
	if err := provider.CheckBatchIDs(name, items); err != nil {
		return provider.Batch{}, err
	}
	if len(items) == 0 || len(items) > MaxBatchRequests {
		return provider.Batch{}, &provider.Error{Provider: name, Kind: provider.Permanent,
			Message: fmt.Sprintf("a batch of %d requests; the Message Batches API takes 1 to %d", len(items), MaxBatchRequests), Hint: "Try: cut the list with SplitBatch"}
	}
	data := []byte(`{"requests":[`)
	for i, it := range items {
		b, err := batchRequestOf(it)
		if err != nil {
			return provider.Batch{}, &provider.Error{Provider: name, Kind: provider.Permanent, Message: fmt.Sprintf("cannot encode batch item %q", it.CustomID), Err: err}
		}
		if i > 0 {
			data = append(data, ',')
		}
		data = append(data, b...)
	}
	data = append(data, "]}"...)
	if len(data) > MaxBatchBytes {
		return provider.Batch{}, &provider.Error{Provider: name, Kind: provider.Permanent,
			Message: fmt.Sprintf("a batch of %d bytes; the Message Batches API takes %d", len(data), MaxBatchBytes), Hint: "Try: cut the list with SplitBatch"}
	}
	resp, body, err := provider.Send(ctx, c.http, name, c.baseURL, http.MethodPost, c.batchesURL(), c.header(), "application/json", data)
	return c.readBatch(resp, body, err, items[0].Request.Model)
}

func (c *Client) batchesURL() string { return c.baseURL + "/v1/messages/batches" }

// Poll reports batch id's state. A batch of another workspace than the
// key's is a 404 not_found_error, as one that does not exist.
func (c *Client) Poll(ctx context.Context, id string) (provider.Batch, error) {
	resp, data, err := provider.Send(ctx, c.http, name, c.baseURL, http.MethodGet, c.batchesURL()+"/"+url.PathEscape(id), c.header(), "", nil)
	b, err := c.readBatch(resp, data, err, "")
	return b, notFound(err)
}

// Cancel asks for batch id to stop; it ends with its unanswered requests
// canceled.
func (c *Client) Cancel(ctx context.Context, id string) error {
	resp, data, err := provider.Send(ctx, c.http, name, c.baseURL, http.MethodPost, c.batchesURL()+"/"+url.PathEscape(id)+"/cancel", c.header(), "", nil)
	_, err = c.readBatch(resp, data, err, "")
	return notFound(err)
}

// notFound gives a 404 on a batch the hint that fits it: the key's
// workspace is not the one the batch was created in (a key sees its
// workspace's batches alone), rather than a wrong base URL, which listing
// the batches before anything is sent rules out.
func notFound(err error) error {
	var pe *provider.Error
	if errors.As(err, &pe) && pe.StatusCode == http.StatusNotFound {
		pe.Hint = "Try: an API key of the Anthropic workspace that created the batch"
	}
	return err
}

// List reports the batches created at or after since, newest first, as
// the API pages them.
func (c *Client) List(ctx context.Context, since time.Time) ([]provider.Batch, error) {
	var out []provider.Batch
	seen := map[string]bool{}
	after := ""
	for {
		u := fmt.Sprintf("%s?limit=%d", c.batchesURL(), listPage)
		if after != "" {
			u += "&after_id=" + url.QueryEscape(after)
		}
		resp, data, err := provider.Send(ctx, c.http, name, c.baseURL, http.MethodGet, u, c.header(), "", nil)
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
			return nil, provider.UnreadableBody(name, resp.StatusCode, nil, data, err)
		}
		for _, o := range page.Data {
			b, problem := batchOf(o)
			if problem != "" {
				return nil, provider.Unreadable(name, resp.StatusCode, nil, "a listed batch: "+problem)
			}
			// A batch without created_at cannot be placed before since:
			// it is kept rather than ending the list on it.
			if !b.CreatedAt.IsZero() && b.CreatedAt.Before(since) {
				return out, nil
			}
			out = append(out, b)
		}
		if !page.HasMore {
			return out, nil
		}
		if len(page.Data) == 0 {
			return nil, provider.Unreadable(name, resp.StatusCode, nil, "the batch list has more pages but this one is empty")
		}
		next := cmp.Or(page.LastID, page.Data[len(page.Data)-1].ID)
		if seen[next] {
			// A server that hands back a cursor twice would be paged forever.
			return nil, provider.Unreadable(name, resp.StatusCode, nil, fmt.Sprintf("the batch list pages after %q twice", provider.CleanMessage(next, c.key)))
		}
		seen[next], after = true, next
	}
}

type batchObject struct {
	ID                string     `json:"id"`
	Type              string     `json:"type"`
	ProcessingStatus  string     `json:"processing_status"`
	CreatedAt         time.Time  `json:"created_at"`
	CancelInitiatedAt *time.Time `json:"cancel_initiated_at"`
	ResultsURL        string     `json:"results_url"`
	RequestCounts     struct {
		Processing int `json:"processing"`
		Succeeded  int `json:"succeeded"`
		Errored    int `json:"errored"`
		Canceled   int `json:"canceled"`
		Expired    int `json:"expired"`
	} `json:"request_counts"`
}

func (c *Client) readBatch(resp *http.Response, data []byte, err error, model string) (provider.Batch, error) {
	if err != nil {
		return provider.Batch{}, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return provider.Batch{}, c.statusError(resp.StatusCode, resp.Header, data, nil, model)
	}
	var o batchObject
	if err := json.Unmarshal(data, &o); err != nil {
		return provider.Batch{}, provider.UnreadableBody(name, resp.StatusCode, nil, data, err)
	}
	b, problem := batchOf(o)
	if problem != "" {
		return provider.Batch{}, provider.Unreadable(name, resp.StatusCode, nil, problem)
	}
	return b, nil
}

// batchOf is the batch o describes, or what is wrong with it.
func batchOf(o batchObject) (provider.Batch, string) {
	var status provider.BatchStatus
	switch o.ProcessingStatus {
	case "in_progress", "canceling":
		status = provider.BatchInProgress
	case "ended":
		// The API says "ended" however a batch ended; a cancel asked for
		// and its window running out are worth telling apart.
		status = provider.BatchEnded
		switch {
		case o.CancelInitiatedAt != nil:
			status = provider.BatchCanceled
		case o.RequestCounts.Expired > 0:
			status = provider.BatchExpired
		}
	}
	if o.ID == "" || status == "" {
		return provider.Batch{}, fmt.Sprintf("the batch has id %q and processing_status %q, not a known one", o.ID, o.ProcessingStatus)
	}
	n := o.RequestCounts
	counts := provider.BatchCounts{Succeeded: max(n.Succeeded, 0), Errored: max(n.Errored, 0), Canceled: max(n.Canceled, 0),
		Expired: max(n.Expired, 0), Processing: max(n.Processing, 0)}
	return provider.Batch{
		ID: o.ID, Status: status, CreatedAt: o.CreatedAt, ResultsURL: o.ResultsURL, Counts: counts,
		// The API gives no total: every request stands in one count.
		Total: counts.Processing + counts.Succeeded + counts.Errored + counts.Canceled + counts.Expired,
	}, ""
}

// Results reads the batch's results_url.
func (c *Client) Results(ctx context.Context, b provider.Batch, sent map[string]provider.Request) iter.Seq2[provider.BatchResult, error] {
	return func(yield func(provider.BatchResult, error) bool) {
		if !b.Status.Done() || b.ResultsURL == "" {
			yield(provider.BatchResult{}, &provider.Error{Provider: name, Kind: provider.Permanent,
				Message: fmt.Sprintf("batch %s is %s and has no results_url yet", b.ID, b.Status), Hint: "Try: Poll until it is done"})
			return
		}
		h := c.header()
		h.Set("Accept", "application/binary, application/json")
		resp, err := provider.Open(ctx, c.http, name, c.baseURL, http.MethodGet, b.ResultsURL, h, "", nil)
		if err != nil {
			yield(provider.BatchResult{}, err)
			return
		}
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			yield(provider.BatchResult{}, c.statusError(resp.StatusCode, resp.Header, provider.ReadErrorBody(resp), nil, ""))
			return
		}
		defer resp.Body.Close()
		parse := func(data []byte) (provider.BatchResult, string) { return c.resultLine(data, sent) }
		if provider.YieldBatchLines(resp.Body, name, b.ID+" results", parse, yield) && ctx.Err() != nil {
			yield(provider.BatchResult{}, ctx.Err())
		}
	}
}

// resultLine reads one line of a results file, or says what is wrong
// with it.
func (c *Client) resultLine(data []byte, sent map[string]provider.Request) (provider.BatchResult, string) {
	var line struct {
		CustomID string `json:"custom_id"`
		Result   *struct {
			Type    string          `json:"type"`
			Message json.RawMessage `json:"message"`
			Error   json.RawMessage `json:"error"`
		} `json:"result"`
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
	if line.Result == nil {
		return provider.BatchResult{}, "the line has no result"
	}
	res := provider.BatchResult{CustomID: line.CustomID}
	switch line.Result.Type {
	case "succeeded":
		resp, err := c.parseAnswer(req, body(req).MaxTokens, http.StatusOK, nil, line.Result.Message)
		if err != nil {
			res.Err = &provider.ItemError{Kind: provider.ItemErrored, Message: err.Error()}
			var pe *provider.Error
			if errors.As(err, &pe) {
				res.Err.Type, res.Err.Message = pe.Type, pe.Message
			}
			break
		}
		res.Response = resp
	case "errored":
		// The error is an error response's body, {"type":"error","error":
		// {...}}; older answers gave the inner object alone.
		var outer struct {
			errorDetail
			Error errorDetail `json:"error"`
		}
		_ = json.Unmarshal(line.Result.Error, &outer) // an unreadable error is still an errored item
		d := outer.Error
		if d.Type == "" && d.Message == "" {
			d = outer.errorDetail
		}
		res.Err = &provider.ItemError{Kind: provider.ItemErrored, Type: provider.CleanMessage(d.Type, c.key),
			Message: provider.CleanMessage(cmp.Or(d.Message, "no message"), c.key)}
	case "canceled":
		res.Err = &provider.ItemError{Kind: provider.ItemCanceled, Message: "the batch was canceled before this request was answered"}
	case "expired":
		res.Err = &provider.ItemError{Kind: provider.ItemExpired, Message: "the batch expired before this request was answered"}
	default:
		return provider.BatchResult{}, fmt.Sprintf("result type %q is not succeeded, errored, canceled or expired", provider.CleanMessage(line.Result.Type, c.key))
	}
	return res, ""
}
