package provider

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"time"
)

// Batch APIs answer a list of requests within a day at half the price of
// the synchronous endpoints, under limits of their own. Nothing here
// retries: a batch submitted twice is paid twice, so whether to submit
// again is the caller's decision alone.

// BatchItem is one request of a batch, named so its answer can be found:
// batch answers come back in any order.
type BatchItem struct {
	CustomID string
	Request  Request
}

// BatchStatus is where a batch stands, in words common to the providers.
type BatchStatus string

const (
	// BatchInProgress covers everything before the end: validating,
	// running, finalizing, being canceled.
	BatchInProgress BatchStatus = "in_progress"
	// BatchEnded: every item has its result, succeeded or not.
	BatchEnded BatchStatus = "ended"
	// BatchFailed: the batch as a whole was refused (an invalid input
	// file); no item was answered.
	BatchFailed BatchStatus = "failed"
	// BatchCanceled: canceled on request; the items answered before are
	// in the results, and the rest come back canceled.
	BatchCanceled BatchStatus = "canceled"
	// BatchExpired: the provider's window (24 h) ran out; the items left
	// unanswered come back expired.
	BatchExpired BatchStatus = "expired"
)

// Done reports whether the batch will change no more: its results, if
// any, can be read.
func (s BatchStatus) Done() bool { return s != BatchInProgress }

// BatchCounts is how many of a batch's items stand where.
type BatchCounts struct {
	Succeeded, Errored, Canceled, Expired, Processing int
}

// Batch is a submitted batch as its provider last reported it.
type Batch struct {
	ID        string
	Status    BatchStatus
	Counts    BatchCounts
	CreatedAt time.Time
	// Label is what Submit was given, as the provider keeps it (OpenAI's
	// metadata); "" where the provider keeps none (Anthropic).
	Label string
	// Total is how many items the batch holds.
	Total int
	// Message is the provider's reason for a failed batch, "" otherwise.
	Message string
	// QueueFull marks a batch failed because the account's batch queue had
	// no room for it (OpenAI's token_limit_exceeded): nothing in it ran or
	// is billed, and the same requests may go again once the account's
	// running batches end. Anthropic refuses such a batch at creation
	// instead, with a rate-limit error.
	QueueFull bool
	// Where the results are once Done: OpenAI's output and error files,
	// Anthropic's results URL. Results reads them; callers keep them as
	// they are.
	OutputFileID, ErrorFileID, ResultsURL string
}

// ItemKind tells how a batch item that has no answer ended.
type ItemKind string

const (
	// ItemErrored: the provider answered the item with an error (an
	// invalid request, a server error).
	ItemErrored ItemKind = "errored"
	// ItemCanceled: the batch was canceled before the item was answered.
	ItemCanceled ItemKind = "canceled"
	// ItemExpired: the batch's window ran out before the item was answered.
	ItemExpired ItemKind = "expired"
)

// ItemError is why one item of a batch has no answer.
type ItemError struct {
	Kind ItemKind
	// StatusCode is the HTTP status the item's request got inside the
	// batch, 0 when it had none (canceled, expired).
	StatusCode int
	Type       string // the provider's error type or code
	Message    string
}

func (e *ItemError) Error() string {
	msg := "batch item " + string(e.Kind)
	if e.StatusCode != 0 {
		msg += fmt.Sprintf(": HTTP %d", e.StatusCode)
	}
	if e.Type != "" {
		msg += " " + e.Type
	}
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg
}

// BatchResult is one item's outcome: its answer, or Err.
type BatchResult struct {
	CustomID string
	Response Response // Text and Usage; Limits is always nil
	Err      *ItemError
}

// Batcher sends requests through a provider's batch API.
//
// Submit sends items as one batch; it refuses more items or bytes than
// the provider takes in one (SplitBatches cuts a list to fit) and custom
// IDs that are empty or repeated. Poll reports a batch's state. Results
// yields every result of a Done batch, in the provider's order (not the
// items'); sent maps each custom ID to the request submitted under it, so
// that usage is held to what that request could have used, as Complete
// holds it, and a custom ID the batch did not have is an error wrapping
// ErrUnsentCustomID. An output line that cannot be read yields an error
// naming the line and the iteration goes on with the next one; a custom ID
// on two lines is yielded twice, for the caller to choose. Cancel asks the
// provider to stop a batch; it ends canceled later, answering what it
// already had. Poll and Cancel answer a batch the key cannot see (another
// OpenAI project's, another Anthropic workspace's, one the server forgot)
// with a Permanent *Error of status 404 (or a Fatal 403).
//
// Submit's label names the batch where the provider keeps a name (OpenAI's
// metadata "digest_batch"): List then finds a batch whose creation was
// answered by a failure that may have come after the batch was made. List
// reports the batches created at or after since, newest first, following
// the provider's pages; a server without batch endpoints answers it with
// a Permanent *Error of status 404 or 405, which is how a caller learns,
// before submitting anything, that there is no batch API to use.
//
// Like Provider.Complete, no method retries: each failure comes back as a
// *Error classified the same way, and the caller decides.
type Batcher interface {
	Submit(ctx context.Context, label string, items []BatchItem) (Batch, error)
	Poll(ctx context.Context, id string) (Batch, error)
	Results(ctx context.Context, b Batch, sent map[string]Request) iter.Seq2[BatchResult, error]
	Cancel(ctx context.Context, id string) error
	List(ctx context.Context, since time.Time) ([]Batch, error)
	// SplitBatch cuts items, in order, into batches within the provider's
	// limits (SplitBatches at its counts and bytes).
	SplitBatch(items []BatchItem) ([][]BatchItem, error)
}

