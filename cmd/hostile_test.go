package cmd

// Hostile input: each case drives the real command line and checks for one
// clear line (what is wrong, then "Try: ..."), the documented exit code, no
// panic and nothing already done lost, or a warning and the rest done.
//
// Cases covered by tests elsewhere, not repeated here:
//
//	path that is not a repository     TestErrorsAndExitCodes/"not a repository" and /"missing path" (exit 1)
//	empty repository                  TestEmptyRepositoryIsNothingToDo (exit 0, "has no commits")
//	missing objects                   TestMissingObjectWarnsAndSummarizesTheRest (warning naming the blob, the rest summarized)
//	binary content                    TestSummarizeGolden (logo.png skipped as binary in every format);
//	                                  internal/history TestDiffSkipsAndRenames
//	non-UTF-8 text in a diff          internal/history TestDiffSkipsAndRenames (U+FFFD in place of bad bytes)
//	malformed JSONL                   TestEvalOfflineDryRunAndBadInput (FILE:2:, --skip-invalid);
//	                                  internal/dataset TestLineErrors, TestSkipInvalid, FuzzRead
//	JSONL line limit, in the reader   internal/dataset TestMaxLineBytes, TestHundredMegabyteLine (memory)
//	unknown provider or model spec    TestErrorsAndExitCodes/"bad model", /"unknown provider" (summarize)
//	missing API key                   TestHostedModelWithoutKeyNamesTheVariable (summarize; eval below)
//	refused API key                   TestBadKeyStopsTheRunAndNamesTheVariable, TestEvalFatalErrorWithTwoModels
//	text file in place of a database  TestCorruptDatabaseIsNotOverwritten; internal/store TestOpenRefusesFilesThatAreNotSQLite
//	unusable database paths           internal/store TestOpenReportsUnusablePaths
//
// Added here: a shallow clone, a 50 MB one-line file, 10,000 files in one
// commit, a non-UTF-8 author, message and file through the whole pipeline,
// a 100 MB JSONL line through digest eval, eval's unknown provider and
// missing key, a 5 MB commit message, invalid values of every numeric and duration flag of both
// commands, and unwritable, corrupt, truncated and foreign databases, each
// left byte for byte as it was.

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/digest-cli/digest/internal/fakeprovider"
	"github.com/digest-cli/digest/internal/gittest"
	"github.com/digest-cli/digest/internal/prompt"
	"github.com/digest-cli/digest/internal/provider"
	"github.com/digest-cli/digest/internal/tokenizer"
)

// oneLineError checks the promise every failure keeps: a non-zero exit
// code, and a single line on standard error saying what is wrong and what
// to try, each of wants in it.
func oneLineError(t *testing.T, res result, code int, wants ...string) {
	t.Helper()
	if res.code != code {
		t.Errorf("exit %d, want %d; stderr %q", res.code, code, res.errOut)
	}
	msg := strings.TrimSpace(res.errOut)
	if strings.Count(msg, "\n") != 0 || !strings.HasPrefix(msg, "digest: ") {
		t.Errorf("want one line starting with digest:, got %q", res.errOut)
	}
	for _, w := range append(wants, "Try: ") {
		if !strings.Contains(msg, w) {
			t.Errorf("stderr %q does not say %q", msg, w)
		}
	}
	if strings.Contains(res.errOut, "panic") || strings.Contains(res.errOut, "goroutine ") {
		t.Errorf("a panic: %s", res.errOut)
	}
}

// sentPrompts records the text of every request that reaches the provider.
func sentPrompts(h *harness) func() []string {
	var mu sync.Mutex
	var sent []string
	h.wrap = func(next provider.Provider) provider.Provider {
		return provider.Func(func(ctx context.Context, req provider.Request) (provider.Response, error) {
			mu.Lock()
			sent = append(sent, req.System+"\n"+req.Messages[0].Content)
			mu.Unlock()
			return next.Complete(ctx, req)
		})
	}
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), sent...)
	}
}

