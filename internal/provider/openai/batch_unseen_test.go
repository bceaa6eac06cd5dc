package openai_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/provider"
)

// TestBatchOfAnotherProjectIs404: a key of another project than the one a
// batch was made in sees none of it: the list leaves it out, and a look,
// a cancel or a read of its output file is OpenAI's 404, told as a batch
// of another project rather than a wrong base URL. The key that made it
// still sees it and can cancel it.
func TestBatchOfAnotherProjectIs404(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{BatchAPI: fakeprovider.BatchAPIConfig{PerKey: true, Processing: time.Minute}})
	a, b := batchClient(srv, "sk-project-a"), batchClient(srv, "sk-project-b")
	items, _ := batchItems(2)
	made, err := a.Submit(context.Background(), "digest-1", items)
	if err != nil {
		t.Fatal(err)
	}
	if list, err := b.List(context.Background(), time.Time{}); err != nil || len(list) != 0 {
		t.Errorf("another project's list: %+v, %v", list, err)
	}
	_, err = b.Poll(context.Background(), made.ID)
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.StatusCode != 404 || pe.Kind != provider.Permanent || pe.Type != "invalid_request_error" ||
		!strings.HasPrefix(pe.Message, "No batch found with id '"+made.ID+"'") || !strings.Contains(pe.Hint, "project that created the batch") {
		t.Errorf("another project's look: %#v", err)
	}
	if err := b.Cancel(context.Background(), made.ID); provider.KindOf(err) != provider.Permanent || !strings.Contains(err.Error(), "HTTP 404") {
		t.Errorf("another project's cancel: %v", err)
	}
	if got, err := a.Poll(context.Background(), made.ID); err != nil || got.Status != provider.BatchInProgress {
		t.Errorf("its own project's look: %+v, %v", got, err)
	}
	if err := a.Cancel(context.Background(), made.ID); err != nil {
		t.Errorf("its own project's cancel: %v", err)
	}
	done := waitDone(t, a, made.ID)
	if done.Status != provider.BatchCanceled || done.ErrorFileID == "" {
		t.Fatalf("canceled batch ended %s, error file %q", done.Status, done.ErrorFileID)
	}
	// Its files are its project's too.
	_, sent := batchItems(2)
	for _, err := range b.Results(context.Background(), done, sent) {
		if provider.KindOf(err) != provider.Permanent || !strings.Contains(err.Error(), "HTTP 404") || !strings.Contains(err.Error(), "No such File object") {
			t.Errorf("another project's read of the error file: %v", err)
		}
	}
	n := 0
	for res, err := range a.Results(context.Background(), done, sent) {
		if err != nil || res.Err == nil || res.Err.Kind != provider.ItemCanceled {
			t.Errorf("its own project's read: %+v, %v", res, err)
		}
		n++
	}
	if n != 2 {
		t.Errorf("%d results read by its own project, want 2", n)
	}
}
