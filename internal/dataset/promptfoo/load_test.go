package promptfoo

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/digest-cli/digest/internal/dataset"
)

const fixture = "../../../testdata/eval/promptfoo/promptfooconfig.yaml"

// openAndRead reads a dataset through Open and Read, as eval does.
func openAndRead(t *testing.T, path string, o dataset.Options) []dataset.Item {
	t.Helper()
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var items []dataset.Item
	skipped, err := dataset.Read(r, o, func(it dataset.Item) error { items = append(items, it); return nil })
	if err != nil || len(skipped) > 0 {
		t.Fatalf("read %s: %v, skipped %v", path, err, skipped)
	}
	return items
}

func assertsOf(it dataset.Item) string {
	var parts []string
	for _, a := range it.Asserts {
		v, _ := json.Marshal(a.Value)
		s := a.Type + " " + string(v)
		if a.Weight != 0 {
			s += " w" + strings.TrimRight(strings.TrimRight(jsonNum(a.Weight), "0"), ".")
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

func jsonNum(f float64) string { b, _ := json.Marshal(f); return string(b) }

// The fixture config, with inline tests, a YAML test file (a list var that
// promptfoo expands into two tests) and a CSV test file, read as promptfoo
// reads it: each (prompt, test) pair an item; defaultTest's vars under the
// test's and its assertion first; an empty CSV cell an empty var; CSV
// assertions in promptfoo's string syntax.
func TestConfigItems(t *testing.T) {
	cfg, err := Load(fixture)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"openai:gpt-4o-mini", "anthropic:claude-3-5-haiku-latest"}; !reflect.DeepEqual(cfg.Models, want) {
		t.Errorf("models %v, want %v", cfg.Models, want)
	}
	items := openAndRead(t, fixture, dataset.Options{Name: fixture})
	if len(items) != 12 || cfg.Items != 12 {
		t.Fatalf("%d items (config says %d), want 12: 6 tests x 2 prompts", len(items), cfg.Items)
	}
	const p1, p2 = " [Say hello to {{name}} in {{language}}.]", " [prompt.txt]"
	want := []struct{ id, prompt, asserts string }{
		{"inline greeting" + p1, "Say hello to Ada in English.", `icontains "Ada"; includes "Ada"; exact "Hello Ada"`},
		{"inline greeting" + p2, "Write a short poem about Ada, in English.", `icontains "Ada"; includes "Ada"; exact "Hello Ada"`},
		{"list var (name=Bob)" + p1, "Say hello to Bob in English.", `icontains "Bob"; starts-with "fake answer"; not-includes "Bob"`},
		{"list var (name=Bob)" + p2, "Write a short poem about Bob, in English.", `icontains "Bob"; starts-with "fake answer"; not-includes "Bob"`},
		{"list var (name=Cy)" + p1, "Say hello to Cy in English.", `icontains "Cy"; starts-with "fake answer"; not-includes "Bob"`},
		{"list var (name=Cy)" + p2, "Write a short poem about Cy, in English.", `icontains "Cy"; starts-with "fake answer"; not-includes "Bob"`},
		{"tests.yaml:9" + p1, "Say hello to Dee in French.", `icontains "Dee"; regex "in French\\.$"; includes "Dee" w0.5; includes "German" w0.5`},
		{"tests.yaml:9" + p2, "Write a short poem about Dee, in French.", `icontains "Dee"; regex "in French\\.$"; includes "Dee" w0.5; includes "German" w0.5`},
		{"csv one" + p1, "Say hello to Eve in Spanish.", `icontains "Eve"; includes "Eve"; json null`},
		{"csv one" + p2, "Write a short poem about Eve, in Spanish.", `icontains "Eve"; includes "Eve"; json null`},
		{"tests.csv:3" + p1, "Say hello to Fay in .", `icontains "Fay"; icontains "SAY HELLO"; includes ["Zed","Fay"]`},
		{"tests.csv:3" + p2, "Write a short poem about Fay, in .", `icontains "Fay"; icontains "SAY HELLO"; includes ["Zed","Fay"]`},
	}
	for i, w := range want {
		it := items[i]
		if it.ID != w.id || len(it.Messages) != 1 || it.Messages[0].Content != w.prompt || assertsOf(it) != w.asserts {
			t.Errorf("item %d:\n got %q %v %s\nwant %q %q %s", i, it.ID, it.Messages, assertsOf(it), w.id, w.prompt, w.asserts)
		}
	}
}

// writeFiles lays out files in a temporary folder and returns it.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Everything that does not map is refused before anything is read, in one
// error naming each part, where it is, and what to try.
func TestRefusesWhatDoesNotMap(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"promptfooconfig.yaml": `prompts:
  - "Hi {{name}}"
  - file://make_prompt.py
providers:
  - openai:chat:gpt-4o-mini
  - id: openai:gpt-4o
    config:
      temperature: 0
  - bedrock:anthropic.claude-v2
scenarios:
  - config: []
tests:
  - vars: {name: Ada}
    assert:
      - type: javascript
        value: output.length > 3
      - type: similar
        value: hello
  - vars: {name: Bob}
    options:
      transform: output.trim()
    assert:
      - type: contains
        value: Bob
  - vars: {name: Cy}
  - file://tests.csv
`,
		"tests.csv": "name,__expected,__providerOutput\nDee,\"javascript: output.includes('x')\",x\n",
	})
	_, err := Load(filepath.Join(dir, "promptfooconfig.yaml"))
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatalf("got %v, want a *Error", err)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") {
		t.Errorf("the error is not one line: %q", msg)
	}
	cfg := filepath.Join(dir, "promptfooconfig.yaml")
	csv := filepath.Join(dir, "tests.csv")
	for _, part := range []string{
		cfg + ":3: prompt file://make_prompt.py is code",
		cfg + ":7: provider openai:gpt-4o: config (temperature) is not supported",
		cfg + `:9: provider "bedrock:anthropic.claude-v2" has no digest equivalent`,
		cfg + `:10: "scenarios" is not supported`,
		cfg + `:15: assertion "javascript" is not one digest scores`,
		cfg + `:17: assertion "similar" is not one digest scores`,
		cfg + ":21: options.transform is not supported",
		cfg + ":25: the test has no assertions",
		csv + `:1: column "__providerOutput" is not supported`,
		csv + `:2: __expected assertion "javascript" is not one digest scores`,
	} {
		if !strings.Contains(msg, part) {
			t.Errorf("the error does not name %q:\n%s", part, msg)
		}
	}
	if n := len(pe.Problems) + pe.More; n != 10 {
		t.Errorf("%d problems, want 10: %s", n, msg)
	}
	if c := strings.Count(msg, "Try: "); c != len(pe.Problems) {
		t.Errorf("%d problems but %d Try: %s", len(pe.Problems), c, msg)
	}
	// And Open, which eval calls, refuses it the same way.
	if _, err := Open(cfg); err == nil || err.Error() != msg {
		t.Errorf("Open: %v", err)
	}
}

