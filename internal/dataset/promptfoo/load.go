// Package promptfoo imports promptfoo's evaluations: a promptfooconfig.yaml,
// or a YAML or CSV file of its test cases, becomes a dataset in JSON Lines
// that package dataset reads like any other. Everything digest cannot run
// is refused at once, each part with where it is and what to try, and
// the files a config names are read only from its own folder (and those
// allowed), bounded in size, before anything is sent.
package promptfoo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/digest-cli/digest/internal/dataset"
)

// Config is a promptfoo configuration (promptfooconfig.yaml)
// turned into a digest dataset: every (prompt, test) pair is one item.
type Config struct {
	// Models are the config's providers as digest models, in order; nil
	// when it names none.
	Models []string
	// Judge is the grading model of defaultTest.options.provider, "" if none.
	Judge string
	// Items is how many items the config makes.
	Items int
	// jsonl holds the items as JSON Lines, which Read reads like any
	// dataset: a config's in digest's own format, a test file's as
	// promptfoo test cases.
	jsonl     []byte
	testsOnly bool
	files     []string
}

// Files are the files the config was made from, as absolute paths: the
// config itself, then every file it named that was read. A run must not
// write its reports over any of them.
func (c *Config) Files() []string { return c.files }

// NeedsPrompt reports whether the items are test cases without a prompt
// of their own, for --prompt: a test file read on its own.
func (c *Config) NeedsPrompt() bool { return c.testsOnly }

// Open opens a dataset as dataset.Open does, but reads a promptfoo config
// or test file (IsFile) whole, with Load, into JSON Lines for
// dataset.Read.
func Open(path string) (io.ReadCloser, error) {
	r, err := dataset.Open(path)
	if err != nil || !IsFile(path) {
		return r, err
	}
	r.Close()
	cfg, err := Load(path)
	if err != nil {
		return nil, err
	}
	return io.NopCloser(bytes.NewReader(cfg.JSONL())), nil
}

// IsFile reports whether path names a file Open reads as promptfoo's
// rather than as JSON Lines: a YAML config or test list, or a CSV test file.
func IsFile(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml", ".csv":
		return path != "-"
	}
	return false
}

// Error lists every part of a promptfoo config or test file that
// digest cannot run, each with where it is and what to try, so that one
// attempt shows them all.
type Error struct {
	Path     string
	Problems []string
	More     int // problems found past those listed
}

func (e *Error) Error() string {
	var b strings.Builder
	n := len(e.Problems) + e.More
	fmt.Fprintf(&b, "%s: digest cannot run %d part", e.Path, n)
	if n != 1 {
		b.WriteString("s")
	}
	b.WriteString(" of this promptfoo file:")
	for i, p := range e.Problems {
		fmt.Fprintf(&b, " (%d) %s", i+1, p)
	}
	if e.More > 0 {
		fmt.Fprintf(&b, " (and %d more of the same kinds)", e.More)
	}
	return b.String()
}

// maxProblems is how many problems an error lists; past that they are
// counted, the first ones being enough to show what to change.
const maxProblems = 12

// maxCombinations bounds the tests one test's list vars expand to.
const maxCombinations = 10000

// maxItems bounds the items of a whole config, counted before any is made.
// A test may lower it.
var maxItems = 1_000_000

// loader reads a promptfoo config and the files it names.
type loader struct {
	dir      string // file:// paths are relative to it
	files    *confined
	read     func(path string) ([]byte, error) // files.readFile, but in a test
	problems []string
	more     int
}

func (l *loader) problem(at, format string, args ...any) {
	if len(l.problems) == maxProblems {
		l.more++
		return
	}
	l.problems = append(l.problems, at+": "+fmt.Sprintf(format, args...))
}

func (l *loader) err(path string) error {
	if len(l.problems) == 0 {
		return nil
	}
	return &Error{Path: path, Problems: l.problems, More: l.more}
}

// path is where a file:// reference points, for reading and messages.
func (l *loader) path(ref string) string {
	ref = strings.TrimPrefix(ref, "file://")
	if filepath.IsAbs(ref) {
		return ref
	}
	return filepath.Join(l.dir, ref)
}

