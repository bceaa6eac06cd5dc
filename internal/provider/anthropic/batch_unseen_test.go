package anthropic_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/provider"
)

// TestBatchOfAnotherWorkspaceIs404: a key of another workspace than the
// one a message batch was made in sees none of it: the list leaves it out,
// and a look or a cancel is a 404 not_found_error, told as a batch of
// another workspace rather than a wrong base URL. The key that made it
// still sees it and can cancel it.
func TestBatchOfAnotherWorkspaceIs404(t *testing.T) {
	srv := fakeprovider.Start(t, fakeprovider.Config{BatchAPI: fakeprovider.BatchAPIConfig{PerKey: true, Processing: time.Minute}})
	a, b := batchClient(srv, "sk-ant-workspace-a"), batchClient(srv, "sk-ant-workspace-b")
	items, _ := batchItems(2)
	made, err := a.Submit(context.Background(), "", items)
	if err != nil {
		t.Fatal(err)
	}
	if list, err := b.List(context.Background(), time.Time{}); err != nil || len(list) != 0 {
		t.Errorf("another workspace's list: %+v, %v", list, err)
	}
	_, err = b.Poll(context.Background(), made.ID)
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.StatusCode != 404 || pe.Kind != provider.Permanent || pe.Type != "not_found_error" ||
		!strings.Contains(pe.Hint, "workspace that created the batch") {
		t.Errorf("another workspace's look: %#v", err)
	}
	if err := b.Cancel(context.Background(), made.ID); provider.KindOf(err) != provider.Permanent || !strings.Contains(err.Error(), "HTTP 404") {
		t.Errorf("another workspace's cancel: %v", err)
	}
	if got, err := a.Poll(context.Background(), made.ID); err != nil || got.Status != provider.BatchInProgress {
		t.Errorf("its own workspace's look: %+v, %v", got, err)
	}
	if err := a.Cancel(context.Background(), made.ID); err != nil {
		t.Errorf("its own workspace's cancel: %v", err)
	}
	if done := waitDone(t, a, made.ID); done.Status != provider.BatchCanceled {
		t.Errorf("canceled batch ended %s", done.Status)
	}
}
