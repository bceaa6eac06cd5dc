// Package budget decides what of a commit is worth sending: it drops files
// no reader wants (lockfiles, vendored and generated code) and cuts the rest
// to a token budget counted with a real BPE tokenizer.
package tokenizer

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer/codec"
)

// Default is the vocabulary of current OpenAI models; its counts are
// a close, slightly generous stand-in for other providers' tokenizers.
const Default = "o200k_base"

// Names lists the vocabularies compiled into the binary.
var Names = []string{"o200k_base", "cl100k_base"}

// Tokenizer counts BPE tokens with a vocabulary embedded in the binary, so
// counting never needs the network. It is safe for concurrent use.
//
// The vocabulary comes from the tokenizer library; the counting is done
// here (see pretoken.go), several times faster and to the same count.
//
// Its ranks are read at the first Count, or in the background from
// Preload: they cost a tenth of a second and 20 MB of live heap (the
// library keeps its own copy for the life of the process), which a run
// that counts nothing, such as a fully cached eval, should not pay.
type Tokenizer struct {
	name       string
	piece      func(s string, i int) int // the end of the split's piece starting at i, or i
	newCodec   func() *codec.Codec
	read       sync.Once  // guards ranks
	ranks      vocabulary // filled by the first load
	preloading atomic.Bool
}

// vocabulary maps a token's bytes to its merge rank. Most lookups are of
// a few bytes: those keys are packed into integers, which hash and compare
// faster than strings and give the garbage collector no pointers to chase.
type vocabulary struct {
	short shortTable // tokens of up to 7 bytes, by packKey
	long  map[string]uint32
}

// shortTable maps packed keys to ranks by open addressing: a key and its
// rank share a slot, so a lookup costs one cache miss where a Go map costs
// several, and most of a count's time is lookups in a table larger than
// the caches. Key 0 marks a free slot; a packed key is never 0 (it holds
// its length).
type shortTable struct {
	slots []shortSlot
	shift uint
}

type shortSlot struct {
	key  uint64
	rank uint32
}

func newShortTable(n int) shortTable {
	bits := uint(4)
	for 1<<bits < n+n/2 { // at most two thirds full: short probe runs
		bits++
	}
	return shortTable{slots: make([]shortSlot, 1<<bits), shift: 64 - bits}
}

func (t *shortTable) put(key uint64, rank uint32) {
	mask := uint64(len(t.slots) - 1)
	for i := (key * 0x9E3779B97F4A7C15) >> t.shift; ; i = (i + 1) & mask {
		if s := &t.slots[i]; s.key == 0 || s.key == key {
			s.key, s.rank = key, rank
			return
		}
	}
}

func (t *shortTable) get(key uint64) (uint32, bool) {
	mask := uint64(len(t.slots) - 1)
	for i := (key * 0x9E3779B97F4A7C15) >> t.shift; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s.key == key {
			return s.rank, true
		}
		if s.key == 0 {
			return 0, false
		}
	}
}

// packKey packs up to 7 bytes and their count into an integer.
func packKey(s string) uint64 {
	k := uint64(len(s)) << 56
	for i := 0; i < len(s); i++ {
		k |= uint64(s[i]) << (8 * i)
	}
	return k
}

func (v *vocabulary) rank(s string) (uint32, bool) {
	if len(s) < 8 {
		r, ok := v.short.get(packKey(s))
		return r, ok
	}
	r, ok := v.long[s]
	return r, ok
}

var (
	loadedMu sync.Mutex
	loaded   = map[string]*Tokenizer{}
)

// vocabularies holds, for each of Names, the library's codec that holds
// its ranks and the split of text into pieces for its expression.
var vocabularies = map[string]struct {
	newCodec func() *codec.Codec
	piece    func(string, int) int
}{
	"o200k_base":  {codec.NewO200kBase, o200kPiece},
	"cl100k_base": {codec.NewCl100kBase, cl100kPiece},
}

// New returns one of Names, shared by the whole process. It reads no
// ranks: see Tokenizer.
func New(name string) (*Tokenizer, error) {
	if name == "" {
		name = Default
	}
	v, ok := vocabularies[name]
	if !ok {
		return nil, fmt.Errorf("unknown tokenizer %q. Try: one of %s", name, strings.Join(Names, ", "))
	}
	loadedMu.Lock()
	defer loadedMu.Unlock()
	if t, ok := loaded[name]; ok {
		return t, nil
	}
	t := &Tokenizer{name: name, piece: v.piece, newCodec: v.newCodec}
	loaded[name] = t
	return t, nil
}

// Preload reads the ranks in the background, for a caller about to count
// that has other work to do first (summarize walks history meanwhile).
// Only its first call starts a reader.
func (t *Tokenizer) Preload() {
	if t.preloading.CompareAndSwap(false, true) {
		go t.load()
	}
}

func (t *Tokenizer) load() {
	t.read.Do(func() { t.ranks = ranks(t.newCodec()) })
}

// ranks reads the vocabulary back out of the codec, which keeps it private:
// a token's id is its merge rank, and ids are dense up to the special tokens.
// The long keys share one string: a string each would double their memory;
// short keys are packed, so their bytes are not kept.
func ranks(lib *codec.Codec) vocabulary {
	var longText strings.Builder
	type longToken struct{ end, id uint32 }
	var shorts []shortSlot
	var longs []longToken
	for id, misses := uint(0), 0; misses < 1024; id++ {
		tok, err := lib.Decode([]uint{id})
		if err != nil {
			misses++
			continue
		}
		misses = 0
		if len(tok) < 8 {
			shorts = append(shorts, shortSlot{packKey(tok), uint32(id)})
			continue
		}
		longText.WriteString(tok)
		longs = append(longs, longToken{uint32(longText.Len()), uint32(id)})
	}
	v := vocabulary{short: newShortTable(len(shorts)), long: make(map[string]uint32, len(longs))}
	for _, t := range shorts {
		v.short.put(t.key, t.rank)
	}
	joined, start := longText.String(), uint32(0)
	for _, t := range longs {
		v.long[joined[start:t.end]] = t.id
		start = t.end
	}
	return v
}

