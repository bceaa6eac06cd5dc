package summarize

import (
	"github.com/digest-cli/digest/internal/committype"
	"github.com/digest-cli/digest/internal/prompt"
)

// kindOf is a summarized commit's kind of change: the model's where it
// gave a valid one, the rules' (from the message and the paths touched)
// for each field it left out or got wrong. A bad field never fails the
// commit.
func kindOf(a prompt.Answer, message string, paths []string) committype.Kind {
	rules := committype.Classify(message, paths)
	kind := rules
	if t, ok := committype.Normalize(a.Type); ok {
		kind.Type = t
		kind.Scope = a.Scope // the model's type comes with its scope, "" included
	}
	if a.Breaking != nil {
		kind.Breaking = *a.Breaking || rules.Breaking // a BREAKING CHANGE footer stands
	}
	return kind
}

// paths lists the files the commit changes, as the prompt named them.
func (p *pending) paths() []string {
	out := make([]string, len(p.sent.Files))
	for i, f := range p.sent.Files {
		out[i] = f.Path
	}
	return out
}
