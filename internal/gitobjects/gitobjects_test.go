package gitobjects

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/storer"

	"github.com/digest-cli/digest/internal/gittest"
)

// history builds a repository whose files change a little in every commit,
// so that a repack stores most versions as deltas of others.
func history(t *testing.T, commits int) *gittest.Repo {
	t.Helper()
	r := gittest.New(t)
	rng := rand.New(rand.NewPCG(1, 2))
	lines := make([]string, 300)
	for i := range lines {
		lines[i] = fmt.Sprintf("line %d of a file that changes a little in each commit", i)
	}
	for c := range commits {
		for range 3 {
			lines[rng.IntN(len(lines))] = fmt.Sprintf("changed in commit %d: %x", c, rng.Uint64())
		}
		r.Write("a.txt", strings.Join(lines, "\n")).
			Write(fmt.Sprintf("dir/f%d.txt", c%7), strings.Join(lines[c%50:c%50+40], "\n")).
			WriteBytes("bin.dat", bytes.Repeat([]byte{0, byte(c)}, 5000+c))
		r.Commit(fmt.Sprintf("commit %d", c))
	}
	return r
}

func needGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
}

// gitCmd runs git apart from this machine's configuration.
func gitCmd(t *testing.T, stdin string, args ...string) *exec.Cmd {
	t.Helper()
	needGit(t)
	cmd := exec.Command("git", args...)
	cmd.Env = gittest.GitEnv(t)
	cmd.Stdin = strings.NewReader(stdin)
	return cmd
}

func gitRun(t *testing.T, dir, stdin string, args ...string) string {
	t.Helper()
	out, err := gitCmd(t, stdin, append([]string{"-C", dir}, args...)...).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	return string(out)
}

// packObjects packs the objects reachable from revs (rev-list arguments) into a
// new pack with pack-objects' options, and drops the loose copies. Not
// `git repack`: its pack-objects reads revisions from an inherited standard
// input, which under `go test ./...` here once held another program's output.
func packObjects(t *testing.T, dir string, revs []string, options ...string) {
	t.Helper()
	objects := gitRun(t, dir, "", append([]string{"rev-list", "--objects"}, revs...)...)
	gitRun(t, dir, objects, append(append([]string{"pack-objects", "-q"}, options...), ".git/objects/pack/pack")...)
	gitRun(t, dir, "", "prune-packed")
}

type want struct {
	h    plumbing.Hash
	typ  plumbing.ObjectType
	data []byte
}

// goGitObjects reads every object of dir with go-git.
func goGitObjects(t *testing.T, dir string) []want {
	t.Helper()
	repo, err := git.PlainOpen(dir)
	if err != nil {
		t.Fatal(err)
	}
	var all []want
	iter, err := repo.Storer.IterEncodedObjects(plumbing.AnyObject)
	if err != nil {
		t.Fatal(err)
	}
	err = iter.ForEach(func(o plumbing.EncodedObject) error {
		rd, err := o.Reader()
		if err != nil {
			return err
		}
		defer rd.Close()
		data, err := io.ReadAll(rd)
		all = append(all, want{o.Hash(), o.Type(), data})
		return err
	})
	if err != nil && !errors.Is(err, storer.ErrStop) {
		t.Fatal(err)
	}
	return all
}

// sameObjects reads every object of all from dir and checks ours is the
// same type and content, from several goroutines at once, twice: the second
// time many are served from the cache of bases.
func sameObjects(t *testing.T, dir string, all []want, cacheBytes int) int {
	t.Helper()
	db, err := Open(filepath.Join(dir, ".git", "objects"), cacheBytes)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < 2*len(all); i += 4 {
				o := all[i%len(all)]
				got, err := db.Read(IDFromHash(o.h))
				if err != nil {
					t.Errorf("%s: %v", o.h, err)
					continue
				}
				if got.Type != o.typ || !bytes.Equal(got.Data, o.data) || got.Size != int64(len(o.data)) {
					t.Errorf("%s: read %s of %d bytes, go-git %s of %d", o.h, got.Type, len(got.Data), o.typ, len(o.data))
				}
				if !db.Has(IDFromHash(o.h)) {
					t.Errorf("%s: Has is false for an object Read finds", o.h)
				}
			}
		})
	}
	wg.Wait()
	return len(all)
}