// allocated is what f allocated on the heap, in bytes: the measure of
// whether a large input was read whole, independent of timing and of the
// garbage collector's pace.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func newTokenizer(t *testing.T) *tokenizer.Tokenizer {
	t.Helper()
	tok, err := tokenizer.New("o200k_base")
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestHostileShallowClone clones a go-git history with the real git at depth
// 3: digest summarizes the two commits whose parents the clone has, and
// leaves out the boundary commit with a warning, since its change cannot be
// known; its missing parent is neither an error nor walked past.
func TestHostileShallowClone(t *testing.T) {
	src := gittest.New(t)
	var hashes []string
	var body strings.Builder
	for i := 1; i <= 6; i++ {
		fmt.Fprintf(&body, "line %d\n", i)
		hashes = append(hashes, src.Write("notes.txt", body.String()).Commit(fmt.Sprintf("Change %d", i)))
	}
	dir := src.ShallowClone(3)
	if b, err := os.ReadFile(filepath.Join(dir, ".git", "shallow")); err != nil || strings.TrimSpace(string(b)) != hashes[3] {
		t.Fatalf("the clone is not shallow at the fourth commit: %q, %v", b, err)
	}

	h := newHarness(t)
	res := h.run(context.Background(), "summarize", dir, "-f", "jsonl", "--repo-id", "example/notes")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.errOut)
	}
	got := entries(t, res.out)
	if len(got) != 2 {
		t.Fatalf("%d entries, want the 2 commits whose parents the clone has:\n%s", len(got), res.out)
	}
	for i, e := range got {
		if want := hashes[5-i]; e["commit"] != want {
			t.Errorf("entry %d is %v, want %s", i, e["commit"], want)
		}
	}
	if s, _ := got[1]["details"].(string); !strings.Contains(s, "modifies notes.txt") || !strings.Contains(s, "+1/-0") {
		t.Errorf("a commit inside the clone should be diffed against its parent: %q", s)
	}
	// git shows the boundary as adding the file whole, which is not what it
	// changed: digest leaves it out and says why, rather than cache a wrong
	// summary for every clone that shares the cache.
	if !strings.Contains(res.errOut, "commit="+hashes[3]) || !strings.Contains(res.errOut, "edge of a shallow clone") ||
		!strings.Contains(res.errOut, "Try: git fetch --deepen=1") {
		t.Errorf("no warning naming the boundary commit:\n%s", res.errOut)
	}
	if !strings.Contains(res.errOut, "2 commits seen, 0 cached, 2 summarized, 0 failed") {
		t.Errorf("closing line: %q", res.errOut)
	}
	// The full history, under the same id and cache, gets the boundary
	// commit summarized against its real parent.
	res = h.run(context.Background(), "summarize", src.Dir, "-f", "jsonl", "--repo-id", "example/notes")
	full := entries(t, res.out)
	if res.code != 0 || len(full) != 6 {
		t.Fatalf("full clone: exit %d, %d entries: %s", res.code, len(full), res.errOut)
	}
	if s, _ := full[2]["details"].(string); full[2]["cached"] != false || !strings.Contains(s, "modifies notes.txt") || !strings.Contains(s, "+1/-0") {
		t.Errorf("the former boundary commit in the full clone: cached %v, %q", full[2]["cached"], s)
	}

	// A range reaching past the boundary names the missing revision.
	res = h.run(context.Background(), "summarize", dir, "--rev", "HEAD~5..HEAD")
	oneLineError(t, res, 1, `unknown revision "HEAD~3": it names`)
}

