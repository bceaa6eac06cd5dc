package gitobjects

import (
	"encoding/hex"
	"fmt"

	"github.com/go-git/go-git/v5/plumbing"
)

// Hash lengths in bytes of the two object formats git knows.
const (
	SHA1Size   = 20
	SHA256Size = 32
)

// ID names an object in either object format: a SHA-1 repository's names
// are 20 bytes, a SHA-256 one's 32. The length travels with the bytes so
// that an ID prints as the repository spells it and compares equal only
// to the same name in the same format. The zero ID names nothing (the
// empty tree, where a diff wants one).
type ID struct {
	raw [SHA256Size]byte
	n   uint8
}

// IDFromBytes takes a name of SHA1Size or SHA256Size bytes; any other
// length gives the zero ID.
func IDFromBytes(b []byte) ID {
	var id ID
	if len(b) != SHA1Size && len(b) != SHA256Size {
		return id
	}
	id.n = uint8(copy(id.raw[:], b))
	return id
}

// IDFromHash converts go-git's SHA-1 hash.
func IDFromHash(h plumbing.Hash) ID {
	if h.IsZero() {
		return ID{}
	}
	return IDFromBytes(h[:])
}

// ParseID reads a full name in hex, 40 or 64 digits in either case.
func ParseID(s string) (ID, error) {
	if len(s) != 2*SHA1Size && len(s) != 2*SHA256Size {
		return ID{}, fmt.Errorf("object name %q: want 40 or 64 hex digits", s)
	}
	var id ID
	if _, err := hex.Decode(id.raw[:], []byte(s)); err != nil {
		return ID{}, fmt.Errorf("object name %q: want 40 or 64 hex digits", s)
	}
	id.n = uint8(len(s) / 2)
	return id, nil
}

// MustParseID is ParseID for names the program produced itself, such as
// hashes a walk handed out: a malformed one gives the zero ID.
func MustParseID(s string) ID {
	id, _ := ParseID(s)
	return id
}

// Bytes is the name, SHA1Size or SHA256Size bytes (none for the zero ID).
func (id *ID) Bytes() []byte { return id.raw[:id.n] }

// Len is the name's length in bytes, 0 for the zero ID.
func (id ID) Len() int { return int(id.n) }

// IsZero reports the zero ID, which names no object.
func (id ID) IsZero() bool { return id.n == 0 }

// Hash is the ID as go-git's SHA-1 hash, for the parts of a SHA-1
// repository go-git still reads; a SHA-256 ID has none (zero).
func (id ID) Hash() plumbing.Hash {
	var h plumbing.Hash
	if id.n == SHA1Size {
		copy(h[:], id.raw[:SHA1Size])
	}
	return h
}

// String is the name in lower-case hex; the zero ID prints as go-git's zero
// hash does, 40 zeros.
func (id ID) String() string {
	if id.n == 0 {
		return plumbing.ZeroHash.String()
	}
	return hex.EncodeToString(id.raw[:id.n])
}