// Name is the vocabulary's name.
func (t *Tokenizer) Name() string { return t.name }

// Count returns the number of tokens in s.
func (t *Tokenizer) Count(s string) int {
	t.load()
	n := 0
	for i := 0; i < len(s); {
		end := t.piece(s, i)
		if end == i { // no piece starts here: the library skips the rune
			_, w := runeAt(s, i)
			i += w
			continue
		}
		n += t.pieceTokens(s[i:end])
		i = end
	}
	return n
}

func (t *Tokenizer) pieceTokens(p string) int {
	if len(p) == 1 && p[0] < utf8.RuneSelf {
		return 1 // every byte is a token of a byte-level vocabulary
	}
	if !utf8.ValidString(p) {
		p = string([]rune(p)) // as the library reads text: one U+FFFD per bad byte
	}
	if _, ok := t.ranks.rank(p); ok {
		return 1
	}
	if len(p) < mergeHeapThreshold {
		return t.mergeScan(p)
	}
	return t.mergeHeap(p)
}

const noRank = ^uint32(0)

// mergeHeapThreshold is the piece length from which a heap beats a scan for
// the lowest-ranked pair, as in the library.
const mergeHeapThreshold = 96

// mergeScan counts the tokens byte-pair encoding makes of p: repeatedly
// merge the adjacent pair whose merge has the lowest rank, leftmost first.
func (t *Tokenizer) mergeScan(p string) int {
	type part struct {
		offset int
		rank   uint32
	}
	var buf [mergeHeapThreshold + 1]part
	parts := buf[:len(p)+1]
	for i := range parts {
		parts[i] = part{i, noRank}
	}
	rank := func(i, skip int) uint32 {
		if i+skip+2 < len(parts) {
			if r, ok := t.ranks.rank(p[parts[i].offset:parts[i+skip+2].offset]); ok {
				return r
			}
		}
		return noRank
	}
	for i := 0; i < len(parts)-2; i++ {
		parts[i].rank = rank(i, 0)
	}
	for len(parts) > 1 {
		minRank, minAt := noRank, 0
		for i, pt := range parts[:len(parts)-1] {
			if pt.rank < minRank {
				minRank, minAt = pt.rank, i
			}
		}
		if minRank == noRank {
			break
		}
		parts[minAt].rank = rank(minAt, 1)
		if minAt > 0 {
			parts[minAt-1].rank = rank(minAt-1, 1)
		}
		parts = append(parts[:minAt+1], parts[minAt+2:]...)
	}
	return len(parts) - 1
}

// mergeHeap counts as mergeScan does, in O(n log n) for long pieces.
func (t *Tokenizer) mergeHeap(p string) int {
	type node struct {
		prev, next int32
		rank       uint32
	}
	n := int32(len(p))
	nodes := make([]node, n+1)
	for i := range nodes {
		nodes[i] = node{prev: int32(i) - 1, next: int32(i) + 1, rank: noRank}
	}
	nodes[n].next = -1
	rankOf := func(i int32) uint32 {
		j := nodes[i].next
		if j < 0 {
			return noRank
		}
		k := nodes[j].next
		if k < 0 {
			return noRank
		}
		if r, ok := t.ranks.rank(p[i:k]); ok {
			return r
		}
		return noRank
	}
	h := make(mergeHeap, 0, n)
	for i := int32(0); i+2 <= n; i++ {
		if r := rankOf(i); r != noRank {
			nodes[i].rank = r
			h = append(h, mergeCandidate{r, i})
		}
	}
	h.init()
	count := int(n)
	for len(h) > 0 {
		top := h.pop()
		i := top.offset
		if nodes[i].rank != top.rank {
			continue // stale: this pair changed since it was pushed
		}
		j := nodes[i].next
		k := nodes[j].next
		nodes[j].rank = noRank
		nodes[i].next = k
		if k >= 0 {
			nodes[k].prev = i
		}
		count--
		for _, b := range [2]int32{i, nodes[i].prev} {
			if b < 0 {
				continue
			}
			nodes[b].rank = rankOf(b)
			if nodes[b].rank != noRank {
				h.push(mergeCandidate{nodes[b].rank, b})
			}
		}
	}
	return count
}

type mergeCandidate struct {
	rank   uint32
	offset int32
}

// mergeHeap is a min-heap by rank, then offset: among equal ranks the
// leftmost pair merges first.
type mergeHeap []mergeCandidate

func (h mergeHeap) less(a, b int) bool {
	if h[a].rank != h[b].rank {
		return h[a].rank < h[b].rank
	}
	return h[a].offset < h[b].offset
}

func (h mergeHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *mergeHeap) push(c mergeCandidate) {
	*h = append(*h, c)
	h.up(len(*h) - 1)
}

func (h *mergeHeap) pop() mergeCandidate {
	old := *h
	top := old[0]
	last := len(old) - 1
	old[0] = old[last]
	*h = old[:last]
	h.down(0)
	return top
}

func (h mergeHeap) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !h.less(i, parent) {
			break
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
}

func (h mergeHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		smallest := l
		if r := l + 1; r < len(h) && h.less(r, l) {
			smallest = r
		}
		if !h.less(smallest, i) {
			return
		}
		h[i], h[smallest] = h[smallest], h[i]
		i = smallest
	}
}
