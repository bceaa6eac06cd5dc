package gitobjects

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// WithPrefix lists the objects whose names begin with prefix (hex digits,
// any case, at most the names' length), up to max of them, packed or loose:
// how git finds the object an abbreviated hash names, and learns when it
// names several.
func (db *DB) WithPrefix(prefix string, max int) ([]ID, error) {
	prefix = strings.ToLower(prefix)
	hexLen := 2 * db.hashLen
	if len(prefix) == 0 || len(prefix) > hexLen {
		return nil, fmt.Errorf("abbreviated hash %q: want 1 to %d hex digits", prefix, hexLen)
	}
	// The whole bytes of the prefix, and the high half of the next one.
	whole, err := hex.DecodeString(prefix[:len(prefix)&^1])
	if err != nil {
		return nil, fmt.Errorf("abbreviated hash %q: not hex", prefix)
	}
	var nibble byte
	odd := len(prefix)%2 == 1
	if odd {
		b, err := hex.DecodeString(prefix[len(prefix)-1:] + "0")
		if err != nil {
			return nil, fmt.Errorf("abbreviated hash %q: not hex", prefix)
		}
		nibble = b[0]
	}
	matches := func(name []byte) bool {
		return bytes.HasPrefix(name, whole) && (!odd || name[len(whole)]&0xf0 == nibble)
	}
	// The smallest name with the prefix: where a search of a sorted list starts.
	low := make([]byte, db.hashLen)
	copy(low, whole)
	if odd {
		low[len(whole)] = nibble
	}

	var found []ID
	add := func(h ID) bool {
		if !slices.Contains(found, h) {
			found = append(found, h)
		}
		return len(found) < max
	}
	db.mu.RLock()
	packs := db.packs
	db.mu.RUnlock()
	for _, p := range packs {
		lo, hi := 0, int(p.count())
		if low[0] > 0 {
			lo = int(p.fanout[low[0]-1])
		}
		// A binary search over the index's names, n bytes each.
		n := p.hashLen
		for lo < hi {
			mid := int(uint(lo+hi) >> 1)
			if bytes.Compare(p.names[mid*n:mid*n+n], low) < 0 {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		for j := lo; j < int(p.count()) && matches(p.names[j*n:j*n+n]); j++ {
			if !add(IDFromBytes(p.names[j*n : j*n+n])) {
				return found, nil
			}
		}
	}
	if len(prefix) < 2 {
		return found, nil // loose objects would need every directory listed
	}
	for _, dir := range db.dirs {
		names, err := os.ReadDir(filepath.Join(dir, prefix[:2]))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return found, err
		}
		for _, n := range names {
			rest := n.Name()
			if len(rest) != hexLen-2 || !strings.HasPrefix(rest, prefix[2:]) {
				continue
			}
			b, err := hex.DecodeString(prefix[:2] + rest)
			if err != nil {
				continue // not an object's file
			}
			if !add(IDFromBytes(b)) {
				return found, nil
			}
		}
	}
	return found, nil
}

// PackedCount is how many objects the packs hold, counted as git's
// approximate object count is (loose objects left out): what sets the
// length of git's abbreviated hashes.
func (db *DB) PackedCount() int {
	db.mu.RLock()
	defer db.mu.RUnlock()
	n := 0
	for _, p := range db.packs {
		n += int(p.count())
	}
	return n
}
