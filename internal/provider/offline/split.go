package offline

import (
	"regexp"
	"strings"
)

// details finds where the offline summary's last sentence, what changed
// where, begins: "Changes 4 files in the repository root (+237/-11): ..."
// or "Leaves out go.sum (lockfile).", at the start of the summary or
// after a sentence's end.
var details = regexp.MustCompile(`(?:^|[.!?] )(Changes [0-9]+ files?\b|Leaves out )`)

// Split parts a summary the offline model wrote into what a person would
// write, the sentences from the commit's message, and the details a
// machine adds: the files, lines and functions it changed. Release notes
// show the first and keep the second as a field. A summary without the
// details sentence is all short; one that is only details (a commit
// without a message) is kept whole as short, since an entry needs a text.
//
// Summaries are split when read, not when written, so that those stored
// before the split read the same.
func Split(summary string) (short, detail string) {
	loc := details.FindAllStringSubmatchIndex(summary, -1)
	if len(loc) == 0 {
		return summary, ""
	}
	// The last match: a body sentence may itself start "Changes 2 files".
	start := loc[len(loc)-1][2]
	short = strings.TrimSpace(summary[:start])
	if short == "" || short == noMessage {
		return summary, ""
	}
	return short, summary[start:]
}