// promptfoo's string syntax for assertions, as in CSV __expected cells.
func TestAssertionFromString(t *testing.T) {
	for _, tt := range []struct{ cell, want, problem string }{
		{"contains: foo", `includes "foo"`, ""},
		{"  icontains:Foo Bar ", `icontains "Foo Bar"`, ""},
		{"Paris", `exact "Paris"`, ""},
		{"Paris: the capital", `exact "Paris: the capital"`, ""}, // not a type promptfoo knows
		{"equals: 42", `exact "42"`, ""},
		{"not-contains: rude", `not-includes "rude"`, ""},
		{"starts-with: Yes", `starts-with "Yes"`, ""},
		{`regex: ^\d+$`, `regex "^\\d+$"`, ""},
		{"is-json", "json null", ""},
		{"contains-json", "contains-json null", ""},
		{`icontains-any: red, "green, blue" ,`, `icontains ["red","green, blue"]`, ""},
		{"contains-all: a,b", `includes "a" w0.5; includes "b" w0.5`, ""},
		{"llm-rubric: is polite", `judge "is polite"`, ""},
		{"grade: is polite", `judge "is polite"`, ""},
		{"javascript: output.length > 3", "", "is not one digest scores"},
		{"fn: x", "", "is not one digest scores"},
		{"python: len(output) > 3", "", "is not one digest scores"},
		{"similar(0.8): hello", "", "threshold"},
		{"levenshtein: hello", "", "is not one digest scores"},
		{"contains", "", "needs a value"},
		{"not-contains-all: a, b", "", "no digest equivalent"},
		{`regex: (?<=a)b`, "", "RE2"},
	} {
		as, why := assertionFromString(tt.cell)
		var parts []string
		for _, a := range as {
			v, _ := json.Marshal(a.value)
			s := a.typ + " " + string(v)
			if strings.HasSuffix(tt.cell, "a,b") {
				s += " w" + jsonNum(a.weight)
			}
			parts = append(parts, s)
		}
		got := strings.Join(parts, "; ")
		if got != tt.want || (tt.problem == "") != (why == "") || !strings.Contains(why, tt.problem) {
			t.Errorf("%q: got %s (%q), want %s (%q)", tt.cell, got, why, tt.want, tt.problem)
		}
		if why != "" && !strings.Contains(why, "Try: ") {
			t.Errorf("%q: %q says nothing to try", tt.cell, why)
		}
	}
}

