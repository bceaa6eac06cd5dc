package summarize

// Hostile input through the pipeline: a shallow clone, a 50 MB one-line
// file, 10,000 files in one commit, non-UTF-8 bytes everywhere and a 5 MB
// commit message are each bounded (in what is read, sent and kept) and
// leave the rest of the run done. The command's side of the same cases
// (one line, exit codes) is in cmd's hostile tests.

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/memory"

	"github.com/digest-cli/digest/internal/changelog"
	"github.com/digest-cli/digest/internal/gittest"
	"github.com/digest-cli/digest/internal/history"
	"github.com/digest-cli/digest/internal/prompt"
)

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

// TestHostileShallowClone clones a go-git history with the real git at depth
// 3: the run summarizes the two commits whose parents the clone has, and
// leaves out the boundary commit with a warning, since its change cannot be
// known; its missing parent is neither an error nor walked past. The full
// history, under the same id, gets the boundary commit summarized against
// its real parent; a range reaching past the boundary names the revision.
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
	h := newTestRun(t)
	opts := h.options("", dir)
	opts.RepoID = "example/notes"
	res := h.mustRun(opts)
	got := res.Changelog.Entries
	if len(got) != 2 {
		t.Fatalf("%d entries, want the 2 commits whose parents the clone has", len(got))
	}
	for i, e := range got {
		if want := hashes[5-i]; e.Commit != want {
			t.Errorf("entry %d is %s, want %s", i, e.Commit, want)
		}
	}
	if s := got[1].Details; !strings.Contains(s, "modifies notes.txt") || !strings.Contains(s, "+1/-0") {
		t.Errorf("a commit inside the clone should be diffed against its parent: %q", s)
	}
	// git shows the boundary as adding the file whole, which is not what it
	// changed: the run leaves it out and says why, rather than cache a wrong
	// summary for every clone that shares the cache.
	if logs := h.logs.String(); !strings.Contains(logs, "commit="+hashes[3]) || !strings.Contains(logs, "edge of a shallow clone") ||
		!strings.Contains(logs, "Try: git fetch --deepen=1") {
		t.Errorf("no warning naming the boundary commit:\n%s", logs)
	}
	if st := res.Changelog.Stats; st.Commits != 2 || st.Cached != 0 || st.Summarized != 2 || st.Failed != 0 {
		t.Errorf("stats %+v, want 2 commits seen, 2 summarized", st)
	}
	opts.Repos = []string{src.Dir}
	full := h.mustRun(opts).Changelog.Entries
	if len(full) != 6 {
		t.Fatalf("full clone: %d entries, want 6", len(full))
	}
	if s := full[2].Details; full[2].Cached || !strings.Contains(s, "modifies notes.txt") || !strings.Contains(s, "+1/-0") {
		t.Errorf("the former boundary commit in the full clone: cached %v, %q", full[2].Cached, s)
	}
	opts.Repos, opts.Walk.Revs = []string{dir}, []string{"HEAD~5..HEAD"}
	if _, err := h.run(context.Background(), opts); err == nil || !strings.Contains(err.Error(), `unknown revision "HEAD~3": it names`) || !strings.Contains(err.Error(), "Try: ") {
		t.Errorf("a range past the boundary: %v", err)
	}
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

	h := newTestRun(t)
	before := h.options("", r.Dir)
	before.Walk.Revs = []string{big + "~1"}
	baseline := allocated(func() { h.mustRun(before) })
	h.db = filepath.Join(t.TempDir(), "d.db")
	opts := h.options("", r.Dir)
	opts.MaxDiffTokens = 500
	var res *Output
	used := allocated(func() { res = h.mustRun(opts) })
	got := res.Changelog.Entries
	if len(got) != 2 || got[0].Commit != big {
		t.Fatalf("entries %v, want both commits, the big one first", commits(got))
	}
	if s := got[0].SkippedFiles; len(s) != 1 || s[0] != (changelog.SkippedFile{Path: "data/blob.txt", Reason: history.SkipLarge}) {
		t.Errorf("skipped files %v, want data/blob.txt as large", s)
	}
	// Reading the blob would allocate at least its 50 MB.
	if used > baseline+size/2 {
		t.Errorf("the run allocated %d MB, %d MB more than a run without the big file: the blob was read", used>>20, (used-baseline)>>20)
	}
	var sent string
	for _, p := range h.sent {
		if strings.Contains(p, big) {
			sent = p
		}
	}
	if !strings.Contains(sent, "data loaded") || !strings.Contains(sent, "data/blob.txt (large)") {
		t.Errorf("the prompt should hold main.go's diff and name the large file:\n%s", sent)
	}
	if n := h.tok.Count(sent); n > 500+600 {
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
	h := newTestRun(t)
	opts := h.options("", r.Dir)
	opts.Walk.Revs, opts.Walk.MaxCommits = []string{hash}, 1
	got := h.mustRun(opts).Changelog.Entries
	if len(got) != 1 || !got[0].Truncated {
		t.Fatalf("%d entries, want the one commit, its diff cut", len(got))
	}
	if n := len(got[0].SkippedFiles); n != vendored {
		t.Errorf("%d skipped files in the report, want the %d vendored ones", n, vendored)
	}
	if len(h.sent) != 1 {
		t.Fatalf("%d requests, want 1", len(h.sent))
	}
	p := h.sent[0]
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
	if n := h.tok.Count(diff); n > 4000+100 {
		t.Errorf("the diff part counts %d tokens, over the default 4000", n)
	}
	if n := h.tok.Count(p); n > 4000+6000 {
		t.Errorf("the whole prompt counts %d tokens", n)
	}
}

