package summarize

import (
	"github.com/digest-cli/digest/internal/prompt"
	"github.com/digest-cli/digest/internal/redact"
)

// redactSent replaces the secrets in what the model would be told of a
// commit, its message and its cut diff, and returns what it replaced. It
// runs on the cut text, the exact bytes that leave the machine: whatever a
// cut left of a secret is caught too (a private key cut in half is replaced
// to the end of its file's part).
func redactSent(r *redact.Redactor, c *prompt.Commit) redact.Counts {
	var inMessage, inDiff redact.Counts
	c.Message, inMessage = r.Redact(c.Message)
	c.Diff, inDiff = r.Redact(c.Diff)
	inDiff.Add(inMessage)
	return inDiff
}