// A CSV or YAML test file read on its own holds promptfoo test cases for
// --prompt: each item sits on its row's line, so Read's messages point at
// the file's real line.
func TestTestFileWithPrompt(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"tests.csv": "text,lang,__expected\n" +
			"Bonjour,French,icontains: hello\n" +
			"\"Multi\nline\",German,\n" +
			"Hola,,Hello\n",
		"tests.yaml": "# tests\n- vars: {text: Ciao}\n  assert: [{type: contains, value: Hi}]\n\n- description: two\n  vars:\n    other: x\n",
	})
	items := openAndRead(t, filepath.Join(dir, "tests.csv"), dataset.Options{Template: "Translate {{text}} from {{lang}}"})
	if len(items) != 3 {
		t.Fatalf("%d items, want 3", len(items))
	}
	for i, w := range []struct {
		line            int
		prompt, asserts string
	}{
		{2, "Translate Bonjour from French", `icontains "hello"`},
		{3, "Translate Multi\nline from German", ""},
		{5, "Translate Hola from ", `exact "Hello"`},
	} {
		it := items[i]
		if it.Line != w.line || it.Format != dataset.Promptfoo || it.Messages[0].Content != w.prompt || assertsOf(it) != w.asserts {
			t.Errorf("item %d: line %d %s %q %s, want line %d %q %s", i, it.Line, it.Format, it.Messages[0].Content, assertsOf(it), w.line, w.prompt, w.asserts)
		}
	}
	r, err := Open(filepath.Join(dir, "tests.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = dataset.Read(r, dataset.Options{Name: "tests.yaml", Template: "Say {{text}}"}, func(dataset.Item) error { return nil })
	if err == nil || !strings.HasPrefix(err.Error(), `tests.yaml:5: `) || !strings.Contains(err.Error(), "{{text}}") {
		t.Errorf("a test missing a var: got %v, want an error on line 5", err)
	}
}

// Provider ids promptfoo users write, mapped to digest's models.
func TestProviders(t *testing.T) {
	for id, want := range map[string]string{
		"openai:gpt-4o-mini":                         "openai:gpt-4o-mini",
		"openai:chat:gpt-4o-mini":                    "openai:gpt-4o-mini",
		"openai:responses:o3-mini":                   "openai:o3-mini",
		"openai:chat:ft:gpt-4o-mini:org::abc":        "openai:ft:gpt-4o-mini:org::abc",
		"anthropic:messages:claude-3-5-haiku-latest": "anthropic:claude-3-5-haiku-latest",
		"anthropic:claude-sonnet-4-5":                "anthropic:claude-sonnet-4-5",
		"ollama:chat:llama3":                         "ollama:llama3",
		"ollama:llama3:8b":                           "ollama:llama3:8b",
		"ollama:completion:llama3":                   "ollama:llama3",
		"openai:embedding:text-embedding-3-small":    "",
		"openai:completion:gpt-3.5-turbo-instruct":   "",
		"anthropic:completion:claude-2":              "",
		"bedrock:anthropic.claude-v2":                "",
		"echo":                                       "",
		"openai:":                                    "",
	} {
		got, ok := mapProvider(id)
		if !ok {
			got = ""
		}
		if got != want {
			t.Errorf("%s: got %q, want %q", id, got, want)
		}
	}
}

// A grader in defaultTest becomes the judge; inline prompts in promptfoo's
// map form and YAML chat prompt files are read; a var from a file is its
// text; anchors and merge keys work.
func TestConfigForms(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"promptfooconfig.yaml": `prompts:
  file://chat.yaml: chat
providers: anthropic:claude-3-5-haiku-latest
defaultTest:
  options:
    provider: openai:chat:gpt-4o-mini
base: &base
  assert:
    - type: llm-rubric
      value: "answers {{q}}"
tests:
  - <<: *base
    vars:
      q: file://question.txt
`,
		"chat.yaml":    "- role: system\n  content: Be brief.\n- role: user\n  content: \"{{q}}\"\n",
		"question.txt": "Why is the sky blue?\n",
	})
	_, err := Load(filepath.Join(dir, "promptfooconfig.yaml"))
	if err == nil || !strings.Contains(err.Error(), `"base" is not supported`) {
		t.Fatalf("an unknown top-level key: got %v", err)
	}
	// Anchors are usually kept under a key promptfoo ignores.
	body, _ := os.ReadFile(filepath.Join(dir, "promptfooconfig.yaml"))
	os.WriteFile(filepath.Join(dir, "promptfooconfig.yaml"), bytes.Replace(body, []byte("base: &base"), []byte("metadata: &base"), 1), 0o644)
	cfg, err := Load(filepath.Join(dir, "promptfooconfig.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Judge != "openai:gpt-4o-mini" || !reflect.DeepEqual(cfg.Models, []string{"anthropic:claude-3-5-haiku-latest"}) {
		t.Errorf("judge %q, models %v", cfg.Judge, cfg.Models)
	}
	items := openAndRead(t, filepath.Join(dir, "promptfooconfig.yaml"), dataset.Options{})
	if len(items) != 1 {
		t.Fatalf("%d items", len(items))
	}
	it := items[0]
	if it.System != "Be brief." || it.Messages[0].Content != "Why is the sky blue?\n" || assertsOf(it) != `judge "answers Why is the sky blue?\n"` {
		t.Errorf("got %q %q %s", it.System, it.Messages, assertsOf(it))
	}
}