// src is a file being read: its path for messages, and its name relative
// to the config, for item ids.
type src struct{ path, rel string }

func (s src) at(n *yaml.Node) string {
	if n == nil || n.Line == 0 {
		return s.path
	}
	return s.path + ":" + strconv.Itoa(n.Line)
}

// parseYAML reads one YAML document. A document whose aliases expand
// beyond reason is refused by the decoder here, before it is walked.
func parseYAML(data []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	var probe any
	if err := doc.Decode(&probe); err != nil {
		return nil, err
	}
	return deref(&doc), nil
}

// Load reads a promptfoo file: a config (promptfooconfig.yaml)
// with its prompts, providers, tests (inline, or from YAML, JSON, JSON
// Lines and CSV files, globs allowed) and defaultTest; or a test file on
// its own, YAML (a list of tests) or CSV, whose tests are promptfoo test
// cases for --prompt. Everything that digest cannot run as promptfoo would
// is refused at once, in one *Error, before anything is sent.
//
// The files a config names (file:// prompts, tests, vars and values, globs,
// prompts that look like paths) are relative to its folder, and must be in
// it, or in one of the allowOutside folders (--allow-outside): not through
// .., an absolute path, or a symbolic link leading out. Nothing under
// /proc, /sys or /dev is read, whatever the folders. A file refused is one
// of the listed problems, with what to do instead.
func Load(path string, allowOutside ...string) (*Config, error) {
	data, err := readRegular(path)
	var fp *fileProblem
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission):
		return nil, dataset.OpenError(path, err)
	case errors.As(err, &fp):
		return nil, fmt.Errorf("dataset %s: %s. Try: %s", path, fp.why, fp.try)
	case err != nil:
		return nil, dataset.OpenError(path, err)
	}
	dir := filepath.Dir(path)
	files, err := openConfined(dir)
	if err != nil {
		return nil, fmt.Errorf("dataset %s: %w", path, err)
	}
	defer files.close()
	if err := files.allow(allowOutside); err != nil {
		return nil, err
	}
	cfg, err := (&loader{dir: dir, files: files, read: files.readFile}).load(path, data)
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	cfg.files = append([]string{abs}, files.read...)
	return cfg, nil
}

func (l *loader) load(path string, data []byte) (*Config, error) {
	s := src{path: path, rel: filepath.Base(path)}
	if strings.EqualFold(filepath.Ext(path), ".csv") {
		return l.testList(s, l.csvTests(s, data))
	}
	root, err := parseYAML(data)
	if err != nil {
		return nil, fmt.Errorf("%s: not valid YAML: %v. Try: fix the YAML (a promptfoo config has prompts, providers and tests)", path, err)
	}
	switch {
	case isSequence(root):
		return l.testList(s, l.testData(s, data))
	case !isMapping(root) || !hasAnyKey(root, "prompts", "providers", "targets", "tests"):
		return nil, fmt.Errorf("%s: neither a promptfoo config (a mapping with prompts, providers and tests) nor a list of tests; got %s. Try: prompts: [...], providers: [...], tests: [...]", path, yamlKind(root))
	}
	return l.config(s, root)
}

func hasAnyKey(n *yaml.Node, keys ...string) bool {
	for _, p := range pairs(n) {
		if slices.Contains(keys, p.key) {
			return true
		}
	}
	return false
}

