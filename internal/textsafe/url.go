package textsafe

import "strings"

// URL is a URL fit to show: without the user name and password it may
// carry ("http://user:pass@host/v1" shows as "http://host/v1"), even when
// it does not parse as a URL.
func URL(raw string) string {
	authority := raw
	start := 0
	if i := strings.Index(raw, "://"); i >= 0 {
		start = i + len("://")
		authority = raw[start:]
	}
	if end := strings.IndexAny(authority, "/?#"); end >= 0 {
		authority = authority[:end]
	}
	at := strings.LastIndexByte(authority, '@')
	if at < 0 {
		return raw
	}
	return raw[:start] + raw[start+at+1:]
}