// CSV __prefix and __suffix wrap the prompt, as promptfoo's test options
// do; a test file read on its own, with no prompt to wrap, refuses them.
func TestPrefixSuffix(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"promptfooconfig.yaml": "prompts: ['Q: {{q}}']\ntests: file://t.csv\n",
		"t.csv":                "q,__prefix,__suffix,__expected\nwhy?,Be kind. ,\"\nA:\",contains: x\n",
	})
	items := openAndRead(t, filepath.Join(dir, "promptfooconfig.yaml"), dataset.Options{})
	if len(items) != 1 || items[0].Messages[0].Content != "Be kind. Q: why?\nA:" {
		t.Fatalf("got %+v", items)
	}
	_, err := Load(filepath.Join(dir, "t.csv"))
	if err == nil || !strings.Contains(err.Error(), "t.csv:2: a prefix or suffix needs the prompt of a config") {
		t.Errorf("got %v", err)
	}
}

// A JSON Lines dataset does not go near the promptfoo reader.
func TestLeavesJSONLAlone(t *testing.T) {
	for path, want := range map[string]bool{"a.jsonl": false, "a.jsonl.gz": false, "-": false, "a.yaml": true, "A.YML": true, "t.csv": true} {
		if IsFile(path) != want {
			t.Errorf("IsFile(%s) = %v", path, !want)
		}
	}
	items := openAndRead(t, "../../../testdata/eval/arithmetic.jsonl", dataset.Options{})
	if len(items) == 0 || items[0].Format != dataset.Native {
		t.Errorf("arithmetic.jsonl: %d items", len(items))
	}
}

