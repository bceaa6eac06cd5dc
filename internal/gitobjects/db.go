// Package gitobjects reads a git repository's objects (pack files and loose
// objects, with alternates) from any number of goroutines at once, with no
// lock around the reads: go-git's storage serializes every read, and reading
// objects was most of digest's time over a history. Only reading is done
// here; refs, revisions and everything that writes stay with go-git.
package gitobjects

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/zlib"

	"github.com/go-git/go-git/v5/plumbing"
)

// ErrNotFound reports an object that is in none of the repository's packs,
// loose objects or alternates: a partial or shallow clone, or damage.
var ErrNotFound = errors.New("object not found")

// maxObjectBytes bounds what a header may claim, so that a damaged size
// fails instead of allocating gigabytes.
const maxObjectBytes = 1 << 31

// maxChain bounds a delta chain; git's own limit when packing is 4095, and
// a ref delta cycle in a damaged pack must end somewhere.
const maxChain = 10_000

// DB is a repository's object database, safe for concurrent use.
type DB struct {
	dirs  []string // objects directories: the repository's, then alternates
	cache *baseCache
	// hashLen is the length of the repository's object names: SHA1Size,
	// or SHA256Size.
	hashLen int

	mu    sync.RWMutex
	packs []*pack
	known map[string]bool // pack paths opened or found unusable
}

// Open opens the object directory (".git/objects") with a cache of delta
// bases of up to cacheBytes. It fails on packs it cannot read, so that a
// caller can fall back to another reader rather than miss objects.
func Open(objectsDir string, cacheBytes int) (*DB, error) {
	return OpenFormat(objectsDir, cacheBytes, SHA1Size)
}

// OpenFormat is Open for a repository whose object names are hashLen bytes
// long: SHA1Size, or SHA256Size for `git init --object-format=sha256`.
func OpenFormat(objectsDir string, cacheBytes, hashLen int) (*DB, error) {
	if hashLen != SHA1Size && hashLen != SHA256Size {
		return nil, fmt.Errorf("%s: object names of %d bytes: neither SHA-1 nor SHA-256", objectsDir, hashLen)
	}
	db := &DB{cache: newBaseCache(cacheBytes), known: map[string]bool{}, hashLen: hashLen}
	if err := db.addDir(objectsDir, 0); err != nil {
		return nil, err
	}
	if err := db.scanPacks(); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// addDir adds an objects directory and, after it, its alternates.
func (db *DB) addDir(dir string, depth int) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for _, d := range db.dirs {
		if d == abs {
			return nil
		}
	}
	if depth > 5 { // git's own limit on chained alternates
		return fmt.Errorf("%s: alternates nested too deep", dir)
	}
	db.dirs = append(db.dirs, abs)
	f, err := os.Open(filepath.Join(abs, "info", "alternates"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !filepath.IsAbs(line) {
			line = filepath.Join(abs, line) // relative to the objects directory
		}
		if err := db.addDir(line, depth+1); err != nil {
			return err
		}
	}
	return sc.Err()
}

// scanPacks opens the packs not seen before: at start, and again when an
// object is missing, since a concurrent `git gc` or fetch may have packed it.
func (db *DB) scanPacks() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	for _, dir := range db.dirs {
		names, err := filepath.Glob(filepath.Join(dir, "pack", "*.pack"))
		if err != nil {
			return err
		}
		for _, name := range names {
			if db.known[name] {
				continue
			}
			if _, err := os.Stat(strings.TrimSuffix(name, ".pack") + ".idx"); errors.Is(err, os.ErrNotExist) {
				continue // still being written; git ignores it too
			}
			p, err := openPack(name, db.hashLen)
			if err != nil {
				return err
			}
			db.known[name] = true
			db.packs = append(db.packs, p)
		}
	}
	return nil
}

// HashSize is the length of the repository's object names in bytes.
func (db *DB) HashSize() int { return db.hashLen }

// Close closes the pack files.
func (db *DB) Close() error {
	db.mu.Lock()
	defer db.mu.Unlock()
	var errs []error
	for _, p := range db.packs {
		errs = append(errs, p.close())
	}
	db.packs = nil
	db.cache.close()
	return errors.Join(errs...)
}

// Object is an object read whole, or only its type and size when it was
// larger than asked for.
type Object struct {
	Type plumbing.ObjectType
	Size int64
	// Data is nil when Size was over the limit. It may be shared with the
	// cache of delta bases: read it, never write it.
	Data []byte
}

// Read reads an object whole.
func (db *DB) Read(h ID) (Object, error) {
	return db.ReadLimited(h, 0)
}

// ReadLimited reads an object unless it is larger than limit bytes (0: no
// limit), in which case only its type and size are returned: a packed
// object's size is known before it is inflated, a delta's after inflating
// the delta alone.
func (db *DB) ReadLimited(h ID, limit int64) (Object, error) {
	obj, _, err := db.readOrRescan(h, limit, false)
	return obj, err
}