// TestHostileFiftyMegabyteLine commits a 50 MB file of one line next to a
// small change: the big file is named as too large without being read, and
// the small one is summarized within the token budget.
func TestHostileFiftyMegabyteLine(t *testing.T) {
	r := gittest.New(t)
	r.Write("main.go", "package main\n\nfunc main() {}\n").Commit("Start")
	const size = 50 << 20
	huge := bytes.Repeat([]byte("0123456789abcdef"), size/16)
	big := r.WriteBytes("data/blob.txt", huge).
		Write("main.go", "package main\n\nfunc main() {\n\tprintln(\"data loaded\")\n}\n").
		Commit("Load the data")
	huge = nil

	h := newHarness(t)
	prompts := sentPrompts(h)
	var res result
	baseline := allocated(func() { h.run(context.Background(), "summarize", r.Dir, "--rev", big+"~1", "-q") })
	h.db = filepath.Join(t.TempDir(), "d.db")
	used := allocated(func() {
		res = h.run(context.Background(), "summarize", r.Dir, "-f", "jsonl", "--max-diff-tokens", "500")
	})
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.errOut)
	}
	got := entries(t, res.out)
	if len(got) != 2 || got[0]["commit"] != big {
		t.Fatalf("want both commits, the big one first:\n%s", res.out)
	}
	if s := fmt.Sprint(got[0]["skipped_files"]); s != "[map[path:data/blob.txt reason:large]]" {
		t.Errorf("skipped_files %s, want data/blob.txt as large", s)
	}
	// Reading the blob would allocate at least its 50 MB.
	if used > baseline+size/2 {
		t.Errorf("the run allocated %d MB, %d MB more than a run without the big file: the blob was read", used>>20, (used-baseline)>>20)
	}
	sent := prompts()
	var prompt string
	for _, p := range sent {
		if strings.Contains(p, big) {
			prompt = p
		}
	}
	if !strings.Contains(prompt, "data loaded") || !strings.Contains(prompt, "data/blob.txt (large)") {
		t.Errorf("the prompt should hold main.go's diff and name the large file:\n%s", prompt)
	}
	if n := newTokenizer(t).Count(prompt); n > 500+600 {
		t.Errorf("the prompt counts %d tokens: the 500-token diff budget plus the commit's header should be far less", n)
	}
}

// commitManyFiles commits n new files, the last skip of them under vendor/,
// built object by object into one pack file: a work tree of 10,000 files,
// or 10,000 loose objects, would take go-git far longer to write than
// digest takes to summarize them.
func commitManyFiles(t *testing.T, r *gittest.Repo, n, skip int) string {
	t.Helper()
	mem := memory.NewStorage()
	var hashes []plumbing.Hash
	store := func(obj plumbing.EncodedObject) plumbing.Hash {
		h, err := mem.SetEncodedObject(obj)
		if err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, h)
		return h
	}
	put := func(o interface {
		Encode(plumbing.EncodedObject) error
	}) plumbing.Hash {
		obj := mem.NewEncodedObject()
		if err := o.Encode(obj); err != nil {
			t.Fatal(err)
		}
		return store(obj)
	}
	blob := func(text string) plumbing.Hash {
		obj := mem.NewEncodedObject()
		obj.SetType(plumbing.BlobObject)
		w, _ := obj.Writer()
		w.Write([]byte(text))
		w.Close()
		return store(obj)
	}
	var gen, vendored []object.TreeEntry
	for i := range n {
		name := fmt.Sprintf("f%05d.go", i) // zero-padded: already in git's order
		e := object.TreeEntry{Name: name, Mode: filemode.Regular, Hash: blob(fmt.Sprintf("package gen\n\n// C%05d is file %d.\nconst C%05d = %d\n", i, i, i, i))}
		if i >= n-skip {
			vendored = append(vendored, e)
		} else {
			gen = append(gen, e)
		}
	}
	head, err := r.Git.Head()
	if err != nil {
		t.Fatal(err)
	}
	parent, err := r.Git.CommitObject(head.Hash())
	if err != nil {
		t.Fatal(err)
	}
	root, err := parent.Tree()
	if err != nil {
		t.Fatal(err)
	}
	// "README.md" < "gen" < "vendor", as git sorts a tree.
	entries := append([]object.TreeEntry{}, root.Entries...)
	entries = append(entries,
		object.TreeEntry{Name: "gen", Mode: filemode.Dir, Hash: put(&object.Tree{Entries: gen})},
		object.TreeEntry{Name: "vendor", Mode: filemode.Dir, Hash: put(&object.Tree{Entries: vendored})})
	sig := object.Signature{Name: "Ada Lovelace", Email: "ada@example.com", When: r.Clock}
	c := put(&object.Commit{Author: sig, Committer: sig, Message: "Generate the constants\n",
		TreeHash: put(&object.Tree{Entries: entries}), ParentHashes: []plumbing.Hash{head.Hash()}})

	pw, err := r.Git.Storer.(storer.PackfileWriter).PackfileWriter()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := packfile.NewEncoder(pw, mem, false).Encode(hashes, 0); err != nil {
		t.Fatal(err)
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Git.Storer.SetReference(plumbing.NewHashReference(head.Name(), c)); err != nil {
		t.Fatal(err)
	}
	return c.String()
}