// FuzzTests reads arbitrary bytes as a promptfoo config, a YAML
// test list or a CSV test file (files it names do not exist) and checks
// what Load promises: no panic; an error, or items that Read
// takes whole, every one of them, with no line refused.
func FuzzTests(f *testing.F) {
	for _, name := range []string{"promptfooconfig.yaml", "tests.yaml", "tests.csv"} {
		data, err := os.ReadFile(filepath.Join("../../../testdata/eval/promptfoo", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, strings.HasSuffix(name, ".csv"))
	}
	f.Add([]byte("a,__expected\nx,contains: x\ny,\"icontains-any: a, b\"\n\"q\"\"\",regex: ^\\d\n"), true)
	f.Add([]byte("\uFEFFa,b\n1\n"), true)
	f.Add([]byte("prompts: ['{{a}}']\ntests:\n  - vars: {a: [1, 2, {x: y}]}\n    assert: [{type: is-json, value: {type: object}}]\n"), false)
	f.Add([]byte("- vars: &v {a: *v}\n"), false)
	f.Add([]byte("prompts: x\ndefaultTest: {assert: [{type: equals, value: .nan}]}\n"), false)
	files, err := openConfined(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(files.close)
	f.Fuzz(func(t *testing.T, data []byte, isCSV bool) {
		path := "dir/f.yaml"
		if isCSV {
			path = "dir/f.csv"
		}
		l := &loader{dir: "dir", files: files, read: func(string) ([]byte, error) { return nil, fs.ErrNotExist }}
		cfg, err := l.load(path, data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), path+": ") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		o := dataset.Options{Template: "t"}
		if !cfg.NeedsPrompt() {
			o.Template = ""
		}
		n := 0
		skipped, err := dataset.Read(bytes.NewReader(cfg.JSONL()), o, func(dataset.Item) error { n++; return nil })
		if err != nil || len(skipped) > 0 || n != cfg.Items {
			t.Fatalf("read back: %v, skipped %v, %d items of %d:\n%s", err, skipped, n, cfg.Items, cfg.JSONL())
		}
	})
}

// A file a config names that is not a regular file is refused, each in one
// line with a Try, before it is opened: /dev/zero would fill memory, a FIFO
// or /dev/stdin would wait forever. A regular file past the size bound is
// refused too, and tests: naming a file of no test kind is refused before
// it is read.
func TestRefusesDevicesAndFIFOs(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"promptfooconfig.yaml": `prompts:
  - "{{a}}"
  - file://fifo.txt
tests:
  - vars: {a: file:///dev/zero}
    assert: [{type: contains, value: x}]
  - vars: {a: file:///dev/stdin}
    assert: [{type: contains, value: x}]
  - vars: {a: file://big.txt}
    assert: [{type: contains, value: x}]
  - vars: {a: x}
    assert: [{type: contains, value: file:///dev/zero}]
  - file:///dev/zero
  - file://fifo.yaml
`,
		"big.txt": strings.Repeat("x", 1001),
	})
	for _, name := range []string{"fifo.txt", "fifo.yaml"} {
		if err := syscall.Mkfifo(filepath.Join(dir, name), 0o644); err != nil {
			t.Skip("no FIFOs here:", err)
		}
	}
	defer func(n int64) { maxFile = n }(maxFile)
	maxFile = 1000 // past the config, short of big.txt
	cfg := filepath.Join(dir, "promptfooconfig.yaml")
	_, err := Load(cfg)
	if err == nil {
		t.Fatal("loaded")
	}
	msg := err.Error()
	for _, part := range []string{
		cfg + ":3: prompt file " + filepath.Join(dir, "fifo.txt") + ": is not a regular file (a device, FIFO or socket). Try: ",
		cfg + `:5: var "a": file:///dev/zero: is under /dev, which no config may read`,
		cfg + `:7: var "a": file:///dev/stdin: is under /dev, which no config may read`,
		cfg + `:9: var "a": file://big.txt: is larger than 1000 bytes. Try: split it`,
		cfg + `:12: assertion value file:///dev/zero: is under /dev, which no config may read`,
		"/dev/zero: tests in  files are not supported",
		cfg + ":14: test file " + filepath.Join(dir, "fifo.yaml") + ": is not a regular file",
	} {
		if !strings.Contains(msg, part) {
			t.Errorf("the error does not name %q:\n%s", part, msg)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("not one line: %q", msg)
	}
	// The config itself.
	fifo := filepath.Join(dir, "fifo.yaml")
	if _, err := Load(fifo); err == nil || !strings.HasPrefix(err.Error(), "dataset "+fifo+": is not a regular file") {
		t.Errorf("a FIFO config: %v", err)
	}
}