// Borrow is ReadLimited without copying an object that the cache of delta
// bases holds: its Data is then the cache's, valid until release is called
// and not to be kept past it. Reading history newest first, each version
// of a file is often read just after it was cached as the base of the
// version before it.
func (db *DB) Borrow(h ID, limit int64) (obj Object, release func(), err error) {
	obj, s, err := db.readOrRescan(h, limit, true)
	if s == nil {
		return obj, func() {}, err
	}
	return obj, func() { db.cache.unpin(s) }, err
}

// readOrRescan reads an object, looking again for packs added since they
// were last listed if it is not found.
func (db *DB) readOrRescan(h ID, limit int64, borrow bool) (Object, *slot, error) {
	for attempt := 0; ; attempt++ {
		obj, s, err := db.read(h, limit, borrow)
		if !errors.Is(err, ErrNotFound) || attempt > 0 {
			return obj, s, err
		}
		if err := db.scanPacks(); err != nil {
			return Object{}, nil, err
		}
	}
}

// Has reports whether the object is here, without reading it.
func (db *DB) Has(h ID) bool {
	if h.Len() != db.hashLen {
		return false
	}
	for attempt := 0; attempt < 2; attempt++ {
		if p, _ := db.locate(h); p != nil {
			return true
		}
		for _, dir := range db.dirs {
			if _, err := os.Stat(loosePath(dir, h)); err == nil {
				return true
			}
		}
		if attempt == 0 && db.scanPacks() != nil {
			return false
		}
	}
	return false
}

func (db *DB) locate(h ID) (*pack, int64) {
	db.mu.RLock()
	packs := db.packs
	db.mu.RUnlock()
	for _, p := range packs {
		if i := p.find(h); i >= 0 {
			if off, err := p.offset(i); err == nil {
				return p, off
			}
		}
	}
	return nil, 0
}

// read reads an object; borrowed from the cache, it comes with the slot to
// unpin once it is no longer read.
func (db *DB) read(h ID, limit int64, borrow bool) (Object, *slot, error) {
	if h.Len() != db.hashLen {
		return Object{}, nil, fmt.Errorf("object %s: %w", h, ErrNotFound)
	}
	if p, off := db.locate(h); p != nil {
		obj, s, err := db.readPacked(p, off, limit, borrow)
		if err != nil {
			return Object{}, nil, fmt.Errorf("object %s: %w", h, err)
		}
		return obj, s, nil
	}
	for _, dir := range db.dirs {
		obj, err := readLoose(loosePath(dir, h), limit)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return Object{}, nil, fmt.Errorf("object %s: %w", h, err)
		}
		return obj, nil, nil
	}
	return Object{}, nil, fmt.Errorf("object %s: %w", h, ErrNotFound)
}

func loosePath(dir string, h ID) string {
	s := h.String() // 40 or 64 digits, as the file is named
	return filepath.Join(dir, s[:2], s[2:])
}

// fileReaders buffer loose object files while they are inflated.
var fileReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 32<<10) }}

// readLoose reads a loose object file as a stream, so that an object over
// limit costs the inflating of its header only, whatever its size: read
// whole first, an 800 MB loose blob took 800 MB to learn its size.
func readLoose(path string, limit int64) (Object, error) {
	f, err := os.Open(path)
	if err != nil {
		return Object{}, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return Object{}, err
	}
	br := fileReaders.Get().(*bufio.Reader)
	br.Reset(f)
	defer func() {
		br.Reset(nil) // the file is closed; the pool must not keep it
		fileReaders.Put(br)
	}()
	return parseLoose(br, info.Size(), limit)
}

// parseLoose inflates a loose object, "TYPE SIZE\0" and the content, from
// its compressed stream of compressedSize bytes; only the header if the
// object is larger than limit.
func parseLoose(r io.Reader, compressedSize int64, limit int64) (Object, error) {
	in := getStreamInflater(r)
	defer putInflater(in)
	var head [64]byte
	n, err := io.ReadFull(in.zr, head[:])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return Object{}, fmt.Errorf("loose object: %w", err)
	}
	nul := bytes.IndexByte(head[:n], 0)
	if nul < 0 {
		return Object{}, errors.New("loose object: malformed header")
	}
	name, sizeText, _ := strings.Cut(string(head[:nul]), " ")
	typ, err := plumbing.ParseObjectType(name)
	if err != nil || typ < plumbing.CommitObject || typ > plumbing.TagObject {
		return Object{}, fmt.Errorf("loose object: unknown type %q", name)
	}
	size, err := strconv.ParseInt(sizeText, 10, 64)
	if err != nil || size < 0 || size > maxObjectBytes || size > compressedSize*1100+64 {
		return Object{}, fmt.Errorf("loose object: malformed size %q", sizeText)
	}
	obj := Object{Type: typ, Size: size}
	if limit > 0 && size > limit {
		return obj, nil
	}
	obj.Data = make([]byte, size)
	got := copy(obj.Data, head[nul+1:n])
	if _, err := io.ReadFull(in.zr, obj.Data[got:]); err != nil {
		return Object{}, fmt.Errorf("loose object: %w", err)
	}
	return obj, nil
}