// testList makes the tests of a test file read on its own into promptfoo
// test cases, which Read fills into the --prompt template. Each is placed
// on the line it starts on in its file (blank lines before it), so that
// Read's messages name the right line.
func (l *loader) testList(s src, tests []testCase) (*Config, error) {
	cfg := &Config{}
	var out bytes.Buffer
	line := 0
	if l.tooManyItems(s.path, tests, 1) {
		return nil, l.err(s.path)
	}
	for _, t := range tests {
		if t.prefix != "" || t.suffix != "" {
			l.problem(t.at, "a prefix or suffix needs the prompt of a config. Try: a promptfooconfig.yaml with prompts and tests: file://%s", s.rel)
			continue
		}
		for _, c := range l.expand(t) {
			vj, err := varsJSON(c.vars)
			if err != nil {
				l.problem(c.at, "%v. Try: plain values", err)
				continue
			}
			tc := struct {
				ID       string              `json:"id"`
				Vars     json.RawMessage     `json:"vars"`
				Assert   []dataset.Assertion `json:"assert,omitempty"`
				Metadata map[string]any      `json:"metadata,omitempty"`
			}{ID: c.name, Vars: vj, Metadata: c.metadata}
			for _, a := range c.asserts {
				tc.Assert = append(tc.Assert, a.asAssertion(a.value))
			}
			if why := testThreshold(tc.Assert, c.threshold); why != "" {
				l.problem(c.at, "%s", why)
				continue
			}
			b, err := marshalLine(tc)
			if err != nil {
				l.problem(c.at, "%v. Try: plain values", err)
				continue
			}
			for line+1 < c.line {
				out.WriteByte('\n')
				line++
			}
			out.Write(b)
			out.WriteByte('\n')
			line++
			cfg.Items++
		}
	}
	if err := l.err(s.path); err != nil {
		return nil, err
	}
	cfg.jsonl, cfg.testsOnly = out.Bytes(), true
	return cfg, nil
}

