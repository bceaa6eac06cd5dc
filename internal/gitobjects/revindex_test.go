package gitobjects

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// TestReverseIndexStandsInForStarts: with a pack's reverse index (".rev")
// every object reads as go-git reads it, and entries end where the sorted
// offsets say; a reverse index of another pack is not taken, and a damaged
// one gives errors, never another object's bytes.
func TestReverseIndexStandsInForStarts(t *testing.T) {
	r := history(t, 30)
	all := goGitObjects(t, r.Dir)
	// As packObjects does, with the reverse index git writes by default
	// since 2.41.
	list := gitRun(t, r.Dir, "", "rev-list", "--objects", "--all")
	gitRun(t, r.Dir, list, "-c", "pack.writeReverseIndex=true", "pack-objects", "-q", "--delta-base-offset", "--depth=50", ".git/objects/pack/pack")
	gitRun(t, r.Dir, "", "prune-packed")
	revs, _ := filepath.Glob(filepath.Join(r.Dir, ".git", "objects", "pack", "*.rev"))
	if len(revs) != 1 {
		t.Fatalf("git wrote reverse indexes %v, want one", revs)
	}
	objects := filepath.Join(r.Dir, ".git", "objects")
	db, err := Open(objects, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	p := db.packs[0]
	if p.rev == nil || p.starts.Load() != nil {
		t.Fatal("the reverse index was not used")
	}
	// What sorting every offset gives, entry by entry.
	sorted := &pack{name: p.name, fanout: p.fanout, names: p.names, offsets: p.offsets, large: p.large, size: p.size, hashLen: p.hashLen}
	if err := sorted.sortStarts(); err != nil {
		t.Fatal(err)
	}
	defer sorted.freeStarts()
	starts := *sorted.starts.Load()
	if !slices.IsSorted(starts) {
		t.Fatal("radix sort left offsets unsorted")
	}
	check := func(how string) {
		t.Helper()
		for _, off := range starts[:len(starts)-1] {
			want, _ := sorted.end(off)
			if got, err := p.end(off); err != nil || got != want {
				t.Errorf("%s: entry at %d ends at %d (%v), the sorted offsets say %d", how, off, got, err, want)
				return
			}
		}
		if _, err := p.end(starts[0] + 1); err == nil {
			t.Errorf("%s: an offset inside an entry was taken for an entry's start", how)
		}
	}
	check("by the reverse index")
	if p.starts.Load() != nil {
		t.Fatal("sorted before many lookups")
	}
	// After many lookups the pack sorts its offsets, while others look up,
	// and answers the same.
	p.revLookups.Store(sortAfterLookups - 20)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { check("while sorting") })
	}
	wg.Wait()
	if p.starts.Load() == nil {
		t.Fatal("never sorted")
	}
	check("after sorting")
	db.Close()
	if n := sameObjects(t, r.Dir, all, 1<<20); n < 100 {
		t.Fatalf("compared only %d objects", n)
	}

	clean, err := os.ReadFile(revs[0])
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(revs[0], 0o644)
	other := bytes.Clone(clean)
	other[len(other)-40] ^= 0xff // names another pack's checksum
	if err := os.WriteFile(revs[0], other, 0o644); err != nil {
		t.Fatal(err)
	}
	db, err = Open(objects, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if db.packs[0].rev != nil {
		t.Error("a reverse index naming another pack was used")
	}
	db.Close()
	sameObjects(t, r.Dir, all, 1<<20)

	// Two entries swapped: lookups that meet them fail, or find the right end.
	swapped := bytes.Clone(clean)
	a, b := swapped[12+4*5:12+4*6], swapped[12+4*40:12+4*41]
	va, vb := binary.BigEndian.Uint32(a), binary.BigEndian.Uint32(b)
	binary.BigEndian.PutUint32(a, vb)
	binary.BigEndian.PutUint32(b, va)
	if err := os.WriteFile(revs[0], swapped, 0o644); err != nil {
		t.Fatal(err)
	}
	db, err = Open(objects, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, o := range all {
		got, err := db.Read(IDFromHash(o.h))
		if err == nil && (got.Type != o.typ || !bytes.Equal(got.Data, o.data)) {
			t.Fatalf("%s read wrong through a damaged reverse index", o.h)
		}
	}
}