// readPacked reads the object at off: from the cache of delta bases if it
// holds it (in place if borrow, with the slot to unpin), or else through
// its delta chain.
func (db *DB) readPacked(p *pack, off int64, limit int64, borrow bool) (Object, *slot, error) {
	if s, data, ok := db.cache.view(baseKey{p, off}); ok {
		obj := Object{Type: plumbing.ObjectType(s.typ), Size: int64(len(data))}
		if limit > 0 && obj.Size > limit {
			db.cache.unpin(s)
			return obj, nil, nil
		}
		if borrow {
			obj.Data = data
			return obj, s, nil
		}
		obj.Data = bytes.Clone(data) // the caller's to keep
		db.cache.unpin(s)
		return obj, nil, nil
	}
	return db.readChain(p, off, limit, borrow)
}

// readChain reads the object at off through its delta chain: down to a
// cached base or a whole object, then up, applying each delta and caching
// each base on the way. Borrowed, the object itself is made in the cache
// too, likely the base of the next one read, and returned with its slot.
func (db *DB) readChain(p *pack, off int64, limit int64, borrow bool) (Object, *slot, error) {
	buf := getBuffer()
	defer putBuffer(buf)
	top, b, err := p.readEntry(off, *buf)
	*buf = b
	if err != nil {
		return Object{}, nil, err
	}
	if top.typ != typeOfsDelta && top.typ != typeRefDelta {
		obj := Object{Type: plumbing.ObjectType(top.typ), Size: top.size}
		if limit > 0 && top.size > limit {
			return obj, nil, nil
		}
		data, s, err := db.inflateEntry(baseKey{p, off}, top, borrow)
		obj.Data = data
		return obj, s, err
	}
	topDelta, err := inflate(top.data, top.size)
	if err != nil {
		return Object{}, nil, err
	}
	_, resultSize, _, err := deltaSizes(topDelta)
	if err != nil {
		return Object{}, nil, err
	}
	if limit > 0 && resultSize > limit {
		// The type is the chain's bottom's; walk down for it without inflating.
		typ, err := db.chainType(p, top)
		return Object{Type: typ, Size: resultSize}, nil, err
	}

	type step struct {
		pack  *pack
		off   int64 // the delta's own offset, the key of its result
		delta []byte
	}
	chain := []step{{p, off, topDelta}}
	e := top
	var baseType int
	var base []byte
	var pinned *slot // holds base in the cache while it is read
	defer func() { db.cache.unpin(pinned) }()
	for cur := p; ; {
		var next int64
		if e.typ == typeRefDelta {
			bp, boff := db.locate(e.ref)
			if bp == nil {
				// The base is loose or in an alternate: read it whole.
				obj, _, err := db.read(e.ref, 0, false)
				if err != nil {
					return Object{}, nil, fmt.Errorf("delta base: %w", err)
				}
				baseType, base = int(obj.Type), obj.Data
				break
			}
			cur, next = bp, boff
		} else {
			next = e.base
		}
		if s, data, ok := db.cache.view(baseKey{cur, next}); ok {
			baseType, base, pinned = s.typ, data, s
			break
		}
		if len(chain) >= maxChain {
			return Object{}, nil, errors.New("delta chain too long")
		}
		e, b, err = cur.readEntry(next, *buf)
		*buf = b
		if err != nil {
			return Object{}, nil, err
		}
		if e.typ != typeOfsDelta && e.typ != typeRefDelta {
			// The chain's bottom: inflated straight into the cache.
			base, pinned, err = db.inflateEntry(baseKey{cur, next}, e, true)
			if err != nil {
				return Object{}, nil, err
			}
			baseType = e.typ
			break
		}
		data, err := inflate(e.data, e.size)
		if err != nil {
			return Object{}, nil, err
		}
		chain = append(chain, step{cur, next, data})
	}
	for i := len(chain) - 1; i >= 0; i-- {
		// Each base on the way up is made in the cache; the top, the
		// caller's, in the heap unless borrowed.
		var s *slot
		var into []byte
		if i > 0 || borrow {
			if _, size, _, err := deltaSizes(chain[i].delta); err == nil && size <= maxObjectBytes {
				s, into = db.cache.reserve(int(size))
			}
		}
		result, err := applyDeltaInto(into, base, chain[i].delta)
		db.cache.unpin(pinned)
		pinned = s
		if err != nil {
			return Object{}, nil, err
		}
		if s != nil {
			db.cache.publish(s, baseKey{chain[i].pack, chain[i].off}, baseType)
		}
		base = result
	}
	lent := pinned // the top's slot, when borrowed: the caller unpins it
	pinned = nil
	return Object{Type: plumbing.ObjectType(baseType), Size: int64(len(base)), Data: base}, lent, nil
}

