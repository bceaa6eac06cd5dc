// Package budget decides what of a commit is worth sending: it drops files
// no reader wants (lockfiles, vendored and generated code) and cuts the rest
// to a token budget counted with a real BPE tokenizer.
package budget

import (
	"fmt"
	"strings"

	"github.com/tiktoken-go/tokenizer"
)

// DefaultTokenizer is the vocabulary of current OpenAI models; its counts are
// a close, slightly generous stand-in for other providers' tokenizers.
const DefaultTokenizer = "o200k_base"

// Tokenizers lists the vocabularies compiled into the binary.
var Tokenizers = []string{"o200k_base", "cl100k_base"}

// Tokenizer counts BPE tokens with a vocabulary embedded in the binary, so
// counting never needs the network. It is safe for concurrent use.
type Tokenizer struct {
	codec tokenizer.Codec
}

// NewTokenizer loads one of Tokenizers.
func NewTokenizer(name string) (*Tokenizer, error) {
	var enc tokenizer.Encoding
	switch name {
	case "o200k_base", "":
		enc = tokenizer.O200kBase
	case "cl100k_base":
		enc = tokenizer.Cl100kBase
	default:
		return nil, fmt.Errorf("unknown tokenizer %q. Try: one of %s", name, strings.Join(Tokenizers, ", "))
	}
	codec, err := tokenizer.Get(enc)
	if err != nil {
		return nil, fmt.Errorf("load tokenizer %s: %w", name, err)
	}
	return &Tokenizer{codec: codec}, nil
}

// Name is the vocabulary's name.
func (t *Tokenizer) Name() string { return t.codec.GetName() }

// Count returns the number of tokens in s.
func (t *Tokenizer) Count(s string) int {
	// The codec only fails in strict UTF-8 mode, which is never set here.
	n, _ := t.codec.Count(s)
	return n
}