// TestHostileTenThousandFiles summarizes one commit of 10,000 new files: the
// diff is cut to its budget and the file lists to their caps, so the prompt
// stays small however many files there are.
func TestHostileTenThousandFiles(t *testing.T) {
	r := gittest.New(t)
	r.Write("README.md", "# constants\n").Commit("Start")
	const files, vendored = 10_000, 300
	hash := commitManyFiles(t, r, files, vendored)
	h := newHarness(t)
	prompts := sentPrompts(h)
	res := h.run(context.Background(), "summarize", r.Dir, "--rev", hash, "-n", "1", "-f", "jsonl")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.errOut)
	}
	got := entries(t, res.out)
	if len(got) != 1 || got[0]["truncated"] != true {
		t.Fatalf("want the one commit, its diff cut:\n%.2000s", res.out)
	}
	if n := len(got[0]["skipped_files"].([]any)); n != vendored {
		t.Errorf("%d skipped files in the report, want the %d vendored ones", n, vendored)
	}
	sent := prompts()
	if len(sent) != 1 {
		t.Fatalf("%d requests, want 1", len(sent))
	}
	p := sent[0]
	if !strings.Contains(p, fmt.Sprintf("Files: %d changed, +%d -0, %d skipped", files, 4*(files-vendored), vendored)) {
		t.Errorf("the totals should count every file:\n%.1500s", p)
	}
	if !strings.Contains(p, fmt.Sprintf("... and %d more files", files-vendored-60)) || !strings.Contains(p, "... and 100 more: 100 vendored") {
		t.Errorf("the file lists should stop at their caps and count the rest:\n%.3000s", p)
	}
	if n := strings.Count(p, "\n  A "); n > 60+200 {
		t.Errorf("%d files listed one by one", n)
	}
	_, diff, _ := strings.Cut(p, "--- diff ---\n")
	tok := newTokenizer(t)
	if n := tok.Count(diff); n > 4000+100 {
		t.Errorf("the diff part counts %d tokens, over the default 4000", n)
	}
	if n := tok.Count(p); n > 4000+6000 {
		t.Errorf("the whole prompt counts %d tokens", n)
	}
}