// inflateEntry inflates a whole object's entry; if cache is set and the
// cache has room, into a slot published under k and returned pinned.
func (db *DB) inflateEntry(k baseKey, e entry, cache bool) ([]byte, *slot, error) {
	var s *slot
	var into []byte
	if cache {
		s, into = db.cache.reserve(int(e.size))
	}
	data, err := inflateInto(into, e.data, e.size)
	if err != nil {
		db.cache.unpin(s)
		return nil, nil, err
	}
	if s != nil {
		db.cache.publish(s, k, e.typ)
	}
	return data, s, nil
}

// chainType finds a delta's object type: its chain's bottom's.
func (db *DB) chainType(p *pack, e entry) (plumbing.ObjectType, error) {
	buf := getBuffer()
	defer putBuffer(buf)
	for range maxChain {
		var next int64
		switch e.typ {
		case typeOfsDelta:
			next = e.base
		case typeRefDelta:
			bp, boff := db.locate(e.ref)
			if bp == nil {
				obj, _, err := db.read(e.ref, 1, false)
				return obj.Type, err
			}
			p, next = bp, boff
		default:
			return plumbing.ObjectType(e.typ), nil
		}
		if t, ok := db.cache.typeOf(baseKey{p, next}); ok {
			return plumbing.ObjectType(t), nil
		}
		var err error
		var b []byte
		e, b, err = p.readEntry(next, *buf)
		*buf = b
		if err != nil {
			return plumbing.InvalidObject, err
		}
	}
	return plumbing.InvalidObject, errors.New("delta chain too long")
}

// inflater is a zlib reader kept for reuse: making one allocates tables
// worth more than most objects. klauspost/compress's inflates a few percent
// faster than the standard library's, measured over go-git's history.
type inflater struct {
	src bytes.Reader
	zr  io.ReadCloser
}

var inflaters sync.Pool

func getInflater(data []byte) *inflater {
	in, _ := inflaters.Get().(*inflater)
	if in == nil {
		in = &inflater{}
	}
	in.src.Reset(data)
	return in.reset(&in.src)
}

// getStreamInflater inflates from r, which should be an io.ByteReader (a
// bufio.Reader): the inflater would otherwise wrap it in a buffer of its own.
func getStreamInflater(r io.Reader) *inflater {
	in, _ := inflaters.Get().(*inflater)
	if in == nil {
		in = &inflater{}
	}
	return in.reset(r)
}

func (in *inflater) reset(r io.Reader) *inflater {
	if in.zr == nil {
		zr, err := zlib.NewReader(r)
		if err != nil {
			// A bad stream header: hand back a reader that reports it.
			return &inflater{zr: io.NopCloser(errReader{err})}
		}
		in.zr = zr
		return in
	}
	if err := in.zr.(zlib.Resetter).Reset(r, nil); err != nil {
		return &inflater{zr: io.NopCloser(errReader{err})}
	}
	return in
}

func putInflater(in *inflater) {
	if _, ok := in.zr.(zlib.Resetter); ok {
		in.src.Reset(nil)
		inflaters.Put(in)
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// inflate decompresses exactly size bytes. The stream's checksum is not
// checked: that would need reading past the content, and git's own reads
// rely on the pack's checksum instead.
func inflate(data []byte, size int64) ([]byte, error) {
	return inflateInto(nil, data, size)
}

// inflateInto inflates data into out when it is given, of exactly size
// bytes, or else into a new slice.
func inflateInto(out, data []byte, size int64) ([]byte, error) {
	// Deflate cannot expand data more than about 1032 times: a larger
	// claimed size is damage.
	if size < 0 || size > maxObjectBytes || size > int64(len(data))*1100+64 {
		return nil, errBadEntry
	}
	in := getInflater(data)
	defer putInflater(in)
	if out == nil {
		out = make([]byte, size)
	}
	if _, err := io.ReadFull(in.zr, out); err != nil {
		return nil, fmt.Errorf("inflate: %w", err)
	}
	return out, nil
}

// buffers hold entries' compressed bytes while they are inflated.
var buffers = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

func getBuffer() *[]byte { return buffers.Get().(*[]byte) }

func putBuffer(b *[]byte) {
	if cap(*b) <= 1<<20 { // one huge blob must not stay pinned in the pool
		buffers.Put(b)
	}
}