// marshalLine encodes v as one line of JSON, <, > and & as they are.
func marshalLine(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// ignoredKeys change nothing of what is sent or how it is scored.
var ignoredKeys = []string{"description", "tags", "sharing", "writeLatestResults", "metadata", "$schema"}

// keyTry says what to do instead of a top-level key digest does not read.
var keyTry = map[string]string{
	"scenarios":          "write each scenario's combinations out as tests",
	"env":                "export the variables before running digest eval",
	"outputPath":         "-o FILE with --format json, jsonl, csv or markdown, and --html or --junit",
	"evaluateOptions":    "the flags: -j N for maxConcurrency, --repeat N for repeat",
	"commandLineOptions": "the digest eval flags",
	"nunjucksFilters":    "plain {{ var }} placeholders",
}

func (l *loader) config(s src, root *yaml.Node) (*Config, error) {
	var prompts []prompt
	var tests []testCase
	var defaults testCase
	cfg := &Config{}
	var promptsNode, testsNode *yaml.Node
	for _, p := range pairs(root) {
		switch p.key {
		case "prompts":
			promptsNode = p.keyNode
			prompts = l.prompts(s, p.val)
		case "providers", "targets":
			cfg.Models = l.providers(s, p.val)
		case "tests":
			testsNode = p.keyNode
			tests = l.tests(s, p.val)
		case "defaultTest":
			if isText(p.val) {
				l.problem(s.at(p.val), "defaultTest from a file is not supported. Try: write defaultTest out in the config")
				continue
			}
			defaults, _ = l.test(s, p.val)
			cfg.Judge = defaults.grader
		default:
			if slices.Contains(ignoredKeys, p.key) {
				continue
			}
			try, ok := keyTry[p.key]
			if !ok {
				try = "remove it"
			}
			l.problem(s.at(p.keyNode), "%q is not supported by digest. Try: %s", p.key, try)
		}
	}
	if promptsNode == nil {
		l.problem(s.path, "there are no prompts. Try: prompts: [\"... {{var}} ...\"] or prompts: [file://prompt.txt]")
	}
	if testsNode == nil {
		tests = []testCase{{at: s.path, name: s.rel}} // promptfoo runs each prompt once
	}
	for i := range tests {
		tests[i] = merge(defaults, tests[i])
	}
	if l.tooManyItems(s.path, tests, len(prompts)) {
		return nil, l.err(s.path)
	}
	var out bytes.Buffer
	cache := map[string]*dataset.Template{}
	for _, t := range tests {
		if t.grader != "" && t.grader != cfg.Judge {
			l.problem(t.at, "a test's own grading provider (%s) is not supported; digest grades every test with one --judge. Try: options.provider in defaultTest only", t.grader)
		}
		if len(t.asserts) == 0 {
			l.problem(t.at, "the test has no assertions, so digest cannot score it. Try: an assert list on the test, or in defaultTest")
			continue
		}
		for _, c := range l.expand(t) {
			for _, p := range prompts {
				line, ok := l.item(c, p, len(prompts) > 1, cache)
				if ok {
					out.Write(line)
					out.WriteByte('\n')
					cfg.Items++
				}
			}
		}
	}
	if err := l.err(s.path); err != nil {
		return nil, err
	}
	cfg.jsonl = out.Bytes()
	return cfg, nil
}

// JSONL is the config's items as JSON Lines in digest's own format.
func (c *Config) JSONL() []byte { return c.jsonl }

// prompt is one prompt template of a config.
type prompt struct {
	label string
	raw   string
	at    string
}

func (l *loader) prompts(s src, n *yaml.Node) []prompt {
	n = deref(n)
	var out []prompt
	add := func(text, label string, at *yaml.Node) {
		if strings.HasPrefix(text, "file://") || l.promptPath(text) {
			out = append(out, l.promptFile(s, text, label, at)...)
			return
		}
		if label == "" {
			label = firstLine(text)
		}
		out = append(out, prompt{label: label, raw: text, at: s.at(at)})
	}
	switch {
	case isText(n):
		add(n.Value, "", n)
	case isSequence(n):
		for _, e := range n.Content {
			e = deref(e)
			switch {
			case isText(e):
				add(e.Value, "", e)
			case isMapping(e):
				var text, label string
				for _, p := range pairs(e) {
					switch p.key {
					case "raw", "id":
						if isText(p.val) {
							text = deref(p.val).Value
						}
					case "label":
						if isText(p.val) {
							label = deref(p.val).Value
						}
					default:
						l.problem(s.at(p.keyNode), "prompt option %q is not supported. Try: a prompt with raw (or id: file://...) and label only", p.key)
					}
				}
				if text == "" {
					l.problem(s.at(e), "a prompt needs raw text or id: file://PATH. Try: - raw: \"... {{var}} ...\"")
					continue
				}
				add(text, label, e)
			default:
				l.problem(s.at(e), "a prompt must be a string or {raw, label}; got %s. Try: - \"... {{var}} ...\"", yamlKind(e))
			}
		}
	case isMapping(n):
		// promptfoo's map form: {file://prompt.txt: label}.
		for _, p := range pairs(n) {
			label := ""
			if isText(p.val) {
				label = deref(p.val).Value
			}
			add(p.key, label, p.keyNode)
		}
	default:
		l.problem(s.at(n), "prompts must be a string or a list; got %s. Try: prompts: [\"... {{var}} ...\"]", yamlKind(n))
	}
	return out
}

// promptFileExts are the extensions promptfoo's maybeFilePath takes a
// prompt ending in (or in them and then :function) for a file.
var promptFileExts = []string{".cjs", ".cts", ".js", ".json", ".jsonl", ".mjs", ".mts", ".py", ".ts", ".txt", ".yml", ".yaml"}

// promptPath reports whether a prompt without file:// names a file, as
// promptfoo reads prompts: [prompt.txt]. promptfoo takes any text that
// looks like a path (maybeFilePath) for one and fails when there is no
// such file; digest takes it for one only when the file is there, so that
// a prompt such as "Explain a/b." stays a prompt.
func (l *loader) promptPath(text string) bool {
	if strings.Contains(text, "\n") || strings.Contains(text, "portkey://") || strings.Contains(text, "langfuse://") || strings.Contains(text, "helicone://") {
		return false
	}
	n := len(text)
	looksLike := strings.ContainsAny(text, "*/\\") || n >= 3 && text[n-3] == '.' || n >= 4 && text[n-4] == '.'
	tokens := strings.Split(text, ":")
	for i := max(len(tokens)-2, 0); i < len(tokens) && !looksLike; i++ {
		for _, ext := range promptFileExts {
			looksLike = looksLike || strings.HasSuffix(tokens[i], ext)
		}
	}
	if !looksLike {
		return false
	}
	path := l.path(text)
	if strings.ContainsAny(path, "*?[") {
		return l.files.anyMatch(path)
	}
	if l.files.exists(path) {
		return true
	}
	// file.py:function names a file too.
	if i := strings.LastIndex(path, ":"); i > 0 {
		return l.files.exists(path[:i])
	}
	return false
}

// codeExts are files promptfoo runs rather than reads.
var codeExts = []string{".js", ".cjs", ".mjs", ".ts", ".py"}

func isCode(path string) bool {
	if i := strings.LastIndex(path, ":"); i > len("file://") && !strings.Contains(path[i:], "/") {
		path = path[:i] // file://prompt.py:function
	}
	return slices.Contains(codeExts, strings.ToLower(filepath.Ext(path)))
}

// promptFile reads prompts from files: a text file holds one prompt, or
// several separated by lines of "---"; a JSON file one prompt (a chat
// prompt when it is a list of messages); a YAML file a chat prompt.
func (l *loader) promptFile(s src, ref, label string, at *yaml.Node) []prompt {
	if isCode(ref) {
		l.problem(s.at(at), "prompt %s is code that promptfoo runs; digest does not run code. Try: its text in a .txt or .json file", ref)
		return nil
	}
	paths, ok := l.glob(s, ref, at)
	if !ok {
		return nil
	}
	var out []prompt
	for _, path := range paths {
		data, ok := l.readRef(s.at(at), "prompt file "+path, path)
		if !ok {
			continue
		}
		name := label
		if name == "" {
			name = rel(l.dir, path)
		}
		text := strings.ReplaceAll(string(data), "\r\n", "\n")
		switch strings.ToLower(filepath.Ext(path)) {
		case ".json":
			out = append(out, prompt{label: name, raw: text, at: path})
		case ".yaml", ".yml":
			doc, err := parseYAML(data)
			var v any
			if err == nil && doc != nil {
				v, err = yamlValue(doc)
			}
			if err != nil {
				l.problem(path, "not valid YAML: %v. Try: a list of {role, content} messages", err)
				continue
			}
			if str, ok := v.(string); ok {
				out = append(out, prompt{label: name, raw: str, at: path})
				continue
			}
			js, _ := json.Marshal(v)
			if !dataset.IsChat(string(js)) {
				l.problem(path, "a YAML prompt file must hold a list of {role, content} messages. Try: that, or the prompt's text in a .txt file")
				continue
			}
			out = append(out, prompt{label: name, raw: string(js), at: path})
		default:
			parts := splitPrompts(text)
			for i, p := range parts {
				n := name
				if len(parts) > 1 {
					n = fmt.Sprintf("%s #%d", name, i+1)
				}
				out = append(out, prompt{label: n, raw: p, at: path})
			}
		}
	}
	return out
}

// splitPrompts splits a prompt file at its lines of "---".
func splitPrompts(text string) []string {
	var out []string
	var cur []string
	for _, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "---" {
			out = append(out, strings.Join(cur, "\n"))
			cur = nil
			continue
		}
		cur = append(cur, line)
	}
	out = append(out, strings.Join(cur, "\n"))
	var kept []string
	for _, p := range out {
		if strings.TrimSpace(p) != "" {
			kept = append(kept, strings.Trim(p, "\n"))
		}
	}
	return kept
}

