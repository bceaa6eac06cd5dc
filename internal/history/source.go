package history

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	format "github.com/go-git/go-git/v5/plumbing/format/config"

	"github.com/digest-cli/digest/internal/gitobjects"
	"github.com/digest-cli/digest/internal/revision"
)

// source lends the repository to the revision resolver.
type source struct {
	r *Repo

	configOnce sync.Once
	config     []*format.Config // system, global, local: the last value counts
}

var _ revision.Source = (*source)(nil)

// hexLen is the length of the repository's object names in hex.
func (s *source) hexLen() int { return 2 * s.r.hashSize }

func (s *source) Ref(name string) (hash, target string, ok bool, err error) {
	for range 10 {
		if name != "HEAD" && !strings.HasPrefix(name, "refs/") {
			// FETCH_HEAD, ORIG_HEAD and kin: files go-git does not read as refs.
			line, err := s.pseudoRef(name)
			if err != nil || line == "" {
				return "", name, false, err
			}
			if to, ok := strings.CutPrefix(line, "ref: "); ok {
				name = strings.TrimSpace(to)
				continue
			}
			hexLen := s.hexLen()
			if len(line) < hexLen || !isHexString(line[:hexLen]) {
				return "", name, false, nil
			}
			return strings.ToLower(line[:hexLen]), name, true, nil
		}
		ref, ok, err := s.r.reference(name)
		if err != nil {
			return "", "", false, fmt.Errorf("read reference %s: %w", name, err)
		}
		if !ok {
			return "", name, false, nil
		}
		if ref.target != "" {
			name = ref.target
			continue
		}
		return ref.hash.String(), name, true, nil
	}
	return "", name, false, fmt.Errorf("reference %s: symbolic references nested too deep", name)
}

// pseudoRef reads the first line of a file such as FETCH_HEAD, which lives
// in the work tree's own git directory.
func (s *source) pseudoRef(name string) (string, error) {
	gitDir, _ := s.r.gitDirs()
	if gitDir == "" {
		return "", nil
	}
	b, err := os.ReadFile(filepath.Join(gitDir, name))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	return strings.TrimSpace(string(line)), nil
}

// Refs lists every reference's object in name order, then HEAD's, as git's
// :/text starts from them.
func (s *source) Refs() ([]string, error) {
	refs, err := s.r.references()
	var names []string
	for _, ref := range refs {
		names = append(names, ref.name)
	}
	if err != nil {
		return nil, fmt.Errorf("list references: %w", err)
	}
	slices.Sort(names)
	names = slices.Compact(append(names, "HEAD"))
	var hashes []string
	for _, n := range names {
		h, _, ok, err := s.Ref(n)
		if err != nil {
			return nil, err
		}
		if ok {
			hashes = append(hashes, h)
		}
	}
	return hashes, nil
}

// Reflog reads logs/NAME: HEAD's in the work tree's git directory, the
// others in the common one.
func (s *source) Reflog(name string) ([]revision.ReflogEntry, bool, error) {
	gitDir, commonDir := s.r.gitDirs()
	dir := commonDir
	if name == "HEAD" {
		dir = gitDir
	}
	if dir == "" || strings.Contains(name, "..") {
		return nil, false, nil
	}
	path := filepath.Join(dir, "logs", filepath.FromSlash(name))
	if info, err := os.Stat(path); err != nil || !info.Mode().IsRegular() {
		return nil, false, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, false, fmt.Errorf("read the reflog of %s: %w", name, err)
	}
	defer f.Close()
	var entries []revision.ReflogEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if e, ok := parseReflogLine(sc.Text(), s.hexLen()); ok {
			entries = append(entries, e)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, false, fmt.Errorf("read the reflog of %s: %w", name, err)
	}
	return entries, true, nil
}

// parseReflogLine reads "OLD NEW Name <email> SECONDS ZONE\tMESSAGE", its
// names hexLen digits long.
func parseReflogLine(line string, hexLen int) (revision.ReflogEntry, bool) {
	head, msg, _ := strings.Cut(line, "\t")
	n := hexLen
	if len(head) < 2*n+2 || head[n] != ' ' || head[2*n+1] != ' ' || !isHexString(head[:n]) || !isHexString(head[n+1:2*n+1]) {
		return revision.ReflogEntry{}, false
	}
	who := head[2*n+2:]
	end := strings.LastIndexByte(who, '>')
	if end < 0 {
		return revision.ReflogEntry{}, false
	}
	fields := strings.Fields(who[end+1:])
	if len(fields) < 1 {
		return revision.ReflogEntry{}, false
	}
	secs, err := strconv.ParseInt(fields[0], 10, 64)
	if err != nil {
		return revision.ReflogEntry{}, false
	}
	return revision.ReflogEntry{
		Old: strings.ToLower(head[:n]), New: strings.ToLower(head[n+1 : 2*n+1]),
		Time: time.Unix(secs, 0), Message: msg,
	}, true
}