func TestReadsLooseObjects(t *testing.T) {
	r := history(t, 5)
	if n := sameObjects(t, r.Dir, goGitObjects(t, r.Dir), 1<<20); n == 0 {
		t.Fatal("no objects compared")
	}
}

// TestReadsPacksLikeGoGit repacks with git in the ways a repository can be
// packed: deltas by offset, by reference, deep chains, and a cache too
// small to keep anything, so every chain is resolved from its bottom.
func TestReadsPacksLikeGoGit(t *testing.T) {
	needGit(t)
	for _, tc := range []struct {
		name  string
		args  []string
		cache int
	}{
		{"offset deltas", []string{"--delta-base-offset", "--depth=50", "--window=50"}, 4 << 20},
		{"reference deltas", []string{"--depth=50"}, 4 << 20},
		{"no cache", []string{"--delta-base-offset", "--depth=250"}, 0},
		// Bases overwrite each other all the time, while others read them.
		{"small cache", []string{"--delta-base-offset", "--depth=250"}, 64 << 10},
		{"index version 1", []string{"--delta-base-offset", "--index-version=1"}, 1 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := history(t, 40)
			// Read while loose, since go-git cannot read version 1 indexes.
			all := goGitObjects(t, r.Dir)
			packObjects(t, r.Dir, []string{"--all"}, tc.args...)
			packs, _ := filepath.Glob(filepath.Join(r.Dir, ".git", "objects", "pack", "*.pack"))
			if len(packs) != 1 {
				t.Fatalf("want one pack, found %v", packs)
			}
			if n := sameObjects(t, r.Dir, all, tc.cache); n < 100 {
				t.Fatalf("compared only %d objects", n)
			}
		})
	}
}

