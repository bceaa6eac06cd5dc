package history

import (
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"
	"golang.org/x/text/encoding/htmlindex"
)

// decoder turns the text of a commit written in another encoding (its
// "encoding" header: ISO-8859-1, Shift_JIS, ...) into UTF-8, as git log
// does. A commit in UTF-8, or in an encoding no table knows, keeps its
// text as it is, shown with U+FFFD where it is not UTF-8.
func decoder(c *object.Commit) func(string) string {
	name := strings.TrimSpace(string(c.Encoding))
	if name == "" || strings.EqualFold(name, "UTF-8") || strings.EqualFold(name, "UTF8") {
		return func(s string) string { return s }
	}
	enc, err := htmlindex.Get(name)
	if err != nil {
		return func(s string) string { return s }
	}
	dec := enc.NewDecoder()
	return func(s string) string {
		if out, err := dec.String(s); err == nil {
			return out
		}
		return s
	}
}