func (s *source) Object(hash string) (kind, tagged string, err error) {
	h := gitobjects.MustParseID(hash)
	obj, err := s.r.readObject(h, plumbing.AnyObject, 1)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return "", "", revision.ErrMissing
	}
	if err != nil {
		return "", "", err
	}
	if obj.Type != plumbing.TagObject {
		return obj.Type.String(), "", nil
	}
	if obj, err = s.r.readObject(h, plumbing.TagObject, 0); err != nil {
		return "", "", err
	}
	first, _, _ := bytes.Cut(obj.Data, []byte("\n"))
	target, ok := bytes.CutPrefix(first, []byte("object "))
	if !ok || len(target) != s.hexLen() || !isHexString(string(target)) {
		return "", "", fmt.Errorf("tag %s: no object line. Try: git fsck", hash)
	}
	return revision.KindTag, strings.ToLower(string(target)), nil
}

func (s *source) Commit(hash string) (revision.Commit, error) {
	c, err := s.r.commitObject(gitobjects.MustParseID(hash))
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return revision.Commit{}, revision.ErrMissing
	}
	if err != nil {
		return revision.Commit{}, err
	}
	parents := make([]string, len(c.parents))
	for i, p := range c.parents {
		parents[i] = p.String()
	}
	return revision.Commit{Parents: parents, Time: c.meta.Committer.When, Message: c.meta.Message}, nil
}

func (s *source) Abbrev(prefix string, max int) ([]string, error) {
	var found []string
	if s.r.objects != nil {
		hashes, err := s.r.objects.WithPrefix(prefix, max)
		for _, h := range hashes {
			found = append(found, h.String())
		}
		return found, err
	}
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	iter, err := s.r.git.Storer.IterEncodedObjects(plumbing.AnyObject)
	if err != nil {
		return nil, err
	}
	defer iter.Close()
	for {
		obj, err := iter.Next()
		if err != nil {
			break
		}
		if h := obj.Hash().String(); strings.HasPrefix(h, prefix) && !slices.Contains(found, h) {
			if found = append(found, h); len(found) >= max {
				break
			}
		}
	}
	return found, nil
}

// Config reads a key from the system, global and repository files, as git
// does (GIT_CONFIG_NOSYSTEM and GIT_CONFIG_GLOBAL honoured); include.path is
// not followed.
func (s *source) Config(key string) []string {
	s.configOnce.Do(s.loadConfig)
	first, rest, ok := strings.Cut(key, ".")
	if !ok {
		return nil
	}
	sub, option := "", rest
	if i := strings.LastIndexByte(rest, '.'); i >= 0 {
		sub, option = rest[:i], rest[i+1:]
	}
	var values []string
	for _, cfg := range s.config {
		for _, sec := range cfg.Sections {
			if !sec.IsName(first) {
				continue
			}
			opts := sec.Options
			if sub != "" {
				opts = nil
				for _, ss := range sec.Subsections {
					if ss.Name == sub {
						opts = append(opts, ss.Options...)
					}
				}
			}
			values = append(values, opts.GetAll(option)...)
		}
	}
	return values
}

func (s *source) loadConfig() {
	var files []string
	if os.Getenv("GIT_CONFIG_NOSYSTEM") == "" {
		files = append(files, "/etc/gitconfig")
	}
	if global := os.Getenv("GIT_CONFIG_GLOBAL"); global != "" {
		files = append(files, global)
	} else {
		xdg := os.Getenv("XDG_CONFIG_HOME")
		home, _ := os.UserHomeDir()
		if xdg == "" && home != "" {
			xdg = filepath.Join(home, ".config")
		}
		if xdg != "" {
			files = append(files, filepath.Join(xdg, "git", "config"))
		}
		if home != "" {
			files = append(files, filepath.Join(home, ".gitconfig"))
		}
	}
	if _, commonDir := s.r.gitDirs(); commonDir != "" {
		files = append(files, filepath.Join(commonDir, "config"))
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			continue
		}
		cfg := format.New()
		if format.NewDecoder(bytes.NewReader(b)).Decode(cfg) == nil {
			s.config = append(s.config, cfg)
		}
	}
}

func isHexString(s string) bool {
	for _, c := range []byte(s) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}
