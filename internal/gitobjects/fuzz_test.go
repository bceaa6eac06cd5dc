package gitobjects

import (
	"bytes"
	"compress/zlib"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

func deflate(b []byte) []byte {
	var out bytes.Buffer
	w := zlib.NewWriter(&out)
	w.Write(b)
	w.Close()
	return out.Bytes()
}

// FuzzParseLoose reads made-up loose objects, compressed and not: an error
// or an object of the size its header states, never a panic or a huge
// allocation for a header that lies.
func FuzzParseLoose(f *testing.F) {
	f.Add(deflate([]byte("blob 5\x00hello")), int64(0))
	f.Add(deflate([]byte("blob 5\x00hello")), int64(3))
	f.Add(deflate([]byte("commit 999999999\x00tree")), int64(0))
	f.Add(deflate([]byte("tree 3\x00ab")), int64(0))
	f.Add(deflate([]byte("bogus 1\x00a")), int64(0))
	f.Add([]byte("not zlib at all"), int64(0))
	f.Fuzz(func(t *testing.T, raw []byte, limit int64) {
		obj, err := parseLoose(bytes.NewReader(raw), int64(len(raw)), limit)
		if err != nil {
			return
		}
		if obj.Data != nil && int64(len(obj.Data)) != obj.Size {
			t.Fatalf("%d bytes read of an object of %d", len(obj.Data), obj.Size)
		}
	})
}

// FuzzApplyDelta feeds damaged and made-up deltas: an error or a result of
// the size the delta states, never a panic or an out-of-range read.
func FuzzApplyDelta(f *testing.F) {
	base := []byte("hello, world\nsecond line\n")
	// base size 25, result size 18: copy 12 bytes from 0, insert "!\n", copy 4 from 13.
	f.Add(base, []byte{25, 18, 0x90, 12, 2, '!', '\n', 0x91, 13, 4})
	f.Add(base, []byte{25, 0})
	f.Add(base, []byte{25, 3, 3, 'a', 'b', 'c'})
	f.Add(base, []byte{25, 5, 0x91, 0xff, 5})          // copy past the base
	f.Add(base, []byte{25, 5, 0})                      // reserved opcode
	f.Add(base, []byte{0x80, 0x80, 0x80})              // unterminated size
	f.Add([]byte{}, []byte{0, 0x80, 0x80, 0x80, 0x01}) // a 2 MB result from nothing
	f.Fuzz(func(t *testing.T, base, delta []byte) {
		out, err := applyDeltaInto(nil, base, delta)
		if err != nil {
			return
		}
		_, size, _, err := deltaSizes(delta)
		if err != nil || int64(len(out)) != size {
			t.Fatalf("result of %d bytes, the delta states %d (%v)", len(out), size, err)
		}
		// Applied in place, as into the cache's ring, it gives the same bytes
		// and never writes past the room given.
		room := make([]byte, size+8)
		for i := range room {
			room[i] = 0xa5
		}
		in, err := applyDeltaInto(room[:size:size], base, delta)
		if err != nil || !bytes.Equal(in, out) {
			t.Fatalf("in place: %q (%v), want %q", in, err, out)
		}
		if !bytes.Equal(room[size:], bytes.Repeat([]byte{0xa5}, 8)) {
			t.Fatal("applying in place wrote past the room given")
		}
	})
}

// FuzzParseEntryHeader reads made-up pack entry headers.
func FuzzParseEntryHeader(f *testing.F) {
	f.Add([]byte{0x35, 0x78, 0x9c}, int64(100))           // a blob of 5 bytes
	f.Add([]byte{0xb5, 0x02, 0x78}, int64(100))           // size continued
	f.Add([]byte{0x65, 0x81, 0x00, 0x78}, int64(1000))    // ofs delta
	f.Add([]byte{0x65, 0xff, 0xff, 0xff, 0x7f}, int64(5)) // distance beyond the pack's start
	f.Add(append([]byte{0x75}, bytes.Repeat([]byte{7}, 20)...), int64(100))
	f.Add([]byte{0x85}, int64(12))                                          // continuation with nothing after
	f.Add(append([]byte{0x75}, bytes.Repeat([]byte{7}, 32)...), int64(100)) // a SHA-256 ref delta
	f.Fuzz(func(t *testing.T, raw []byte, off int64) {
		for _, hashLen := range []int{SHA1Size, SHA256Size} {
			e, err := parseEntryHeader(raw, off, hashLen)
			if err != nil {
				continue
			}
			if e.typ == typeOfsDelta && (e.base < 0 || e.base >= off) {
				t.Fatalf("base %d for an entry at %d", e.base, off)
			}
			if len(e.data) > len(raw) {
				t.Fatal("data longer than the entry")
			}
			if e.typ == typeRefDelta && e.ref.Len() != hashLen {
				t.Fatalf("a %d-byte base name in a pack of %d-byte names", e.ref.Len(), hashLen)
			}
		}
	})
}

// FuzzParseIndex reads made-up pack indexes: lookups after a successful
// parse stay in bounds.
func FuzzParseIndex(f *testing.F) {
	v2 := append([]byte("\xfftOc\x00\x00\x00\x02"), make([]byte, 256*4+40)...)
	f.Add(v2)
	f.Add(make([]byte, 256*4+40)) // version 1, empty
	bad := bytes.Clone(v2)
	bad[8+255*4+3] = 3 // claims three objects it does not hold
	f.Add(bad)
	f.Add(append([]byte("\xfftOc\x00\x00\x00\x02"), make([]byte, 256*4+64)...)) // SHA-256, empty
	f.Fuzz(func(t *testing.T, idx []byte) {
		for _, hashLen := range []int{SHA1Size, SHA256Size} {
			p := &pack{hashLen: hashLen}
			if err := p.parseIndex(idx); err != nil {
				continue
			}
			for i := range int(p.count()) {
				if i >= 64 {
					break
				}
				p.offset(i)
				h := IDFromBytes(p.names[i*hashLen : (i+1)*hashLen])
				// Unsorted names may hide an entry from the binary search;
				// what matters is that it reads nothing out of bounds.
				p.find(h)
			}
		}
	})
}

// FuzzCommitGraph reads made-up commit-graph files, one layer or a chain
// of two: after a successful parse, every lookup stays in bounds, and a
// parent is an error or a position in the graph, never a panic.
func FuzzCommitGraph(f *testing.F) {
	entries, base := sampleGraph()
	f.Add(base, []byte(nil))
	var below []plumbing.Hash
	g, _ := ParseCommitGraph(base)
	for i := range g.Len() {
		h, _ := g.Hash(i)
		below = append(below, h.Hash())
	}
	tip := graphEntry{hash: hashOf("tip"), parents: []plumbing.Hash{entries[5].hash, entries[0].hash, entries[1].hash}, level: 5}
	f.Add(base, writeGraph([]graphEntry{tip}, below, [][]byte{trailer(base, SHA1Size)}))
	f.Add(writeGraph(nil, nil, nil), []byte(nil))
	f.Add([]byte("CGPH\x01\x01\x00\x00"), []byte(nil))
	f.Fuzz(func(t *testing.T, base, tip []byte) {
		files := [][]byte{base}
		if len(tip) > 0 {
			files = append(files, tip)
		}
		g, err := ParseCommitGraph(files...)
		if err != nil {
			return
		}
		for pos := range min(g.Len(), 64) {
			h, err := g.Hash(pos)
			if err != nil {
				t.Fatalf("Hash(%d) of %d: %v", pos, g.Len(), err)
			}
			g.Find(h) // unsorted names may hide it; it must only read in bounds
			c, err := g.Commit(pos, nil)
			if err != nil {
				continue
			}
			for _, p := range c.Parents {
				if p >= g.Len() {
					t.Fatalf("parent %d of a graph of %d", p, g.Len())
				}
			}
		}
	})
}
