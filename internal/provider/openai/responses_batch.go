package openai

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
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
