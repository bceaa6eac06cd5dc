package eval

import (
	"bufio"
	"bytes"
	"errors"
	"io"

	"github.com/digest-cli/digest/internal/dataset"
	"github.com/digest-cli/digest/internal/score"
)

// FirstJudgeItem returns the line of the first item of a dataset whose
// assertions need a judge model, 0 if none does. A run without --judge
// checks this before it sends anything: otherwise each such item would be
// paid for and then fail to be scored. Only lines that could name a judge
// assertion are parsed (the others read as blank, which keeps line
// numbers), so a large dataset is scanned at the speed of reading it.
// With a limit, only the first limit items are looked at, each parsed.
func FirstJudgeItem(src io.Reader, o dataset.Options, limit int) (line int, id string, err error) {
	o.SkipInvalid = true // a bad line is reported by the run itself
	if limit <= 0 {
		pr, pw := io.Pipe()
		go func(lines io.Reader) { pw.CloseWithError(blankUnlikelyLines(lines, pw)) }(src)
		defer pr.Close()
		src = pr
	}
	items := 0
	_, err = dataset.Read(src, o, func(it dataset.Item) error {
		if items++; limit > 0 && items > limit {
			return errFound
		}
		for _, a := range it.Asserts {
			if score.IsJudge(a.Type) {
				line, id = it.Line, it.ID
				return errFound
			}
		}
		return nil
	})
	if errors.Is(err, errFound) {
		return line, id, nil
	}
	return 0, "", err
}

var errFound = errors.New("found")

// judgeWords are the parts of every judge assertion's name, lower-cased.
var judgeWords = [][]byte{[]byte("judge"), []byte("rubric"), []byte("closedqa"), []byte("g-eval")}

// blankUnlikelyLines copies src to w line by line, each line that names no
// judge assertion replaced by an empty one. A line longer than holdLine is
// blanked too, unread, so memory stays bounded whatever the lines' length:
// should such an item need a judge, it ends in error in the run, which
// then exits 1.
func blankUnlikelyLines(src io.Reader, w io.Writer) error {
	r := bufio.NewReaderSize(src, 64<<10)
	bw := bufio.NewWriterSize(w, 64<<10)
	var line []byte
	long := false
	for {
		chunk, err := r.ReadSlice('\n')
		if long = long || len(line)+len(chunk) > holdLine; !long {
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if !long && namesAJudge(line) {
			bw.Write(bytes.TrimSuffix(line, []byte("\n")))
		}
		if long || len(line) > 0 {
			bw.WriteByte('\n')
		}
		line, long = line[:0], false
		if err == io.EOF {
			return bw.Flush()
		}
		if err != nil {
			return err
		}
	}
}

// holdLine is the longest line looked at.
const holdLine = 1 << 20

func namesAJudge(line []byte) bool {
	lower := bytes.ToLower(line)
	for _, word := range judgeWords {
		if bytes.Contains(lower, word) {
			return true
		}
	}
	return false
}
