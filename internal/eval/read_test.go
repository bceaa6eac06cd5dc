package eval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/dataset"
	"github.com/digest-cli/digest/internal/score"
)

// TestLimitReadsNoFurther: Limit stops before reading past the limit, so a
// bad line after it is never read.
func TestLimitReadsNoFurther(t *testing.T) {
	r := newTestRun(t)
	out, _ := r.run(t, sums(2)+"not json\n", Options{Limit: 2})
	if out.Items != 2 || len(out.Skipped) != 0 {
		t.Errorf("%d items, %d skipped; want 2 and none", out.Items, len(out.Skipped))
	}
}

// TestDatasetWithNoItems: a dataset with no items (empty, blank lines,
// every line skipped as invalid) is ErrNoItems naming it, for a dry run
// too, not a green run of nothing; no run of nothing is kept.
func TestDatasetWithNoItems(t *testing.T) {
	r := newTestRun(t)
	for _, c := range []struct {
		name, data string
		read       dataset.Options
		dry        bool
		want       string
	}{
		{"empty.jsonl", "", dataset.Options{}, false, "empty.jsonl has no items"},
		{"blank.jsonl", "\n  \r\n\n", dataset.Options{}, false, "blank.jsonl has no items"},
		{"invalid.jsonl", "garbage\n{\"foo\": 1}\n", dataset.Options{SkipInvalid: true}, false, "every line of invalid.jsonl was skipped as invalid (2)"},
		{"empty.jsonl", "", dataset.Options{}, true, "empty.jsonl has no items"},
		{"-", "", dataset.Options{}, false, "stdin has no items"},
	} {
		c.read.Name = c.name
		_, err := Run(context.Background(), Options{Dataset: c.name, Source: strings.NewReader(c.data), Read: c.read, Models: r.models,
			Tokenizer: r.tok, Store: r.st, Concurrency: 2, Scorer: &score.Scorer{}, DryRun: c.dry})
		if !errors.Is(err, ErrNoItems) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "Try: ") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s (dry run %v): %v; want ErrNoItems saying %q on one line", c.name, c.dry, err, c.want)
		}
	}
	if runs, err := r.st.Runs(context.Background()); err != nil || len(runs) != 0 {
		t.Errorf("runs after refused datasets: %d, %v; want none", len(runs), err)
	}
	if r.calls[0].Load()+r.calls[1].Load() != 0 {
		t.Error("a dataset with no items was sent")
	}
}

// hugeLine reads as a dataset whose second line is size bytes, made as it
// is read, so that the test itself never holds it.
type hugeLine struct {
	head, tail io.Reader
	left       int
	chunk      string
}

func newHugeLine(size int) *hugeLine {
	const start = `{"id": "huge", "prompt": "`
	return &hugeLine{head: strings.NewReader(`{"prompt": "2", "expected": "2"}` + "\n" + start),
		tail: strings.NewReader(`"}` + "\n" + `{"prompt": "3", "expected": "3"}` + "\n"), left: size - len(start) - 2,
		chunk: strings.Repeat("All work and no play makes Jack a dull boy. ", 1<<10)}
}

func (h *hugeLine) Read(p []byte) (int, error) {
	if n, err := h.head.Read(p); n > 0 || err != io.EOF {
		return n, err
	}
	if h.left > 0 {
		n := copy(p[:min(len(p), h.left)], h.chunk)
		h.left -= n
		return n, nil
	}
	return h.tail.Read(p)
}

// allocated is what f allocates on the heap, freed or not.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestHundredMegabyteLine: a dataset with a 100 MB line stops the run at
// that line, named with its file, line number and the limit; the line is
// read past without being held, and with SkipInvalid the rest is
// evaluated.
func TestHundredMegabyteLine(t *testing.T) {
	const size = 100 << 20
	r := newTestRun(t)
	r.models = r.models[:1]
	run := func(src io.Reader, skip bool) (*RunStats, error) {
		return Run(context.Background(), Options{Dataset: "huge.jsonl", Source: src, Read: dataset.Options{Name: "huge.jsonl", SkipInvalid: skip},
			Models: r.models, Tokenizer: r.tok, Store: r.st, Concurrency: 2, Scorer: &score.Scorer{}})
	}
	baseline := allocated(func() { run(strings.NewReader(sums(3)), false) })
	var err error
	used := allocated(func() { _, err = run(newHugeLine(size), false) })
	want := fmt.Sprintf("huge.jsonl:2: line is %d bytes, longer than the %d-byte limit", size, dataset.DefaultMaxLineBytes)
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Errorf("Run = %v, want one line saying %q", err, want)
	}
	// What the line allocates is bounded by the limit, not by the line.
	if used > baseline+size/2 {
		t.Errorf("the run allocated %d MB, %d MB more than a small dataset: the line was held", used>>20, (used-baseline)>>20)
	}
	out, err := run(newHugeLine(size), true)
	if err != nil || out.Items != 2 || len(out.Skipped) != 1 || !strings.Contains(out.Skipped[0].Error(), want) {
		t.Errorf("SkipInvalid: %v, %+v; want 2 items and the huge line skipped", err, out)
	}
}

// TestBadLineStopsTheRun: a line that is no item stops the run, named by
// its file and line, before anything of it is stored; SkipInvalid reads
// past each such line, counting it, and evaluates the rest.
func TestBadLineStopsTheRun(t *testing.T) {
	r := newTestRun(t)
	data := `{"prompt": "What is 1+1?", "expected": "2"}` + "\n" + `{"prompt": 7}` + "\n" + "not json\n"
	run := func(skip bool) (*RunStats, error) {
		return Run(context.Background(), Options{Dataset: "bad.jsonl", Source: strings.NewReader(data), Read: dataset.Options{Name: "bad.jsonl", SkipInvalid: skip},
			Models: r.models, Tokenizer: r.tok, Store: r.st, Concurrency: 2, Scorer: &score.Scorer{}})
	}
	if _, err := run(false); err == nil || !strings.Contains(err.Error(), "bad.jsonl:2:") {
		t.Errorf("Run = %v, want the error of bad.jsonl:2", err)
	}
	if runs, _ := r.st.Runs(context.Background()); len(runs) != 0 {
		t.Errorf("a run stopped by a bad line is kept: %+v", runs)
	}
	out, err := run(true)
	if err != nil || out.Items != 1 || len(out.Skipped) != 2 || out.Skipped[0].Line != 2 || out.Skipped[1].Line != 3 {
		t.Errorf("SkipInvalid: %v, %+v; want 1 item and lines 2 and 3 skipped", err, out)
	}
}
