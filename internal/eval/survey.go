package eval

import (
	"bytes"
	"context"
	"errors"
	"io"

	"github.com/digest-cli/digest/internal/dataset"
	"github.com/digest-cli/digest/internal/score"
)

// AnyCheckable tells whether any of a dataset's first limit items (every
// item, for 0) has something to check. A run whose items have none is
// refused before anything is sent. Reading stops at the first such item,
// usually the first line; lines that cannot be read are left to the run
// to report.
func AnyCheckable(ctx context.Context, src io.Reader, o dataset.Options, limit int, sc *score.Scorer) (bool, error) {
	o.SkipInvalid = true
	items := 0
	_, err := dataset.Read(src, o, func(it dataset.Item) error {
		if items++; limit > 0 && items > limit {
			return errLimit
		}
		if uncheckable(sc, it) == "" {
			return errFound
		}
		return ctx.Err()
	})
	switch {
	case errors.Is(err, errFound):
		return true, nil
	case errors.Is(err, errLimit):
		return false, nil
	}
	return items == 0, err // an empty dataset is refused by the run itself
}

// CountLines counts src's lines, the last one with or without its newline:
// the items of a dataset, at most, for the progress bar's total.
func CountLines(src io.Reader) (int, error) {
	buf := make([]byte, 256<<10)
	lines, last := 0, byte('\n')
	for {
		n, err := src.Read(buf)
		if n > 0 {
			lines += bytes.Count(buf[:n], []byte{'\n'})
			last = buf[n-1]
		}
		if err == io.EOF {
			if last != '\n' {
				lines++
			}
			return lines, nil
		}
		if err != nil {
			return lines, err
		}
	}
}
