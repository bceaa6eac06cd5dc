package history

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/digest-cli/digest/internal/gitobjects"
)

// readObject reads an object of type want, unless it is larger than limit
// bytes (0: no limit): then only its size is returned, with Data nil.
// Missing objects are plumbing.ErrObjectNotFound, as from go-git.
func (r *Repo) readObject(h gitobjects.ID, want plumbing.ObjectType, limit int64) (gitobjects.Object, error) {
	if r.objects == nil {
		return r.readWithGoGit(h.Hash(), want, limit)
	}
	obj, err := r.objects.ReadLimited(h, limit)
	return checkObject(h, want, obj, err)
}

// borrowObject is readObject for a caller that reads the object's bytes
// only until it calls release: an object the cache of delta bases holds is
// then read in place instead of copied.
func (r *Repo) borrowObject(h gitobjects.ID, want plumbing.ObjectType, limit int64) (obj gitobjects.Object, release func(), err error) {
	if r.objects == nil {
		obj, err := r.readWithGoGit(h.Hash(), want, limit)
		return obj, func() {}, err
	}
	obj, release, err = r.objects.Borrow(h, limit)
	if obj, err = checkObject(h, want, obj, err); err != nil {
		release()
		return obj, func() {}, err
	}
	return obj, release, nil
}

func checkObject(h gitobjects.ID, want plumbing.ObjectType, obj gitobjects.Object, err error) (gitobjects.Object, error) {
	if errors.Is(err, gitobjects.ErrNotFound) {
		return obj, fmt.Errorf("%s %s: %w", want, h, plumbing.ErrObjectNotFound)
	}
	if err != nil {
		return obj, err
	}
	if obj.Type != want && want != plumbing.AnyObject {
		return gitobjects.Object{}, fmt.Errorf("%s is a %s, not a %s", h, obj.Type, want)
	}
	return obj, nil
}

// objectStorer lends gitobjects to go-git's rename detection, read-only,
// so that --renames reads blobs on every core instead of taking turns.
type objectStorer struct{ r *Repo }

var _ storer.EncodedObjectStorer = objectStorer{}

func (s objectStorer) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	obj, err := s.r.readObject(gitobjects.IDFromHash(h), t, 0)
	if err != nil {
		return nil, err
	}
	return &knownObject{hash: h, Object: obj}, nil
}

func (s objectStorer) HasEncodedObject(h plumbing.Hash) error {
	if !s.r.objects.Has(gitobjects.IDFromHash(h)) {
		return plumbing.ErrObjectNotFound
	}
	return nil
}

func (s objectStorer) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	obj, err := s.r.readObject(gitobjects.IDFromHash(h), plumbing.AnyObject, 1)
	return obj.Size, err
}

func (objectStorer) NewEncodedObject() plumbing.EncodedObject { return &plumbing.MemoryObject{} }

func (objectStorer) SetEncodedObject(plumbing.EncodedObject) (plumbing.Hash, error) {
	return plumbing.ZeroHash, errReadOnly
}

func (objectStorer) IterEncodedObjects(plumbing.ObjectType) (storer.EncodedObjectIter, error) {
	return nil, errReadOnly
}

func (objectStorer) AddAlternate(string) error { return errReadOnly }

// readThroughStorage is go-git's storage of a repository with its object
// reads done by gitobjects: go-git, resolving a revision such as HEAD~3,
// would otherwise load each pack's whole index into the heap, and map
// every offset to its hash for deltas (over git.git, 60 MB allocated and a
// tenth of a second for four commits). References, configuration and the
// rest stay go-git's.
type readThroughStorage struct {
	*filesystem.Storage
	objects *gitobjects.DB
}

func (s readThroughStorage) EncodedObject(t plumbing.ObjectType, h plumbing.Hash) (plumbing.EncodedObject, error) {
	obj, err := s.objects.Read(gitobjects.IDFromHash(h))
	if errors.Is(err, gitobjects.ErrNotFound) {
		return nil, plumbing.ErrObjectNotFound
	}
	if err != nil {
		return nil, err
	}
	if t != plumbing.AnyObject && obj.Type != t {
		return nil, plumbing.ErrObjectNotFound // as go-git's own storage answers
	}
	return &knownObject{hash: h, Object: obj}, nil
}

func (s readThroughStorage) HasEncodedObject(h plumbing.Hash) error {
	if !s.objects.Has(gitobjects.IDFromHash(h)) {
		return plumbing.ErrObjectNotFound
	}
	return nil
}

func (s readThroughStorage) EncodedObjectSize(h plumbing.Hash) (int64, error) {
	obj, err := s.objects.ReadLimited(gitobjects.IDFromHash(h), 1)
	if errors.Is(err, gitobjects.ErrNotFound) {
		return 0, plumbing.ErrObjectNotFound
	}
	return obj.Size, err
}

// readWithGoGit is readObject for repositories gitobjects cannot read:
// go-git's storage is not safe for concurrent use, so reads take turns.
func (r *Repo) readWithGoGit(h plumbing.Hash, want plumbing.ObjectType, limit int64) (gitobjects.Object, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	enc, err := r.git.Storer.EncodedObject(want, h)
	if err != nil {
		return gitobjects.Object{}, fmt.Errorf("%s %s: %w", want, h, err)
	}
	obj := gitobjects.Object{Type: enc.Type(), Size: enc.Size()}
	if limit > 0 && obj.Size > limit {
		return obj, nil
	}
	rd, err := enc.Reader()
	if err != nil {
		return gitobjects.Object{}, fmt.Errorf("%s %s: %w", want, h, err)
	}
	defer rd.Close()
	obj.Data = make([]byte, 0, obj.Size)
	buf := bytes.NewBuffer(obj.Data)
	if _, err := io.Copy(buf, rd); err != nil {
		return gitobjects.Object{}, fmt.Errorf("%s %s: %w", want, h, err)
	}
	obj.Data = buf.Bytes()
	return obj, nil
}

// commitObject reads and parses a commit.
func (r *Repo) commitObject(h gitobjects.ID) (*decodedCommit, error) {
	obj, err := r.readObject(h, plumbing.CommitObject, 0)
	if err != nil {
		return nil, err
	}
	c, err := decodeCommit(h, obj.Data)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", h, err)
	}
	return c, nil
}

// hasCommit reports whether the commit h is here (not beyond a shallow
// clone's boundary).
func (r *Repo) hasCommit(h gitobjects.ID) (bool, error) {
	if r.objects != nil {
		return r.objects.Has(h), nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, err := r.git.Storer.EncodedObject(plumbing.CommitObject, h.Hash())
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return false, nil
	}
	return err == nil, err
}

// knownObject hands an object already read to go-git's decoders, with its
// hash known: go-git would otherwise hash the content again to learn it.
type knownObject struct {
	hash plumbing.Hash
	gitobjects.Object
}

var _ plumbing.EncodedObject = (*knownObject)(nil)

func (o *knownObject) Hash() plumbing.Hash             { return o.hash }
func (o *knownObject) Type() plumbing.ObjectType       { return o.Object.Type }
func (o *knownObject) SetType(t plumbing.ObjectType)   { o.Object.Type = t }
func (o *knownObject) Size() int64                     { return o.Object.Size }
func (o *knownObject) SetSize(s int64)                 { o.Object.Size = s }
func (o *knownObject) Writer() (io.WriteCloser, error) { return nil, errReadOnly }
func (o *knownObject) Reader() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(o.Data)), nil
}

var errReadOnly = errors.New("objects read from the repository are read-only")
