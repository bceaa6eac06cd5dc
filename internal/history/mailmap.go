package history

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"

	"github.com/digest-cli/digest/internal/gitobjects"
	"github.com/digest-cli/digest/internal/mailmap"
)

// Mailmap reads the repository's mailmap as `git log --use-mailmap`
// does, each source after the one before, a later entry overriding an
// earlier one: the .mailmap file at the top of the work tree (not followed
// when it is a symbolic link, as git does not follow it); then the blob
// mailmap.blob names ("HEAD:.mailmap" by default in a bare repository);
// then the file mailmap.file names, from the system, global or repository
// configuration. A leading "~/" in mailmap.file is the home directory and
// a relative path is taken from the top of the work tree (of a bare
// repository, from its git directory), where git runs. A source that is
// not there is no error; one larger than mailmap.MaxBytes is. Without any,
// the Map is empty and maps every author to themselves.
func (r *Repo) Mailmap() (*mailmap.Map, error) {
	m := &mailmap.Map{}
	src := &source{r: r}
	last := func(key string) string {
		values := src.Config(key)
		if len(values) == 0 {
			return ""
		}
		return values[len(values)-1]
	}
	if r.workTree() {
		if err := addMailmapFile(m, filepath.Join(r.path, ".mailmap"), false); err != nil {
			return nil, err
		}
	}
	blob := last("mailmap.blob")
	if blob == "" && !r.workTree() {
		blob = "HEAD:.mailmap"
	}
	if blob != "" {
		data, err := r.mailmapBlob(blob)
		if err != nil {
			return nil, err
		}
		if err := m.Add(data); err != nil {
			return nil, fmt.Errorf("%s: mailmap.blob %s: %w", r.path, blob, err)
		}
	}
	if file := last("mailmap.file"); file != "" {
		if rest, ok := strings.CutPrefix(file, "~/"); ok {
			home, err := os.UserHomeDir()
			if err != nil {
				return nil, fmt.Errorf("mailmap.file %s: %w. Try: an absolute path", file, err)
			}
			file = filepath.Join(home, rest)
		} else if !filepath.IsAbs(file) {
			file = filepath.Join(r.path, file)
		}
		if err := addMailmapFile(m, file, true); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// addMailmapFile reads a mailmap file into m; one that is not there is
// none. Unless follow, a symbolic link is not followed.
func addMailmapFile(m *mailmap.Map, name string, follow bool) error {
	if !follow {
		if info, err := os.Lstat(name); err == nil && info.Mode()&fs.ModeSymlink != 0 {
			return nil
		}
	}
	f, err := os.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read mailmap %s: %w", name, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, mailmap.MaxBytes+1))
	if err != nil {
		return fmt.Errorf("read mailmap %s: %w", name, err)
	}
	if err := m.Add(data); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// mailmapBlob reads the blob a mailmap.blob value names: REV:PATH, or an
// object's full name. Like git, a name that names nothing is no mailmap.
func (r *Repo) mailmapBlob(name string) ([]byte, error) {
	var blob gitobjects.ID
	if rev, path, ok := strings.Cut(name, ":"); ok {
		commit, err := r.oneCommit(rev)
		if err != nil {
			return nil, nil
		}
		c, err := r.commitObject(commit)
		if err != nil {
			return nil, fmt.Errorf("%s: read commit %s: %w. Try: git fsck, to see what is damaged", r.path, commit, err)
		}
		h, found, err := r.pathIn(c.tree, path)
		if err != nil || !found {
			return nil, err
		}
		blob = h
	} else if h, err := gitobjects.ParseID(name); err == nil {
		blob = h
	} else {
		return nil, nil
	}
	obj, err := r.readObject(blob, plumbing.BlobObject, mailmap.MaxBytes)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return nil, nil // not fetched into a partial clone, or not there
	}
	if err != nil {
		return nil, fmt.Errorf("%s: mailmap.blob %s: %w. Try: git cat-file -t %s", r.path, name, err, name)
	}
	if obj.Data == nil && obj.Size > 0 {
		return nil, fmt.Errorf("%s: mailmap %s of %d bytes is over the %d bytes digest reads. Try: a .mailmap of the entries that matter, or none", r.path, name, obj.Size, mailmap.MaxBytes)
	}
	return obj.Data, nil
}

// pathIn finds a file by its slash-separated path in a tree.
func (r *Repo) pathIn(tree gitobjects.ID, path string) (gitobjects.ID, bool, error) {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	for i, part := range parts {
		entries, err := r.tree(tree)
		if err != nil {
			return gitobjects.ID{}, false, fmt.Errorf("%s: read tree %s: %w. Try: git fsck, to see what is damaged", r.path, tree, err)
		}
		found := false
		for _, e := range entries {
			if e.name != part {
				continue
			}
			last := i == len(parts)-1
			if last && e.mode != filemode.Dir && e.mode != filemode.Submodule || !last && e.isDir() {
				tree, found = e.hash, true
			}
			break
		}
		if !found {
			return gitobjects.ID{}, false, nil
		}
	}
	return tree, true, nil
}
