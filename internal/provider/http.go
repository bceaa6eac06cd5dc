package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/digest-cli/digest/internal/redact"
	"github.com/digest-cli/digest/internal/textsafe"
)

// Helpers shared by the clients of HTTP wire formats: reading the headers
// every provider sends alike, and classifying failures before any answer.

// HeaderCount reads a count header, -1 when absent or unreadable.
func HeaderCount(s string) int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// Scaled reads a non-negative decimal number of units.
func Scaled(s string, unit time.Duration) (time.Duration, bool) {
	if s == "" || !strings.ContainsAny(s[:1], "0123456789.") {
		return 0, false // ParseFloat would accept "Inf", "NaN", "+1"
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || f < 0 {
		return 0, false
	}
	v := f * float64(unit)
	if v >= math.MaxInt64 {
		return 0, false
	}
	return time.Duration(v), true
}

// RetryAfter is the wait the server asked for, as the official SDKs read
// it: retry-after-ms first, then retry-after in seconds or as an HTTP date.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	if d, ok := Scaled(strings.TrimSpace(h.Get("retry-after-ms")), time.Millisecond); ok {
		return d
	}
	v := strings.TrimSpace(h.Get("retry-after"))
	if d, ok := Scaled(v, time.Second); ok {
		return d
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// ShouldRetry is the server's x-should-retry verdict, nil when absent.
func ShouldRetry(h http.Header) *bool {
	var b bool
	switch strings.ToLower(strings.TrimSpace(h.Get("x-should-retry"))) {
	case "true":
		b = true
	case "false":
		b = false
	default:
		return nil
	}
	return &b
}

// TransportError classifies a failure to get any response. The caller's
// cancellation passes through untouched so the engine can tell "stop" from
// "failed"; a deadline is a per-request timeout and worth another try. The
// URL in the error loses any user info it had.
func TransportError(ctx context.Context, name, baseURL string, err error) error {
	if cerr := ctx.Err(); cerr != nil && !errors.Is(cerr, context.DeadlineExceeded) {
		return cerr
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = &url.Error{Op: ue.Op, URL: textsafe.URL(ue.URL), Err: ue.Err}
	}
	e := &Error{Provider: name, Kind: Transient, Err: err}
	var dns *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED) && isLocal(baseURL):
		e.Hint = fmt.Sprintf("Try: is the server running at %s?", textsafe.URL(baseURL))
	case errors.As(err, &dns) && dns.IsNotFound:
		// Not Fatal: a resolver can fail for a moment; the engine's count
		// of failures in a row stops a run whose host does not exist.
		e.Hint = "Try: check the host name in the base URL " + textsafe.URL(baseURL)
	}
	return e
}

// isLocal reports a base URL on this machine or network: a server of
// one's own, or a proxy standing in for the API.
func isLocal(base string) bool {
	u, err := url.Parse(base)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.IsLoopback() || ip.IsUnspecified() || ip.IsPrivate())
}

// checkURL refuses a URL net/http would only fail on at every try (no
// scheme, another scheme, no host): the base URL is wrong for the whole run.
func checkURL(name, baseURL, target string) *Error {
	fatal := func(reason, hint string) *Error {
		return &Error{Provider: name, Kind: Fatal, Message: fmt.Sprintf("base URL %q %s", textsafe.URL(baseURL), reason), Hint: hint}
	}
	if !strings.Contains(baseURL, "://") {
		scheme := "https://"
		if isLocal("http://" + baseURL) {
			scheme = "http://"
		}
		return fatal("has no scheme", "Try: "+scheme+textsafe.URL(baseURL))
	}
	u, err := url.Parse(target)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its text repeats the URL, user info and all
		}
		return fatal("is not a URL: "+err.Error(), "Try: a base URL such as http://localhost:11434/v1")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fatal(fmt.Sprintf("has the scheme %q", u.Scheme), "Try: a base URL that starts with http:// or https://")
	}
	if u.Hostname() == "" {
		return fatal("has no host", "Try: a base URL such as http://localhost:11434/v1")
	}
	return nil
}