// TestHostileNonUTF8EverywhereAndBinary feeds Latin-1 bytes through the
// author, the message and a file, next to a binary file, to a hosted model
// over the OpenAI wire format: every body that leaves the machine and every
// report is valid UTF-8, with U+FFFD for the bytes that could not be read,
// and the binary file is named, not sent.
func TestHostileNonUTF8EverywhereAndBinary(t *testing.T) {
	r := gittest.New(t)
	r.Write("a.txt", "a\n").Commit("Start")
	r.WriteBytes("names.txt", []byte("Ren\xe9\n")).WriteBytes("photo.jpg", []byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00"))
	wt, err := r.Git.Worktree()
	if err != nil {
		t.Fatal(err)
	}
	if err := wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
		t.Fatal(err)
	}
	sig := &object.Signature{Name: "Ren\xe9 Fran\xe7ois", Email: "rene@example.com", When: gittest.Epoch.Add(time.Hour)}
	if _, err := wt.Commit("Ajout\xe9 des noms\n\nCaf\xe9.", &git.CommitOptions{Author: sig, Committer: sig}); err != nil {
		t.Fatal(err)
	}
	srv := fakeprovider.Start(t, fakeprovider.Config{Window: time.Second})
	h := newHarness(t)
	h.env["OPENAI_API_KEY"] = "k"
	for _, format := range []string{"jsonl", "markdown", "json"} {
		h.db = filepath.Join(t.TempDir(), "d.db")
		res := h.run(context.Background(), "summarize", r.Dir, "-f", format, "--model", "openai:gpt-4o-mini", "--base-url", srv.OpenAIBaseURL())
		if res.code != 0 {
			t.Fatalf("%s: exit %d: %s", format, res.code, res.errOut)
		}
		if !utf8.ValidString(res.out) || !utf8.ValidString(res.errOut) {
			t.Errorf("%s: the output is not valid UTF-8:\n%q", format, res.out)
		}
		if !strings.Contains(res.out, "Ajout\uFFFD des noms") {
			t.Errorf("%s: the subject should keep its readable part:\n%s", format, res.out)
		}
		if format == "jsonl" && !strings.Contains(res.out, `{"path":"photo.jpg","reason":"binary"}`) {
			t.Errorf("the binary file should be named as skipped:\n%s", res.out)
		}
	}
	db, err := sql.Open("sqlite", h.db)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var author string
	if err := db.QueryRow(`SELECT author_name FROM commits`).Scan(&author); err != nil || author != "Ren\uFFFD Fran\uFFFDois" {
		t.Errorf("the stored author is %q (%v), want the readable part with U+FFFD", author, err)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want one per run", len(reqs))
	}
	for _, req := range reqs {
		if !utf8.Valid(req.Body) {
			t.Errorf("a request body is not valid UTF-8: %q", req.Body)
		}
		p := req.Messages[len(req.Messages)-1].Content
		for _, want := range []string{"Author: Ren\uFFFD Fran\uFFFDois", "Ajout\uFFFD des noms", "+Ren\uFFFD\n", "photo.jpg (binary)"} {
			if !strings.Contains(p, want) {
				t.Errorf("the request does not hold %q:\n%s", want, p)
			}
		}
		if strings.Contains(p, "JFIF") {
			t.Error("the binary file's bytes were sent")
		}
	}
}

