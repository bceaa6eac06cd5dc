package gitobjects

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/digest-cli/digest/internal/offheap"
	"github.com/go-git/go-git/v5/plumbing"
)

// Pack entry types beyond the four object types, which share their numbers.
const (
	typeOfsDelta = 6 // delta against an object earlier in the same pack, by distance
	typeRefDelta = 7 // delta against an object named by hash, anywhere
)

// pack is one pack file with its index, read with ReadAt only, so any
// number of goroutines can read it at once without a lock.
type pack struct {
	name string
	file *os.File
	size int64
	// hashLen is the length of object names and checksums: 20 bytes, or
	// 32 in a SHA-256 repository.
	hashLen int

	// The index, mapped (see offheap.MapFile) until close: fanout[b] counts the
	// names whose first byte is at most b; names holds them sorted,
	// hashLen bytes each; offsets holds their pack offsets (4 bytes each, the top
	// bit sending large ones to large, 8 bytes each).
	fanout  [256]uint32
	names   []byte
	offsets []byte
	large   []byte
	unmap   func() error
	// starts holds every entry's offset, sorted, then the trailer's: an
	// entry ends where the next starts, so its compressed bytes are read
	// with one ReadAt of exactly their length. It lives outside the Go
	// heap (git.git's is 6.5 MB), given back by freeStarts. Without a
	// reverse index it is made at open; with one, once the reverse index
	// has answered sortAfterLookups lookups (see end).
	starts     atomic.Pointer[[]int64]
	freeStarts func()
	sortOnce   sync.Once
	// rev is the pack's reverse index (".rev"), when it has one.
	rev        []byte
	unmapRev   func() error
	revLookups atomic.Int64
}

// sortAfterLookups is when a pack with a reverse index sorts its offsets
// after all. Through the reverse index a lookup takes 0.7 µs, in the
// sorted offsets 0.2 µs, and sorting git.git's takes 16 ms: a cached
// range reads a few thousand objects and should not pay for the sort, a
// history's diffs read millions and should.
const sortAfterLookups = 20_000

func (p *pack) close() error {
	err := p.file.Close()
	if uerr := p.unmap(); err == nil {
		err = uerr
	}
	if p.unmapRev != nil {
		if uerr := p.unmapRev(); err == nil {
			err = uerr
		}
		p.rev, p.unmapRev = nil, nil
	}
	p.sortOnce.Do(func() {}) // no sort starts now; one done is seen here
	if p.freeStarts != nil {
		p.starts.Store(nil)
		p.freeStarts()
		p.freeStarts = nil
	}
	return err
}

// openPack reads the index next to the pack file path (".pack") and checks
// both belong together.
func openPack(path string, hashLen int) (*pack, error) {
	idx, unmap, err := offheap.MapFile(strings.TrimSuffix(path, ".pack") + ".idx")
	if err != nil {
		return nil, err
	}
	p := &pack{name: path, unmap: unmap, hashLen: hashLen}
	if err := p.parseIndex(idx); err != nil {
		unmap()
		return nil, fmt.Errorf("%s: %w", strings.TrimSuffix(path, ".pack")+".idx", err)
	}
	f, err := os.Open(path)
	if err != nil {
		unmap()
		return nil, err
	}
	p.file = f
	st, err := f.Stat()
	if err != nil {
		p.close()
		return nil, err
	}
	p.size = st.Size()
	var head [12]byte
	if _, err := f.ReadAt(head[:], 0); err != nil || string(head[:4]) != "PACK" {
		p.close()
		return nil, fmt.Errorf("%s: not a pack file", path)
	}
	if v := binary.BigEndian.Uint32(head[4:]); v != 2 && v != 3 {
		p.close()
		return nil, fmt.Errorf("%s: pack version %d is not supported", path, v)
	}
	if n := binary.BigEndian.Uint32(head[8:]); n != p.count() {
		p.close()
		return nil, fmt.Errorf("%s: the pack holds %d objects, its index %d", path, n, p.count())
	}
	if rev, unmapRev, err := offheap.MapFile(strings.TrimSuffix(path, ".pack") + ".rev"); err == nil {
		if p.parseReverseIndex(rev, f) {
			p.rev, p.unmapRev = rev, unmapRev
			return p, nil
		}
		unmapRev()
	}
	var sortErr error
	p.sortOnce.Do(func() { sortErr = p.sortStarts() })
	if sortErr != nil {
		p.close()
		return nil, fmt.Errorf("%s: %w", path, sortErr)
	}
	return p, nil
}

// parseReverseIndex takes a pack's reverse index (".rev", which git writes
// by default since 2.41): the objects' index positions in pack order. It
// stands in for starts until many objects are read, so that a run that
// reads few does not sort git.git's 849,000 offsets first. Only its frame
// is checked here; each lookup checks the entries it reads.
func (p *pack) parseReverseIndex(rev []byte, f *os.File) bool {
	header, trailer := 12, 2*p.hashLen
	hashID := uint32(1) // SHA-1; 2 is SHA-256
	if p.hashLen == SHA256Size {
		hashID = 2
	}
	if len(rev) != header+4*int(p.count())+trailer || string(rev[:4]) != "RIDX" ||
		binary.BigEndian.Uint32(rev[4:]) != 1 || binary.BigEndian.Uint32(rev[8:]) != hashID {
		return false
	}
	// It names its pack by the pack's checksum: one left from another pack
	// of the same name must not be taken.
	sum := make([]byte, p.hashLen)
	_, err := f.ReadAt(sum, p.size-int64(p.hashLen))
	return err == nil && bytes.Equal(sum, rev[len(rev)-trailer:len(rev)-p.hashLen])
}