// CleanMessage makes server text fit a one-line error and scrubs the key,
// should a server echo it back. A placeholder key (shorter than a secret,
// see redact.MinSecretLen) is left alone: "k" scrubbed from "max_tokens" would
// leave "max_to<redacted>ens".
func CleanMessage(s, key string) string {
	s = redact.Scrub(s, key)
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 300 {
		s = string(r[:300]) + "..."
	}
	// Error adds ". Hint"; a trailing period would double it.
	return strings.TrimRight(s, ". ")
}

// maxBody bounds what is read of any response: answers are kilobytes, and a
// misbehaving server must not exhaust memory.
const maxBody = 16 << 20

// Post sends payload as JSON to url with the given headers and reads the
// answer, whatever its status. A failure to get one comes back classified,
// as TransportError does.
func Post(ctx context.Context, client *http.Client, name, baseURL, url string, header http.Header, payload any) (*http.Response, []byte, error) {
	body, err := json.Marshal(payload)
	if err != nil {
		return nil, nil, &Error{Provider: name, Kind: Permanent, Message: "cannot encode the request", Err: err}
	}
	return Send(ctx, client, name, baseURL, http.MethodPost, url, header, "application/json", body)
}

// Send sends body (nil for none) with method to url and reads the answer
// as Post does; contentType is the body's.
func Send(ctx context.Context, client *http.Client, name, baseURL, method, url string, header http.Header, contentType string, body []byte) (*http.Response, []byte, error) {
	resp, err := Open(ctx, client, name, baseURL, method, url, header, contentType, body)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	// One byte past the bound tells an answer that fits from one cut short.
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, nil, TransportError(ctx, name, baseURL, err)
	}
	if len(data) > maxBody {
		if resp.StatusCode >= 200 && resp.StatusCode <= 299 {
			return nil, nil, &Error{Provider: name, Kind: Malformed, StatusCode: resp.StatusCode,
				Message: fmt.Sprintf("the answer is over %d MiB", maxBody>>20)}
		}
		data = data[:maxBody] // an error's message is in its first bytes
	}
	return resp, data, nil
}

// Open sends a request as Send does and hands back the response with its
// body unread, for answers too large to hold (a batch's results); the
// caller closes it.
func Open(ctx context.Context, client *http.Client, name, baseURL, method, url string, header http.Header, contentType string, body []byte) (*http.Response, error) {
	if e := checkURL(name, baseURL, url); e != nil {
		return nil, e
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, &Error{Provider: name, Kind: Fatal, Message: "cannot make a request of the base URL " + textsafe.URL(baseURL),
			Hint: "Try: check the base URL " + textsafe.URL(baseURL)}
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json")
	}
	req.Header.Set("User-Agent", "digest")
	resp, err := client.Do(req)
	if err != nil {
		return nil, TransportError(ctx, name, baseURL, err)
	}
	return resp, nil
}

// ReadErrorBody reads what an error response says, within the bound Send
// keeps, and closes it.
func ReadErrorBody(resp *http.Response) []byte {
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxBody)) // a cut message still says something
	return data
}

// StatusError is what every wire format makes of an HTTP error alike: the
// server's message (from its JSON error, else its plain text; an HTML page
// says nothing useful, so the status's name stands in), the retry advice in
// its headers, and the kind its status implies. Each client then refines the
// kind and hint by what its API says in the body (billing, overload).
func StatusError(name, key string, status int, header http.Header, data []byte, message, typ string, isJSON bool, limits *Limits) *Error {
	if !isJSON {
		if s := strings.TrimSpace(string(data)); !strings.HasPrefix(s, "<") {
			message = s // a proxy's plain-text error
		}
	}
	if message == "" {
		message = http.StatusText(status)
	}
	if message == "" && status == 529 { // not in net/http: Anthropic's own code
		message = "Overloaded"
	}
	return &Error{
		Provider:    name,
		Kind:        kindOfStatus(status),
		StatusCode:  status,
		Type:        CleanMessage(typ, key),
		Message:     CleanMessage(message, key),
		RetryAfter:  RetryAfter(header, time.Now()),
		ShouldRetry: ShouldRetry(header),
		Limits:      limits,
	}
}