// TestHostileNonUTF8EverywhereAndBinary feeds Latin-1 bytes through the
// author, the message and a file, next to a binary file: what is sent and
// what is reported and stored is valid UTF-8, with U+FFFD for the bytes
// that could not be read, and the binary file is named, not sent.
func TestHostileNonUTF8EverywhereAndBinary(t *testing.T) {
	dir, hash := gittest.Latin1Repo(t)
	h := newTestRun(t)
	res := h.mustRun(h.options("openai:gpt-4o-mini", dir))
	if len(h.sent) != 1 {
		t.Fatalf("%d requests, want 1", len(h.sent))
	}
	p := h.sent[0]
	if !utf8.ValidString(p) {
		t.Errorf("the request is not valid UTF-8: %q", p)
	}
	for _, want := range []string{"Author: Ren\uFFFD Fran\uFFFDois", "Ajout\uFFFD des noms", "+Ren\uFFFD\n", "photo.jpg (binary)"} {
		if !strings.Contains(p, want) {
			t.Errorf("the request does not hold %q:\n%s", want, p)
		}
	}
	if strings.Contains(p, "JFIF") {
		t.Error("the binary file's bytes were sent")
	}
	var e *changelog.Entry
	for i := range res.Changelog.Entries {
		if res.Changelog.Entries[i].Commit == hash {
			e = &res.Changelog.Entries[i]
		}
	}
	if e == nil {
		t.Fatal("no entry for the Latin-1 commit")
	}
	if e.Subject != "Ajout\uFFFD des noms" || e.Author != "Ren\uFFFD Fran\uFFFDois" || !utf8.ValidString(e.Summary) {
		t.Errorf("entry: subject %q, author %q, summary valid %v; want the readable parts with U+FFFD", e.Subject, e.Author, utf8.ValidString(e.Summary))
	}
	if len(e.SkippedFiles) != 1 || e.SkippedFiles[0] != (changelog.SkippedFile{Path: "photo.jpg", Reason: history.SkipBinary}) {
		t.Errorf("skipped files %v, want photo.jpg as binary", e.SkippedFiles)
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
}

// TestHostileFiveMegabyteCommitMessage: a commit whose message holds a
// whole build log is summarized with its subject, the message sent cut.
func TestHostileFiveMegabyteCommitMessage(t *testing.T) {
	r := gittest.New(t)
	log := strings.Repeat("2026-11-30T03:00:00Z worker 7 retried the upload and failed again\n", 5<<20/66)
	hash := r.Write("main.go", "package main\n\nfunc main() {}\n").Commit("Start, with the whole build log\n\n" + log)
	h := newTestRun(t)
	got := h.mustRun(h.options("", r.Dir)).Changelog.Entries
	if len(got) != 1 || got[0].Commit != hash || got[0].Subject != "Start, with the whole build log" {
		t.Fatalf("want the commit with its subject, got %d entries", len(got))
	}
	sent := strings.Join(h.sent, "")
	if !strings.Contains(sent, "[digest: message cut to ") || len(sent) > 3*prompt.MaxMessageBytes {
		t.Errorf("the message was not cut: %d bytes sent", len(sent))
	}
}