// TestReadsPacksAndLooseTogether: objects written after a repack are loose
// beside the pack, and a pack made after Open is found when asked for.
func TestReadsPacksAndLooseTogether(t *testing.T) {
	needGit(t)
	r := history(t, 10)
	packObjects(t, r.Dir, []string{"--all"}, "--delta-base-offset")
	db, err := Open(filepath.Join(r.Dir, ".git", "objects"), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// gittest's go-git would not see the repack, so git commits from here.
	commit := func(name string) plumbing.Hash {
		os.WriteFile(filepath.Join(r.Dir, name), []byte(name+" is new\n"), 0o644)
		gitRun(t, r.Dir, "", "add", name)
		gitRun(t, r.Dir, "", "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", name)
		return plumbing.NewHash(strings.TrimSpace(gitRun(t, r.Dir, "", "rev-parse", "HEAD")))
	}
	later := commit("later.txt")
	obj, err := db.Read(IDFromHash(later))
	if err != nil || obj.Type != plumbing.CommitObject {
		t.Fatalf("loose commit beside a pack: %v %v", obj.Type, err)
	}
	newer := commit("newer.txt")
	packObjects(t, r.Dir, []string{later.String() + ".." + newer.String()}) // a second pack
	if !db.Has(IDFromHash(newer)) {
		t.Fatal("Has is false for an object in a pack made after Open")
	}
	if obj, err := db.Read(IDFromHash(newer)); err != nil || obj.Type != plumbing.CommitObject {
		t.Fatalf("object in a pack made after Open: %v %v", obj.Type, err)
	}
	sameObjects(t, r.Dir, goGitObjects(t, r.Dir), 1<<20)
}

// TestReadsAlternates: a `git clone --shared` has no objects of its own.
func TestReadsAlternates(t *testing.T) {
	needGit(t)
	r := history(t, 5)
	packObjects(t, r.Dir, []string{"--all"})
	clone := filepath.Join(t.TempDir(), "clone")
	if out, err := gitCmd(t, "", "clone", "-q", "--shared", r.Dir, clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	sameObjects(t, clone, goGitObjects(t, clone), 1<<20)
}

func TestReadLimitedGivesSizeWithoutContent(t *testing.T) {
	needGit(t)
	r := history(t, 20)
	packObjects(t, r.Dir, []string{"--all"}, "--delta-base-offset", "--depth=50")
	repo, err := git.PlainOpen(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	db, err := Open(filepath.Join(r.Dir, ".git", "objects"), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	iter, _ := repo.BlobObjects()
	checked := 0
	iter.ForEach(func(b *object.Blob) error {
		got, err := db.ReadLimited(IDFromHash(b.Hash), 1000)
		if err != nil {
			t.Fatal(err)
		}
		if got.Type != plumbing.BlobObject || got.Size != b.Size {
			t.Errorf("%s: %s of %d bytes, want a blob of %d", b.Hash, got.Type, got.Size, b.Size)
		}
		if (got.Data == nil) != (b.Size > 1000) {
			t.Errorf("%s: %d bytes read of a %d-byte blob limited to 1000", b.Hash, len(got.Data), b.Size)
		}
		checked++
		return nil
	})
	if checked < 20 {
		t.Fatalf("checked %d blobs", checked)
	}
}

func TestMissingObject(t *testing.T) {
	r := history(t, 2)
	db, err := Open(filepath.Join(r.Dir, ".git", "objects"), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h := plumbing.NewHash("0123456789abcdef0123456789abcdef01234567")
	if _, err := db.Read(IDFromHash(h)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
	if db.Has(IDFromHash(h)) {
		t.Fatal("Has is true for a missing object")
	}
}

// TestDamagedPackFailsCleanly flips bytes all over a pack: every read
// returns content equal to go-git's or an error, never a panic.
func TestDamagedPackFailsCleanly(t *testing.T) {
	needGit(t)
	r := history(t, 15)
	packObjects(t, r.Dir, []string{"--all"}, "--delta-base-offset", "--depth=50")
	packs, _ := filepath.Glob(filepath.Join(r.Dir, ".git", "objects", "pack", "*.pack"))
	clean, err := os.ReadFile(packs[0])
	if err != nil {
		t.Fatal(err)
	}
	repo, err := git.PlainOpen(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var hashes []plumbing.Hash
	iter, _ := repo.Storer.IterEncodedObjects(plumbing.AnyObject)
	iter.ForEach(func(o plumbing.EncodedObject) error { hashes = append(hashes, o.Hash()); return nil })
	os.Chmod(packs[0], 0o644)
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 30 {
		damaged := bytes.Clone(clean)
		for range 1 + round%5 {
			damaged[12+rng.IntN(len(damaged)-32)] ^= byte(1 + rng.IntN(255))
		}
		if err := os.WriteFile(packs[0], damaged, 0o644); err != nil {
			t.Fatal(err)
		}
		db, err := Open(filepath.Join(r.Dir, ".git", "objects"), 1<<20)
		if err != nil {
			continue
		}
		for _, h := range hashes {
			db.Read(IDFromHash(h)) // must not panic; content checks are the pack checksum's job
		}
		db.Close()
	}
}

// TestLargeOffsets reads an index whose object lies past 2 GiB: its offset
// is an index into the table of 8-byte offsets, as in packs that large.
func TestLargeOffsets(t *testing.T) {
	var idx bytes.Buffer
	idx.WriteString("\xfftOc\x00\x00\x00\x02")
	name := bytes.Repeat([]byte{0xab}, 20)
	for b := range 256 {
		n := uint32(0)
		if b >= 0xab {
			n = 1
		}
		idx.Write([]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
	}
	idx.Write(name)
	idx.Write([]byte{0, 0, 0, 0})                         // CRC
	idx.Write([]byte{0x80, 0, 0, 0})                      // the first large offset
	idx.Write([]byte{0, 0, 0, 1, 0x2a, 0x05, 0xf2, 0x00}) // 5,000,000,000
	idx.Write(make([]byte, 40))                           // checksums
	p := &pack{hashLen: SHA1Size}
	if err := p.parseIndex(idx.Bytes()); err != nil {
		t.Fatal(err)
	}
	i := p.find(IDFromBytes(name))
	if i != 0 {
		t.Fatalf("find = %d, want 0", i)
	}
	if off, err := p.offset(i); err != nil || off != 5_000_000_000 {
		t.Fatalf("offset = %d, %v; want 5000000000", off, err)
	}
	// The same index with its large offset cut off gives an error, which
	// openPack meets when it reads every offset.
	cut := &pack{hashLen: SHA1Size}
	if err := cut.parseIndex(append(bytes.Clone(idx.Bytes()[:idx.Len()-48]), make([]byte, 40)...)); err != nil {
		t.Fatal(err)
	}
	if _, err := cut.offset(0); err == nil {
		t.Fatal("an offset into a missing large-offset table was read")
	}
}

// TestBorrowLendsTheCachedCopy: a borrowed object is the cache's own copy,
// the same bytes for every borrower, and let go it can be written over;
// Read always gives the caller a copy of its own.
func TestBorrowLendsTheCachedCopy(t *testing.T) {
	needGit(t)
	r := history(t, 10)
	all := goGitObjects(t, r.Dir)
	packObjects(t, r.Dir, []string{"--all"}, "--delta-base-offset")
	db, err := Open(filepath.Join(r.Dir, ".git", "objects"), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var blob want
	for _, o := range all {
		if o.typ == plumbing.BlobObject && len(o.data) > 0 {
			blob = o
			break
		}
	}
	first, release, err := db.Borrow(IDFromHash(blob.h), 0)
	if err != nil || !bytes.Equal(first.Data, blob.data) {
		t.Fatalf("borrowed %q (%v), want %q", first.Data, err, blob.data)
	}
	second, releaseSecond, err := db.Borrow(IDFromHash(blob.h), 0)
	if err != nil || unsafe.SliceData(second.Data) != unsafe.SliceData(first.Data) {
		t.Fatalf("a second borrower got other bytes than the first (%v): not lent from the cache", err)
	}
	read, err := db.Read(IDFromHash(blob.h))
	if err != nil || !bytes.Equal(read.Data, blob.data) || unsafe.SliceData(read.Data) == unsafe.SliceData(first.Data) {
		t.Fatalf("Read gave the cache's bytes or the wrong ones (%v)", err)
	}
	release()
	releaseSecond()
	for _, s := range db.cache.byKey {
		if n := s.pins.Load(); n != 0 {
			t.Errorf("a slot is still pinned %d times after every borrower let go", n)
		}
	}
}

// TestLargeLooseObjectSizeFromHeader: a loose blob over the limit costs
// the inflating of its header, not its size in memory. Stored uncompressed,
// the file is as large as the blob, as a loose binary of random bytes is.
func TestLargeLooseObjectSizeFromHeader(t *testing.T) {
	const size = 64 << 20
	r := gittest.New(t)
	objects := filepath.Join(r.Dir, ".git", "objects")
	tmp, err := os.CreateTemp(objects, "blob")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha1.New()
	zw, _ := zlib.NewWriterLevel(tmp, zlib.NoCompression)
	w := io.MultiWriter(sum, zw)
	fmt.Fprintf(w, "blob %d\x00", size)
	chunk := bytes.Repeat([]byte("0123456789abcdef"), 4096)
	for written := 0; written < size; written += len(chunk) {
		w.Write(chunk)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	tmp.Close()
	h := plumbing.NewHash(fmt.Sprintf("%x", sum.Sum(nil)))
	os.MkdirAll(filepath.Dir(loosePath(objects, IDFromHash(h))), 0o755)
	if err := os.Rename(tmp.Name(), loosePath(objects, IDFromHash(h))); err != nil {
		t.Fatal(err)
	}
	if info, _ := os.Stat(loosePath(objects, IDFromHash(h))); info.Size() < size {
		t.Fatalf("loose file of %d bytes, want it at least as large as the blob", info.Size())
	}
	if _, err := exec.LookPath("git"); err == nil {
		// git itself must take it for a loose object of that size.
		if got := strings.TrimSpace(gitRun(t, r.Dir, "", "cat-file", "-s", h.String())); got != fmt.Sprint(size) {
			t.Fatalf("git cat-file -s: %s", got)
		}
	}
	db, err := Open(objects, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	obj, err := db.ReadLimited(IDFromHash(h), 1<<20)
	runtime.ReadMemStats(&after)
	if err != nil || obj.Type != plumbing.BlobObject || obj.Size != size || obj.Data != nil {
		t.Fatalf("ReadLimited: %v of %d bytes, %d read, %v", obj.Type, obj.Size, len(obj.Data), err)
	}
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > 1<<20 {
		t.Fatalf("learning the size of a %d MB loose blob allocated %d KB", size>>20, allocated>>10)
	}
}