// glob expands a file:// reference with wildcards, in name order.
func (l *loader) glob(s src, ref string, at *yaml.Node) ([]string, bool) {
	path := l.path(ref)
	if !strings.ContainsAny(path, "*?[") {
		return []string{path}, true
	}
	matches, err := l.files.glob(path)
	var fp *fileProblem
	if errors.As(err, &fp) {
		l.problem(s.at(at), "%s: %s. Try: %s", ref, fp.why, fp.try)
		return nil, false
	}
	if err != nil || len(matches) == 0 {
		l.problem(s.at(at), "%s matches no file. Try: a path relative to the config's folder", ref)
		return nil, false
	}
	sort.Strings(matches)
	return matches, true
}

func rel(dir, path string) string {
	if r, err := filepath.Rel(dir, path); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return filepath.ToSlash(path)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return clip(s)
}

// mapProvider maps a promptfoo provider id to a digest model, or says why
// it cannot.
func mapProvider(id string) (string, bool) {
	prov, rest, _ := strings.Cut(strings.TrimSpace(id), ":")
	sub, model, hasSub := strings.Cut(rest, ":")
	switch strings.ToLower(prov) {
	case "openai":
		switch {
		case hasSub && (sub == "chat" || sub == "responses"):
			rest = model
		case hasSub && slices.Contains([]string{"completion", "embedding", "embeddings", "assistant", "image", "realtime", "moderation", "transcription", "tts", "agents", "chatkit"}, sub):
			return "", false
		}
		return "openai:" + rest, strings.TrimSpace(rest) != ""
	case "anthropic":
		switch {
		case hasSub && sub == "messages":
			rest = model
		case hasSub && sub == "completion":
			return "", false
		}
		return "anthropic:" + rest, strings.TrimSpace(rest) != ""
	case "ollama":
		switch {
		case hasSub && (sub == "chat" || sub == "completion"):
			rest = model
		case hasSub && (sub == "embedding" || sub == "embeddings"):
			return "", false
		}
		return "ollama:" + rest, strings.TrimSpace(rest) != ""
	}
	return "", false
}

