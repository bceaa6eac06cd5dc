package dataset

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Open opens a dataset for Read: "-" is standard input, anything else a
// file. A gzip-compressed dataset (file or stdin) is decompressed as it is
// read. A missing file is an error that says so and suggests the JSON
// Lines files next to where it was looked for. A promptfoo config is opened
// by the promptfoo package's Open, which reads it into JSON Lines.
func Open(path string) (io.ReadCloser, error) {
	if path == "-" {
		return decompress(os.Stdin, nopCloser{})
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, OpenError(path, err)
	}
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		f.Close()
		try := "a .jsonl file"
		if c := candidates(filepath.Join(path, "x"), path); len(c) > 0 {
			try = strings.Join(c, " or ")
		}
		return nil, fmt.Errorf("dataset %s: is a directory. Try: %s", path, try)
	}
	return decompress(f, f)
}

// IsStream reports whether a dataset can be read only once: standard input
// ("-"), a FIFO, or the pipe of a process substitution (/dev/fd/N) or of
// /dev/stdin. Such a dataset must not be looked through before the run:
// that first reading would drain it, and the run would find it empty.
func IsStream(path string) bool {
	if path == "-" {
		return true
	}
	fi, err := os.Stat(path)
	return err == nil && !fi.Mode().IsRegular() && !fi.IsDir()
}

// OpenError is the error Open returns when path cannot be opened as err
// says: a missing file names the JSON Lines files beside it, a file not
// readable says how to make it so.
func OpenError(path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		dir := filepath.Dir(path)
		if _, derr := os.Stat(dir); derr != nil {
			return fmt.Errorf("dataset %s: no such file (no directory %s). Try: check the path, or - to read the dataset from standard input", path, dir)
		}
		if c := candidates(path, dir); len(c) > 0 {
			return fmt.Errorf("dataset %s: no such file. Try: %s", path, strings.Join(c, " or "))
		}
		return fmt.Errorf("dataset %s: no such file. Try: check the path, or - to read the dataset from standard input", path)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("dataset %s: permission denied. Try: chmod +r %s", path, path)
	}
	return fmt.Errorf("dataset %s: %w", path, err)
}

// candidates lists up to three dataset files in dir, the names closest to
// path's first.
func candidates(path, dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	base := strings.ToLower(filepath.Base(path))
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	for _, e := range ents {
		n := e.Name()
		l := strings.ToLower(n)
		if e.IsDir() || !(strings.HasSuffix(l, ".jsonl") || strings.HasSuffix(l, ".jsonl.gz") || strings.HasSuffix(l, ".ndjson")) {
			continue
		}
		cs = append(cs, cand{n, distance(base, l)})
	}
	slices.SortStableFunc(cs, func(a, b cand) int { return a.d - b.d })
	var out []string
	for _, c := range cs[:min(3, len(cs))] {
		out = append(out, filepath.Join(dir, c.name))
	}
	return out
}

// distance is the Levenshtein distance between a and b, in bytes.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// decompress passes r through, or a gzip reader over it when it starts with
// gzip's magic bytes. It looks on the first Read, so that Open never waits
// on a terminal or pipe. Closing the result closes c.
func decompress(r io.Reader, c io.Closer) (io.ReadCloser, error) {
	return &sniffer{br: bufio.NewReader(r), c: c}, nil
}

type sniffer struct {
	br *bufio.Reader
	c  io.Closer
	r  io.Reader // chosen on the first Read
	zr *gzip.Reader
}

func (s *sniffer) Read(p []byte) (int, error) {
	if s.r == nil {
		s.r = s.br
		if magic, _ := s.br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
			zr, err := gzip.NewReader(s.br)
			if err != nil {
				s.r = errReader{fmt.Errorf("not a valid gzip file: %w", err)}
			} else {
				s.zr, s.r = zr, zr
			}
		}
	}
	return s.r.Read(p)
}

func (s *sniffer) Close() error {
	var err error
	if s.zr != nil {
		err = s.zr.Close()
	}
	return errors.Join(err, s.c.Close())
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

type nopCloser struct{}

func (nopCloser) Close() error { return nil }