// sortStarts lists every entry's offset in pack order, with a radix sort:
// the offsets come in hash order, as random as can be, and comparison
// sorting git.git's took 60 ms, radix sorting 16.
func (p *pack) sortStarts() error {
	n := int(p.count())
	starts, free := offheap.Slice[int64](n + 1)
	var highest int64
	for i := range n {
		off, err := p.offset(i)
		if err != nil || off < 12 || off >= p.size-int64(p.hashLen) {
			free()
			return errors.New("index names an offset outside the pack")
		}
		starts[i] = off
		highest = max(highest, off)
	}
	scratch, freeScratch := offheap.Slice[int64](n)
	defer freeScratch()
	from, to := starts[:n], scratch
	for shift := 0; shift < 64 && highest>>shift > 0; shift += 8 {
		var counts [257]int
		for _, v := range from {
			counts[(v>>shift)&0xff+1]++
		}
		for b := 1; b < len(counts); b++ {
			counts[b] += counts[b-1]
		}
		for _, v := range from {
			d := (v >> shift) & 0xff
			to[counts[d]] = v
			counts[d]++
		}
		from, to = to, from
	}
	if n > 0 && &from[0] != &starts[0] {
		copy(starts, from)
	}
	starts[n] = p.size - int64(p.hashLen) // the trailer: the pack's checksum
	p.freeStarts = free
	p.starts.Store(&starts)
	return nil
}

var errBadIndex = errors.New("malformed pack index")

// parseIndex accepts index versions 1 and 2 for SHA-1 repositories, and
// version 2 with 32-byte names for SHA-256 ones (what git writes there).
func (p *pack) parseIndex(idx []byte) error {
	hashLen := p.hashLen
	trailer := 2 * hashLen // the pack's checksum and the index's own
	body := idx
	version := 1
	if len(idx) >= 8 && string(idx[:4]) == "\xfftOc" {
		version = int(binary.BigEndian.Uint32(idx[4:]))
		if version != 2 {
			return fmt.Errorf("index version %d is not supported", version)
		}
		body = idx[8:]
	}
	if len(body) < 256*4+trailer {
		return errBadIndex
	}
	for i := range 256 {
		p.fanout[i] = binary.BigEndian.Uint32(body[i*4:])
		if i > 0 && p.fanout[i] < p.fanout[i-1] {
			return errBadIndex
		}
	}
	n := int(p.fanout[255])
	body = body[256*4:]
	if version == 1 && hashLen != SHA1Size {
		return fmt.Errorf("index version 1 in a repository of %d-byte names: %w", hashLen, errBadIndex)
	}
	if version == 1 {
		// Entries interleave a 4-byte offset and a 20-byte name; split them
		// into the version 2 layout once, so lookups need not care.
		if len(body) != n*24+trailer {
			return errBadIndex
		}
		p.names = make([]byte, 0, n*20)
		p.offsets = make([]byte, 0, n*4)
		for i := range n {
			e := body[i*24:]
			p.offsets = append(p.offsets, e[:4]...)
			p.names = append(p.names, e[4:24]...)
		}
		return nil
	}
	// After the names, CRCs and offsets, only 8-byte large offsets, at most
	// one per object: any other length is damage or another hash's index.
	entryLen := hashLen + 8 // a name, its CRC and its offset
	if rest := len(body) - n*entryLen - trailer; n > (len(body)-trailer)/entryLen || rest%8 != 0 || rest/8 > n {
		return errBadIndex
	}
	p.names = body[:n*hashLen]
	p.offsets = body[n*(hashLen+4) : n*entryLen] // after the names and their CRCs
	p.large = body[n*entryLen : len(body)-trailer]
	return nil
}

func (p *pack) count() uint32 { return p.fanout[255] }