// kindOfStatus is what an HTTP status alone says about trying again.
func kindOfStatus(status int) Kind {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden || status == http.StatusPaymentRequired:
		return Fatal
	case status == http.StatusTooManyRequests:
		return RateLimited
	case status == http.StatusServiceUnavailable || status == 529:
		return Overloaded
	case status == http.StatusRequestTimeout || status == http.StatusConflict || status >= 500:
		return Transient
	}
	return Permanent
}

// Unreadable is the error for a success status whose body the client
// cannot read; what says what was wrong, as DescribeJSON does.
func Unreadable(name string, status int, limits *Limits, what string) *Error {
	return &Error{Provider: name, Kind: Malformed, StatusCode: status, Message: what, Limits: limits}
}

// UnreadableBody is the error for a success status whose body did not
// decode as JSON. A body cut short is a transfer that broke, not a server
// answering in a shape the client does not read: it is Transient, retried
// as any broken connection is, where an answer that decodes to the wrong
// shape is Malformed and retried once.
func UnreadableBody(name string, status int, limits *Limits, data []byte, err error) *Error {
	e := Unreadable(name, status, limits, DescribeJSON("", data, err))
	if len(bytes.TrimSpace(data)) > 0 && cutShort(err) {
		e.Kind = Transient
	}
	return e
}

func cutShort(err error) bool {
	var syntax *json.SyntaxError
	return errors.As(err, &syntax) && syntax.Error() == "unexpected end of JSON input"
}

// DescribeJSON says in a few words why data, the value at field ("" for
// the whole body), did not decode with err: the part of an unreadable
// answer a person can act on. It quotes none of the body, which may be
// anything.
func DescribeJSON(field string, data []byte, err error) string {
	what := "the body"
	if field != "" {
		what = field
	}
	trimmed := bytes.TrimSpace(data)
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case len(trimmed) == 0:
		return what + " is empty"
	case trimmed[0] == '<':
		return what + " is an HTML page, not JSON"
	case cutShort(err):
		return fmt.Sprintf("the JSON is cut short after %d bytes", len(data))
	case errors.As(err, &syntax):
		return fmt.Sprintf("%s is not JSON (%s at byte %d)", what, syntax.Error(), syntax.Offset)
	case errors.As(err, &typ):
		if typ.Field != "" {
			what = strings.TrimPrefix(field+"."+typ.Field, ".")
		}
		return fmt.Sprintf("%s is %s, not %s", what, jsonValueWord(typ.Value), jsonTypeWord(typ.Type))
	case err != nil:
		return what + " does not decode: " + err.Error()
	}
	return what + " does not decode"
}

// jsonValueWord names the JSON value an UnmarshalTypeError found.
func jsonValueWord(v string) string {
	switch {
	case strings.HasPrefix(v, "number"):
		return "a number"
	case v == "object" || v == "array":
		return "an " + v
	case v == "bool":
		return "a boolean"
	}
	return "a " + v
}

// jsonTypeWord names in JSON's words the Go type a value should have been.
func jsonTypeWord(t reflect.Type) string {
	if t == nil {
		return "what was expected"
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return t.String()
}

// JSONKind names the kind of a JSON value for a message: "a number", "an
// object", ...
func JSONKind(raw json.RawMessage) string {
	s := bytes.TrimSpace(raw)
	if len(s) == 0 {
		return "nothing"
	}
	switch s[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