// SplitBatches cuts items, in order, into batches of at most maxItems
// items whose sizes (as size measures each item once encoded for the
// wire) add up to at most maxBytes. An item larger than maxBytes alone,
// or one size cannot measure, is an error naming it.
func SplitBatches(items []BatchItem, maxItems, maxBytes int, size func(BatchItem) (int, error)) ([][]BatchItem, error) {
	if maxItems < 1 || maxBytes < 1 {
		return nil, fmt.Errorf("batch limits of %d items and %d bytes hold nothing. Try: limits of at least 1", maxItems, maxBytes)
	}
	var out [][]BatchItem
	start, bytes := 0, 0
	for i, it := range items {
		n, err := size(it)
		if err != nil {
			return nil, fmt.Errorf("batch item %q: %w", it.CustomID, err)
		}
		if n > maxBytes {
			return nil, fmt.Errorf("batch item %q is %d bytes, over the %d a batch takes. Try: a shorter prompt for it, or send it without --batch-api", it.CustomID, n, maxBytes)
		}
		if i > start && (i-start == maxItems || bytes+n > maxBytes) {
			out = append(out, items[start:i])
			start, bytes = i, 0
		}
		bytes += n
	}
	if start < len(items) {
		out = append(out, items[start:])
	}
	return out, nil
}

// CheckBatchIDs refuses custom IDs that are empty or repeated: results are
// matched to items by them alone.
func CheckBatchIDs(name string, items []BatchItem) error {
	seen := make(map[string]bool, len(items))
	for i, it := range items {
		if it.CustomID == "" {
			return &Error{Provider: name, Kind: Permanent, Message: fmt.Sprintf("batch item %d has no custom ID", i), Hint: "Try: give every item a unique CustomID"}
		}
		if seen[it.CustomID] {
			return &Error{Provider: name, Kind: Permanent, Message: fmt.Sprintf("batch custom ID %q is repeated", it.CustomID), Hint: "Try: give every item a unique CustomID"}
		}
		seen[it.CustomID] = true
	}
	return nil
}

// MaxBatchLine bounds one line of a batch's results: an answer is
// kilobytes, and a server that never ends a line must not exhaust memory.
const MaxBatchLine = maxBody

// ReadBatchLines calls line with each line of a JSONL stream, numbered
// from 1, blank lines skipped, until it returns false. A line over
// MaxBatchLine, or a read that fails, is an error naming the line.
func ReadBatchLines(r io.Reader, line func(n int, data []byte) bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxBatchLine)
	n := 0
	for sc.Scan() {
		n++
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		if !line(n, sc.Bytes()) {
			return nil
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("line %d is over %d MiB", n+1, MaxBatchLine>>20)
		}
		return fmt.Errorf("line %d: %w", n+1, err)
	}
	return nil
}

// ErrUnsentCustomID is wrapped by the error Results yields for a line whose
// custom_id the batch was not sent: the line answers nothing that was
// asked, and no item is missing on its account.
var ErrUnsentCustomID = errors.New("a custom_id the batch was not sent")

// Unsent is what a parse given to YieldBatchLines returns for a line whose
// custom_id (shown, cleaned of secrets, as shown) the batch was not sent.
func Unsent(customID, shown string) (BatchResult, string) {
	return BatchResult{CustomID: customID}, fmt.Sprintf("custom_id %q was not in the batch", shown)
}

// YieldBatchLines reads a batch's results file (ReadBatchLines) and yields
// what parse makes of each line: the result, or a Malformed error naming
// the line and what parse said is wrong with it (wrapping
// ErrUnsentCustomID when parse said it with Unsent); a file that cannot
// be read to its end yields a Transient error. It returns false when yield
// asked to stop. source names the file in messages ("msgbatch_1
// results", "file file-abc").
func YieldBatchLines(r io.Reader, prov, source string, parse func([]byte) (BatchResult, string), yield func(BatchResult, error) bool) bool {
	more := true
	err := ReadBatchLines(r, func(n int, data []byte) bool {
		res, problem := parse(data)
		if problem != "" {
			e := &Error{Provider: prov, Kind: Malformed, StatusCode: http.StatusOK,
				Message: fmt.Sprintf("batch %s line %d: %s", source, n, problem)}
			if res.CustomID != "" {
				e.Err = ErrUnsentCustomID
			}
			more = yield(BatchResult{}, e)
		} else {
			more = yield(res, nil)
		}
		return more
	})
	if err != nil && more {
		more = yield(BatchResult{}, &Error{Provider: prov, Kind: Transient, Message: fmt.Sprintf("batch %s: %s", source, err), Err: err})
	}
	return more
}