// find returns the index of h among the pack's names, or -1.
func (p *pack) find(h ID) int {
	name := h.Bytes()
	if len(name) != p.hashLen {
		return -1
	}
	lo := 0
	if name[0] > 0 {
		lo = int(p.fanout[name[0]-1])
	}
	hi := int(p.fanout[name[0]])
	n := p.hashLen
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		switch c := bytes.Compare(p.names[mid*n:mid*n+n], name); {
		case c == 0:
			return mid
		case c < 0:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return -1
}

func (p *pack) offset(i int) (int64, error) {
	off := binary.BigEndian.Uint32(p.offsets[i*4:])
	if off&(1<<31) == 0 {
		return int64(off), nil
	}
	j := int(off &^ (1 << 31))
	if (j+1)*8 > len(p.large) {
		return 0, errBadIndex
	}
	return int64(binary.BigEndian.Uint64(p.large[j*8:])), nil
}

// end is where the entry starting at off stops.
func (p *pack) end(off int64) (int64, error) {
	starts := p.starts.Load()
	if starts == nil && p.revLookups.Add(1) > sortAfterLookups {
		// A damaged index leaves the reverse index answering.
		p.sortOnce.Do(func() { _ = p.sortStarts() })
		starts = p.starts.Load()
	}
	if starts == nil {
		return p.endByReverseIndex(off)
	}
	i, ok := slices.BinarySearch(*starts, off)
	if !ok || i+1 >= len(*starts) {
		return 0, fmt.Errorf("%s: no object starts at offset %d", p.name, off)
	}
	return (*starts)[i+1], nil
}

// endByReverseIndex finds off among the offsets in pack order, and the one
// after it. A damaged reverse index is an error here, never a wrong read:
// the offset found must be off, and the next one past it.
func (p *pack) endByReverseIndex(off int64) (int64, error) {
	if p.rev == nil {
		return 0, fmt.Errorf("%s: closed", p.name)
	}
	n := int(p.count())
	at := func(k int) (int64, error) {
		i := binary.BigEndian.Uint32(p.rev[12+4*k:])
		if i >= p.count() {
			return 0, errBadIndex
		}
		return p.offset(int(i))
	}
	lo, hi := 0, n
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		o, err := at(mid)
		if err != nil {
			return 0, fmt.Errorf("%s: reverse index: %w", p.name, err)
		}
		if o < off {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < n {
		if o, err := at(lo); err == nil && o == off {
			next := p.size - int64(p.hashLen) // the last entry ends at the trailer
			if lo+1 < n {
				if next, err = at(lo + 1); err != nil {
					return 0, fmt.Errorf("%s: reverse index: %w", p.name, err)
				}
			}
			if off < 12 || next <= off || next > p.size-int64(p.hashLen) {
				return 0, fmt.Errorf("%s: reverse index: entry at %d ends at %d: %w", p.name, off, next, errBadIndex)
			}
			return next, nil
		}
	}
	return 0, fmt.Errorf("%s: no object starts at offset %d", p.name, off)
}

// entry is a pack entry's header, with its compressed bytes.
type entry struct {
	typ  int
	size int64 // inflated size: the object's, or the delta's for deltas
	base int64 // for typeOfsDelta, the base's offset
	ref  ID
	data []byte // the zlib stream
}

// readEntry reads the entry at off: its header and compressed bytes, in one
// read since the next entry's start bounds it.
func (p *pack) readEntry(off int64, buf []byte) (entry, []byte, error) {
	end, err := p.end(off)
	if err != nil {
		return entry{}, buf, err
	}
	n := int(end - off)
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	raw := buf[:n]
	if _, err := p.file.ReadAt(raw, off); err != nil && !(errors.Is(err, io.EOF) && end == p.size) {
		return entry{}, buf, fmt.Errorf("%s: read at %d: %w", p.name, off, err)
	}
	e, err := parseEntryHeader(raw, off, p.hashLen)
	if err != nil {
		return entry{}, buf, fmt.Errorf("%s: entry at %d: %w", p.name, off, err)
	}
	return e, buf, nil
}

var errBadEntry = errors.New("malformed pack entry")

// parseEntryHeader reads a pack entry's type and size, its delta base, and
// leaves the compressed rest in data.
func parseEntryHeader(raw []byte, off int64, hashLen int) (entry, error) {
	if len(raw) == 0 {
		return entry{}, errBadEntry
	}
	c := raw[0]
	e := entry{typ: int(c>>4) & 7, size: int64(c & 15)}
	i, shift := 1, 4
	for c&0x80 != 0 {
		if i >= len(raw) || shift > 56 {
			return entry{}, errBadEntry
		}
		c = raw[i]
		e.size |= int64(c&0x7f) << shift
		shift += 7
		i++
	}
	switch e.typ {
	case int(plumbing.CommitObject), int(plumbing.TreeObject), int(plumbing.BlobObject), int(plumbing.TagObject):
	case typeOfsDelta:
		// The distance back is big-endian base-128 with an offset of one
		// added per continuation, so every distance has one encoding.
		if i >= len(raw) {
			return entry{}, errBadEntry
		}
		c = raw[i]
		i++
		dist := int64(c & 0x7f)
		for c&0x80 != 0 {
			if i >= len(raw) || dist > 1<<55 {
				return entry{}, errBadEntry
			}
			c = raw[i]
			i++
			dist = (dist+1)<<7 | int64(c&0x7f)
		}
		if dist <= 0 || dist > off {
			return entry{}, errBadEntry
		}
		e.base = off - dist
	case typeRefDelta:
		if len(raw) < i+hashLen {
			return entry{}, errBadEntry
		}
		e.ref = IDFromBytes(raw[i : i+hashLen])
		i += hashLen
	default:
		return entry{}, fmt.Errorf("%w: type %d", errBadEntry, e.typ)
	}
	e.data = raw[i:]
	return e, nil
}
