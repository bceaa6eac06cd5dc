package provider_test

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/provider"
)

func TestSplitBatches(t *testing.T) {
	sizes := []int{4, 4, 4, 1, 1, 1, 1, 9}
	var items []provider.BatchItem
	for i := range sizes {
		items = append(items, provider.BatchItem{CustomID: fmt.Sprint(i)})
	}
	size := func(it provider.BatchItem) (int, error) {
		var i int
		fmt.Sscan(it.CustomID, &i)
		return sizes[i], nil
	}
	got, err := provider.SplitBatches(items, 3, 10, size)
	if err != nil {
		t.Fatal(err)
	}
	// Cut by bytes (4+4+4 > 10), by count (three items), by bytes again.
	want := [][]string{{"0", "1"}, {"2", "3", "4"}, {"5", "6"}, {"7"}}
	if len(got) != len(want) {
		t.Fatalf("%d batches, want %d: %v", len(got), len(want), got)
	}
	for i, b := range got {
		var ids []string
		for _, it := range b {
			ids = append(ids, it.CustomID)
		}
		if strings.Join(ids, ",") != strings.Join(want[i], ",") {
			t.Errorf("batch %d holds %v, want %v", i, ids, want[i])
		}
	}
	if got, err := provider.SplitBatches(nil, 3, 10, size); err != nil || len(got) != 0 {
		t.Errorf("no items: %v, %v", got, err)
	}
	sizes[5] = 11
	if _, err := provider.SplitBatches(items, 3, 10, size); err == nil || !strings.Contains(err.Error(), `"5" is 11 bytes`) || !strings.Contains(err.Error(), "Try:") {
		t.Errorf("an item over the byte limit: %v", err)
	}
	if _, err := provider.SplitBatches(items, 0, 10, size); err == nil {
		t.Error("a limit of 0 items was taken")
	}
	boom := errors.New("boom")
	if _, err := provider.SplitBatches(items, 3, 10, func(provider.BatchItem) (int, error) { return 0, boom }); !errors.Is(err, boom) {
		t.Errorf("a size that fails: %v", err)
	}
}

func TestCheckBatchIDs(t *testing.T) {
	for _, ids := range [][]string{{"a", ""}, {"a", "b", "a"}} {
		var items []provider.BatchItem
		for _, id := range ids {
			items = append(items, provider.BatchItem{CustomID: id})
		}
		if err := provider.CheckBatchIDs("x", items); provider.KindOf(err) != provider.Permanent {
			t.Errorf("%q: %v", ids, err)
		}
	}
	if err := provider.CheckBatchIDs("x", []provider.BatchItem{{CustomID: "a"}, {CustomID: "b"}}); err != nil {
		t.Error(err)
	}
}

// oneByte reads one byte at a time, as a slow network might hand a body over.
type oneByte struct{ r io.Reader }

func (o oneByte) Read(p []byte) (int, error) { return o.r.Read(p[:min(len(p), 1)]) }

func TestReadBatchLines(t *testing.T) {
	var got []string
	err := provider.ReadBatchLines(oneByte{strings.NewReader("a\n\n  \nb\r\nc")}, func(n int, data []byte) bool {
		got = append(got, fmt.Sprintf("%d:%s", n, strings.TrimSpace(string(data))))
		return true
	})
	if err != nil || strings.Join(got, " ") != "1:a 4:b 5:c" {
		t.Errorf("lines %q, %v", got, err)
	}
	long := strings.Repeat("x", provider.MaxBatchLine+1)
	err = provider.ReadBatchLines(strings.NewReader("ok\n"+long+"\n"), func(int, []byte) bool { return true })
	if err == nil || !strings.Contains(err.Error(), "line 2 is over") {
		t.Errorf("an endless line: %v", err)
	}
	n := 0
	provider.ReadBatchLines(strings.NewReader("a\nb\nc\n"), func(int, []byte) bool { n++; return false })
	if n != 1 {
		t.Errorf("went on after stop: %d lines", n)
	}
}