// writeHugeLineDataset writes a dataset whose second line is size bytes,
// streamed to disk so that the test itself never holds it.
func writeHugeLineDataset(t *testing.T, size int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "huge.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintln(w, `{"prompt": "2", "expected": "2"}`)
	head := `{"id": "huge", "prompt": "`
	w.WriteString(head)
	chunk := strings.Repeat("All work and no play makes Jack a dull boy. ", 1<<10)
	for n := len(head) + 2; n < size; {
		k := min(len(chunk), size-n)
		w.WriteString(chunk[:k])
		n += k
	}
	w.WriteString("\"}\n")
	fmt.Fprintln(w, `{"prompt": "3", "expected": "3"}`)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestHostileHundredMegabyteJSONLLine runs digest eval on a dataset with a
// 100 MB line: the line is refused with its file, line number and the
// limit, read past without being held, and --skip-invalid evaluates the
// rest.
func TestHostileHundredMegabyteJSONLLine(t *testing.T) {
	const size = 100 << 20
	data := writeHugeLineDataset(t, size)
	h := newHarness(t)
	var res result
	baseline := allocated(func() { h.run(context.Background(), "eval", sums(t), "-f", "json") })
	used := allocated(func() { res = h.run(context.Background(), "eval", data, "-f", "json") })
	oneLineError(t, res, 1, data+":2: line is 104857600 bytes, longer than the 16777216-byte limit")
	// What the line allocates is bounded by the limit, not by the line.
	if used > baseline+size/2 {
		t.Errorf("the run allocated %d MB, %d MB more than a small dataset: the line was held", used>>20, (used-baseline)>>20)
	}
	res = h.run(context.Background(), "eval", data, "--skip-invalid", "-f", "json")
	if res.code != 0 || !strings.Contains(res.out, `"items": 2`) || !strings.Contains(res.errOut, "digest: skipped "+data+":2: line is 104857600 bytes") {
		t.Errorf("--skip-invalid: exit %d, stdout %.300s, stderr %q", res.code, res.out, res.errOut)
	}
}

// TestHostileModelSpecsInEval covers eval's side of the model checks that
// TestErrorsAndExitCodes and TestHostedModelWithoutKeyNamesTheVariable make
// for summarize: nothing is read or sent before the error.
func TestHostileModelSpecsInEval(t *testing.T) {
	data := sums(t)
	for _, tt := range []struct {
		models string
		wants  []string
	}{
		{"acme:m1", []string{`unknown provider "acme"`, "openai, openai-responses, anthropic, ollama"}},
		{"gpt4", []string{`"gpt4" is not PROVIDER:MODEL`}},
		{"openai:", []string{`"openai:" is not PROVIDER:MODEL`}},
		{"offline,offline", []string{"--models names offline twice"}},
		{"openai:gpt-4o-mini", []string{"needs an API key in OPENAI_API_KEY", "Try: export OPENAI_API_KEY"}},
		{"anthropic:claude-haiku-4-5", []string{"needs an API key in ANTHROPIC_API_KEY", "Try: export ANTHROPIC_API_KEY"}},
	} {
		h := newHarness(t)
		res := h.run(context.Background(), "eval", data, "--models", tt.models)
		t.Run(tt.models, func(t *testing.T) { oneLineError(t, res, 2, tt.wants...) })
		if h.calls.Load() != 0 || res.out != "" {
			t.Errorf("%s: %d calls, stdout %q", tt.models, h.calls.Load(), res.out)
		}
		if _, err := os.Stat(h.db); err == nil {
			t.Errorf("%s: a usage error created the database", tt.models)
		}
	}
}

// TestHostileFlagValues gives every numeric and duration flag of both
// commands a value it cannot take: each is a usage error (exit 2) of one
// line naming the flag, before anything is read, stored or sent.
func TestHostileFlagValues(t *testing.T) {
	repo := fixture(t).Dir
	data := sums(t)
	for _, tt := range []struct {
		flag  string
		value string
	}{
		{"--max-commits", "-1"},
		{"--max-diff-tokens", "-5"},
		{"--max-diff-tokens", "0"},
		{"--concurrency", "0"},
		{"--concurrency", "-3"},
		{"--batch-size", "0"},
		{"--batch-window", "-1s"},
		{"--batch-window", "soon"},
		{"--rpm", "-1"},
		{"--tpm", "-5"},
		{"--rpm", "lots"},
		{"--timeout", "5x"},
		{"--timeout", "-1s"},
		{"--max-cost", "-1"},
		{"--max-cost", "NaN"},
		{"--max-cost", "Inf"},
		{"--lease", "abc"},
		{"--lease", "0"},
		{"--lease", "-5m"},
	} {
		h := newHarness(t)
		res := h.run(context.Background(), "summarize", repo, tt.flag, tt.value)
		t.Run("summarize "+tt.flag+"="+tt.value, func(t *testing.T) { oneLineError(t, res, 2, tt.flag) })
		if h.calls.Load() != 0 || res.out != "" {
			t.Errorf("summarize %s %s: %d calls, stdout %q", tt.flag, tt.value, h.calls.Load(), res.out)
		}
	}
	for _, tt := range []struct {
		flag  string
		value string
	}{
		{"--max-tokens", "0"},
		{"--repeat", "0"},
		{"--repeat", "-2"},
		{"--limit", "-1"},
		{"--tolerance", "-0.1"},
		{"--tolerance", "NaN"},
		{"--temperature", "-1"},
		{"--temperature", "NaN"},
		{"--concurrency", "0"},
		{"--concurrency", "-1"},
		{"--timeout", "5x"},
		{"--timeout", "-1s"},
		{"--rpm", "-1"},
		{"--tpm", "-5"},
		{"--max-cost", "-1"},
		{"--max-cost", "+Inf"},
		{"--lease", "abc"},
		{"--seed", "1.5"},
	} {
		h := newHarness(t)
		res := h.run(context.Background(), "eval", data, tt.flag, tt.value)
		t.Run("eval "+tt.flag+"="+tt.value, func(t *testing.T) { oneLineError(t, res, 2, tt.flag) })
		if h.calls.Load() != 0 || res.out != "" {
			t.Errorf("eval %s %s: %d calls, stdout %q", tt.flag, tt.value, h.calls.Load(), res.out)
		}
		if _, err := os.Stat(h.db); err == nil {
			t.Errorf("eval %s %s: a usage error created the database", tt.flag, tt.value)
		}
	}
	// A DIGEST_* variable is checked like the flag it stands for.
	h := newHarness(t)
	h.env["DIGEST_TIMEOUT"] = "forever"
	oneLineError(t, h.run(context.Background(), "eval", data), 2, "DIGEST_TIMEOUT", "--timeout")
}

// realDatabase is a digest database holding one run's summaries.
func realDatabase(t *testing.T) []byte {
	t.Helper()
	h := newHarness(t)
	if res := h.run(context.Background(), "summarize", fixture(t).Dir, "-q"); res.code != 0 {
		t.Fatal(res.errOut)
	}
	b, err := os.ReadFile(h.db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(h.db + "-wal"); err == nil {
		t.Fatal("the database was left with a -wal file: a copy of the main file alone would not be whole")
	}
	return b
}

// foreignDatabase is a SQLite database of another program.
func foreignDatabase(t *testing.T) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "notes.sqlite")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`CREATE TABLE notes (body TEXT)`, `INSERT INTO notes VALUES ('my notes')`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestHostileDatabaseFiles points --db at files digest must not use: each
// command says so in one line, exits 1, and leaves the file byte for byte
// as it was, with no -wal or -shm beside it.
func TestHostileDatabaseFiles(t *testing.T) {
	repo := fixture(t).Dir
	data := sums(t)
	random := make([]byte, 64<<10)
	for i := range random {
		random[i] = byte(i*7919 + i>>8*31)
	}
	real := realDatabase(t)
	cases := []struct {
		name    string
		content []byte
		want    string
	}{
		{"random bytes", random, "not a usable SQLite database"},
		{"truncated to its first page", real[:4096], "(truncated: "},
		{"truncated to half", real[:len(real)/2/4096*4096], "(truncated: "},
		{"truncated mid-page", real[:len(real)-1000], "(truncated: "},
		{"another program's SQLite database", foreignDatabase(t), "SQLite database of another program"},
	}
	commands := map[string][]string{
		"summarize": {"summarize", repo},
		"eval":      {"eval", data, "-f", "json"},
		"runs list": {"runs", "list"},
	}
	for _, c := range cases {
		for name, args := range commands {
			t.Run(c.name+"/"+name, func(t *testing.T) {
				h := newHarness(t)
				h.db = filepath.Join(t.TempDir(), "digest.db")
				if err := os.WriteFile(h.db, c.content, 0o600); err != nil {
					t.Fatal(err)
				}
				res := h.run(context.Background(), args...)
				oneLineError(t, res, 1, h.db, c.want)
				if got, err := os.ReadFile(h.db); err != nil || !bytes.Equal(got, c.content) {
					t.Errorf("the file changed (%d bytes before, %d after, %v)", len(c.content), len(got), err)
				}
				for _, side := range []string{"-wal", "-shm", "-journal"} {
					if _, err := os.Stat(h.db + side); err == nil {
						t.Errorf("%s%s was created beside it", h.db, side)
					}
				}
				if h.calls.Load() != 0 {
					t.Errorf("%d provider calls", h.calls.Load())
				}
			})
		}
	}
	// The intact database still works: the refusals above are about the
	// files, not about digest's own databases.
	h := newHarness(t)
	h.db = filepath.Join(t.TempDir(), "digest.db")
	if err := os.WriteFile(h.db, real, 0o600); err != nil {
		t.Fatal(err)
	}
	if res := h.run(context.Background(), "summarize", repo, "-f", "jsonl"); res.code != 0 || strings.Count(res.out, `"cached":true`) != 8 {
		t.Errorf("a copy of a real database: exit %d, %s", res.code, res.errOut)
	}
}

// TestHostileUnwritableDatabase asks for a database where none can be
// written: under a regular file (refused even to root), in a read-only
// directory and as a read-only file (where permissions bind).
func TestHostileUnwritableDatabase(t *testing.T) {
	repo := fixture(t).Dir
	data := sums(t)
	type place struct {
		name  string
		path  func(t *testing.T) string
		want  string
		root  bool // whether the case holds for root, whom permissions do not bind
		check func(t *testing.T)
	}
	var keep string
	places := []place{
		{
			name: "under a regular file",
			root: true,
			path: func(t *testing.T) string {
				keep = filepath.Join(t.TempDir(), "plain")
				if err := os.WriteFile(keep, []byte("keep me"), 0o600); err != nil {
					t.Fatal(err)
				}
				return filepath.Join(keep, "sub", "digest.db")
			},
			want: "create database directory",
			check: func(t *testing.T) {
				if b, _ := os.ReadFile(keep); string(b) != "keep me" {
					t.Errorf("the file in the way now holds %q", b)
				}
			},
		},
		{
			name: "in a read-only directory",
			path: func(t *testing.T) string {
				dir := filepath.Join(t.TempDir(), "ro")
				if err := os.Mkdir(dir, 0o500); err != nil {
					t.Fatal(err)
				}
				return filepath.Join(dir, "digest.db")
			},
			want: "digest.db",
		},
		{
			name: "a read-only database file",
			path: func(t *testing.T) string {
				path := filepath.Join(t.TempDir(), "digest.db")
				if err := os.WriteFile(path, realDatabase(t), 0o400); err != nil {
					t.Fatal(err)
				}
				return path
			},
			want: "digest.db",
		},
	}
	for _, p := range places {
		for name, args := range map[string][]string{"summarize": {"summarize", repo}, "eval": {"eval", data, "-f", "json"}} {
			t.Run(p.name+"/"+name, func(t *testing.T) {
				if !p.root && os.Geteuid() == 0 {
					t.Skip("root is not bound by file permissions; the regular-file case covers root")
				}
				h := newHarness(t)
				h.db = p.path(t)
				res := h.run(context.Background(), args...)
				oneLineError(t, res, 1, p.want, "Try: --db")
				if p.check != nil {
					p.check(t)
				}
			})
		}
	}
}

// A pasted log in a commit message is cut like a diff, so the request stays
// within reach of the budget whatever the message holds.
func TestHostileFiveMegabyteCommitMessage(t *testing.T) {
	r := gittest.New(t)
	log := strings.Repeat("2026-11-30T03:00:00Z worker 7 retried the upload and failed again\n", 5<<20/66)
	hash := r.Write("main.go", "package main\n\nfunc main() {}\n").Commit("Start, with the whole build log\n\n" + log)

	h := newHarness(t)
	prompts := sentPrompts(h)
	res := h.run(context.Background(), "summarize", r.Dir, "-f", "jsonl")
	if res.code != 0 {
		t.Fatalf("exit %d: %s", res.code, res.errOut)
	}
	if got := entries(t, res.out); len(got) != 1 || got[0]["commit"] != hash || got[0]["subject"] != "Start, with the whole build log" {
		t.Fatalf("want the commit with its subject:\n%.500s", res.out)
	}
	sent := strings.Join(prompts(), "")
	if !strings.Contains(sent, "[digest: message cut to ") || len(sent) > 3*prompt.MaxMessageBytes {
		t.Errorf("the message was not cut: %d bytes sent", len(sent))
	}
}