const providerTry = "Try: --models with offline, openai:MODEL, anthropic:MODEL or ollama:MODEL (and --base-url for an OpenAI-compatible server), and remove it from the config"

func (l *loader) providers(s src, n *yaml.Node) []string {
	n = deref(n)
	var entries []*yaml.Node
	switch {
	case isText(n) || isMapping(n):
		entries = []*yaml.Node{n}
	case isSequence(n):
		entries = n.Content
	default:
		l.problem(s.at(n), "providers must be a string or a list; got %s. %s", yamlKind(n), providerTry)
		return nil
	}
	var out []string
	for _, e := range entries {
		spec, ok := l.provider(s, e)
		if ok && !slices.Contains(out, spec) {
			out = append(out, spec)
		}
	}
	return out
}

// provider reads one provider: "id", {id, label, config?}, or the map form
// {id: {config}}. Per-provider settings cannot be honoured: digest's are
// the run's flags, the same for every model.
func (l *loader) provider(s src, e *yaml.Node) (string, bool) {
	e = deref(e)
	var id string
	var opts []pair
	switch {
	case isText(e):
		id = e.Value
	case isMapping(e):
		ps := pairs(e)
		if len(ps) == 1 && ps[0].key != "id" && isMapping(ps[0].val) {
			id, opts = ps[0].key, pairs(ps[0].val)
		} else {
			opts = ps
			for _, p := range ps {
				if p.key == "id" && isText(p.val) {
					id = deref(p.val).Value
				}
			}
		}
	default:
		l.problem(s.at(e), "a provider must be an id or {id, label}; got %s. %s", yamlKind(e), providerTry)
		return "", false
	}
	if id == "" {
		l.problem(s.at(e), "the provider has no id. %s", providerTry)
		return "", false
	}
	ok := true
	for _, p := range opts {
		switch p.key {
		case "id", "label":
		case "config":
			if cp := pairs(p.val); len(cp) > 0 {
				keys := make([]string, len(cp))
				for i, c := range cp {
					keys[i] = c.key
				}
				l.problem(s.at(p.keyNode), "provider %s: config (%s) is not supported per model. Try: the run's flags (--temperature, --max-tokens, --seed, --base-url, --model-config) and remove config", id, strings.Join(keys, ", "))
				ok = false
			}
		default:
			l.problem(s.at(p.keyNode), "provider %s: %q is not supported. Try: remove it", id, p.key)
			ok = false
		}
	}
	spec, mapped := mapProvider(id)
	if !mapped {
		l.problem(s.at(e), "provider %q has no digest equivalent. %s", id, providerTry)
		return "", false
	}
	return spec, ok
}

// grader reads options.provider: an id, or {id}.
func (l *loader) grader(s src, n *yaml.Node) string {
	n = deref(n)
	id := ""
	switch {
	case isText(n):
		id = n.Value
	case isMapping(n):
		for _, p := range pairs(n) {
			switch p.key {
			case "id":
				if isText(p.val) {
					id = deref(p.val).Value
				}
			case "label":
			default:
				l.problem(s.at(p.keyNode), "grading provider option %q is not supported. Try: options.provider: openai:MODEL, or --judge", p.key)
			}
		}
	}
	spec, ok := mapProvider(id)
	if !ok {
		l.problem(s.at(n), "grading provider %q has no digest equivalent. Try: --judge openai:MODEL (or anthropic:, ollama:), and remove options.provider", id)
		return ""
	}
	return spec
}