// The items of a whole config (tests x combinations x prompts) are
// counted before any is made, and past maxItems the config is refused in
// one line: a short config otherwise multiplies past what memory holds.
func TestBoundsItems(t *testing.T) {
	defer func(n int) { maxItems = n }(maxItems)
	maxItems = 12 // the fixture makes 12: 6 tests x 2 prompts
	if _, err := Load(fixture); err != nil {
		t.Fatalf("at the bound: %v", err)
	}
	maxItems = 11
	_, err := Load(fixture)
	want := fixture + ": digest cannot run 1 part of this promptfoo file: (1) " + fixture + ": the config makes more than 11 items (tests x combinations of list vars x prompts). Try: "
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("past the bound: got %v, want %s...", err, want)
	}
	// A test file read on its own, its list var making two of its three.
	tests := "../../../testdata/eval/promptfoo/tests.yaml"
	maxItems = 2
	if _, err := Load(tests); err == nil || !strings.Contains(err.Error(), "more than 2 items") {
		t.Errorf("a test file past the bound: %v", err)
	}
}

// As promptfoo's generateVarCombinations: a list var makes one test per
// value only when its first value is a string; a list of numbers or
// objects, or an empty list, is one value, rendered as JSON.
func TestListVarsExpandOnlyStrings(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"promptfooconfig.yaml": `prompts: ["{{s}} {{n}} {{o}} {{e}}"]
tests:
  - vars:
      s: [a, 2]
      n: [1, b]
      o: [{k: v}]
      e: []
    assert: [{type: contains, value: x}]
`,
	})
	items := openAndRead(t, filepath.Join(dir, "promptfooconfig.yaml"), dataset.Options{})
	var got []string
	for _, it := range items {
		got = append(got, it.Messages[0].Content)
	}
	want := []string{`a [1,"b"] [{"k":"v"}] []`, `2 [1,"b"] [{"k":"v"}] []`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// As promptfoo's maybeFilePath: a prompt that looks like a path (a known
// extension, or a dot three or four from the end, or / \ *) is read from
// that file, without file://; digest does so only when the file is there,
// so a prompt that merely looks like one stays a prompt.
func TestPromptPathWithoutFileScheme(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"promptfooconfig.yaml": `prompts:
  - p.txt
  - sub/q.md
  - "Is a/b {{x}}"
  - missing.txt
tests:
  - vars: {x: one}
    assert: [{type: contains, value: x}]
`,
		"p.txt": "From p: {{x}}\n",
	})
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "q.md"), []byte("From q: {{x}}"), 0o644); err != nil {
		t.Fatal(err)
	}
	items := openAndRead(t, filepath.Join(dir, "promptfooconfig.yaml"), dataset.Options{})
	var got []string
	for _, it := range items {
		got = append(got, it.ID+" = "+it.Messages[0].Content)
	}
	want := []string{
		"promptfooconfig.yaml:7 [p.txt] = From p: one",
		"promptfooconfig.yaml:7 [sub/q.md] = From q: one",
		"promptfooconfig.yaml:7 [Is a/b {{x}}] = Is a/b one",
		"promptfooconfig.yaml:7 [missing.txt] = missing.txt",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// ** in a file glob is any number of folders, none included, as in
// promptfoo's glob; * stays within one folder.
func TestGlobDoubleStar(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"promptfooconfig.yaml": `prompts: ["{{x}}"]
tests:
  - file://cases/**/*.yaml
  - file://cases/*/*.csv
`,
	})
	test := func(x string) string { return "- vars: {x: " + x + "}\n  assert: [{type: contains, value: x}]\n" }
	for name, body := range map[string]string{
		"cases/a.yaml":         test("a"),
		"cases/x/b.yaml":       test("b"),
		"cases/x/y/c.yaml":     test("c"),
		"cases/x/y/skip.json":  test("no"),
		"cases/x/d.csv":        "x,__expected\nd,contains: x\n",
		"cases/x/y/nested.csv": "x,__expected\nno,contains: x\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	items := openAndRead(t, filepath.Join(dir, "promptfooconfig.yaml"), dataset.Options{})
	var got []string
	for _, it := range items {
		got = append(got, it.Messages[0].Content)
	}
	if want := []string{"a", "b", "c", "d"}; !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	for _, tt := range []struct {
		pat, name string
		want      bool
	}{
		{"**", "a/b", true}, {"a/**/b", "a/b", true}, {"a/**/b", "a/x/y/b", true},
		{"a/**/**/b", "a/b", true}, {"a/**", "b/c", false}, {"*.yaml", "x/a.yaml", false},
	} {
		if got := matchSegments(strings.Split(tt.pat, "/"), strings.Split(tt.name, "/")); got != tt.want {
			t.Errorf("%s ~ %s: %v", tt.pat, tt.name, got)
		}
	}
}

// A promptfoo test case means the same in a JSON Lines file run with
// --prompt as in a YAML test file: contains-any with a comma-separated
// string is any of its parts, contains-all one assertion per value.
func TestListAssertionsInJSONLines(t *testing.T) {
	asserts := `[{"type": "contains-any", "value": "Zed, Fay"}, {"type": "icontains-any", "value": "x,\"a, b\""},` +
		` {"type": "contains-all", "value": ["Fay", "hello"]}, {"type": "icontains-all", "value": "FAY, HELLO", "weight": 2}]`
	dir := writeFiles(t, map[string]string{
		"tests.jsonl": `{"vars": {"name": "Fay"}, "assert": ` + asserts + "}\n",
		"tests.yaml":  `- {vars: {name: Fay}, assert: ` + asserts + "}\n",
	})
	o := dataset.Options{Template: "Say hello to {{name}}"}
	yaml := openAndRead(t, filepath.Join(dir, "tests.yaml"), o)
	jsonl := openAndRead(t, filepath.Join(dir, "tests.jsonl"), o)
	want := `includes ["Zed","Fay"]; icontains ["x","a, b"]; includes "Fay" w0.5; includes "hello" w0.5; icontains "FAY" w1; icontains "HELLO" w1`
	if got := assertsOf(yaml[0]); got != want {
		t.Errorf("YAML test file: %s, want %s", got, want)
	}
	if got := assertsOf(jsonl[0]); got != want {
		t.Errorf("JSON Lines test case: %s, want %s", got, want)
	}
	// digest's own lines read promptfoo's names the same way.
	items, _, err := readAll(`{"prompt": "hi", "assert": `+asserts+"}\n", dataset.Options{})
	if err != nil || len(items) != 1 || assertsOf(items[0]) != want {
		t.Errorf("native line: %v %v, want %s", err, items, want)
	}
	// not-contains-all has no digest form: refused with what to use, as in a YAML file.
	_, _, err = readAll(`{"prompt": "hi", "assert": [{"type": "not-contains-all", "value": ["a"]}]}`+"\n", dataset.Options{})
	if err == nil || !strings.Contains(err.Error(), "Try: one not-contains per value") {
		t.Errorf("not-contains-all: %v", err)
	}
}

// readAll reads a whole dataset into memory (the tests' datasets are small).
func readAll(in string, o dataset.Options) ([]dataset.Item, []*dataset.LineError, error) {
	var items []dataset.Item
	skipped, err := dataset.Read(strings.NewReader(in), o, func(it dataset.Item) error {
		items = append(items, it)
		return nil
	})
	return items, skipped, err
}
