package promptfoo

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/digest-cli/digest/internal/dataset"
)

// secretText is what the files outside the config's folder hold: found in
// an item or an error, it was read.
const secretText = "OUTSIDE-SECRET-7f3a9c"

// confineLayout makes base/cfg (the config's folder, with ok.txt and a
// nested sub/inner.txt), base/sibling/p.txt and base/secret.txt, and a
// link cfg/link.txt to the secret; it returns base.
func confineLayout(t testing.TB) string {
	t.Helper()
	base := t.TempDir()
	for name, body := range map[string]string{
		"cfg/ok.txt":        "inside {{x}}",
		"cfg/sub/inner.txt": "nested {{x}}",
		"sibling/p.txt":     "sibling {{x}} " + secretText,
		"secret.txt":        secretText,
		"secrets/a.yaml":    "- vars: {x: " + secretText + "}\n  assert: [{type: contains, value: x}]\n",
	} {
		p := filepath.Join(base, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, to := range map[string]string{
		"cfg/link.txt":    filepath.Join(base, "secret.txt"),
		"cfg/rel.txt":     "../secret.txt",
		"cfg/linkdir":     filepath.Join(base, "secrets"),
		"cfg/environ.txt": "/proc/self/environ",
		"cfg/tosib.txt":   filepath.Join(base, "sibling", "p.txt"),
		"cfg/inlink.txt":  "sub/inner.txt",
	} {
		if err := os.Symlink(to, filepath.Join(base, filepath.FromSlash(link))); err != nil {
			t.Skip("no symbolic links here:", err)
		}
	}
	return base
}

// writeConfig writes cfg/promptfooconfig.yaml with one prompt and one test
// whose var x is given.
func writeConfig(t *testing.T, base, prompt, x string) string {
	t.Helper()
	doc := map[string]any{
		"prompts": []string{prompt},
		"tests":   []any{map[string]any{"vars": map[string]string{"x": x}, "assert": []any{map[string]string{"type": "contains", "value": "x"}}}},
	}
	b, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(base, "cfg", "promptfooconfig.yaml")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A config reads files in its folder only: an absolute path, a ../ path,
// a glob over another folder, a symbolic link leading out are refused, each
// in the one-line error naming the config's line and the reference, with
// --allow-outside or moving the file as what to try; nothing of the file
// is read. /proc, /sys and /dev are refused even when --allow-outside /
// lets the config read everything else. A nested folder is inside;
// --allow-outside opens a sibling, also through a link into it.
func TestConfinedToItsFolder(t *testing.T) {
	base := confineLayout(t)
	cfgDir := filepath.Join(base, "cfg")
	outside := "is outside the config's folder " + cfgDir + ". Try: move it into " + cfgDir + ", or --allow-outside "
	for _, tc := range []struct {
		name, prompt, x string
		allow           []string
		want            string // in the error; "" when the config loads
		content         string // the first item's prompt, when it loads
	}{
		{name: "absolute", prompt: "file:///etc/passwd",
			want: ":2: prompt file /etc/passwd: " + outside + "/etc to let the config read that folder"},
		{name: "traversal", prompt: "file://../../../../../../../../etc/passwd",
			want: "prompt file " + filepath.Join(cfgDir, "../../../../../../../../etc/passwd") + ": " + outside + "/etc "},
		{name: "traversal to a sibling", prompt: "file://../secret.txt",
			want: "prompt file " + filepath.Join(base, "secret.txt") + ": " + outside + base + " "},
		{name: "glob over /etc", prompt: "file:///etc/*",
			want: ":2: file:///etc/*: " + outside + "/etc "},
		{name: "glob over a parent", prompt: "file://../*.txt",
			want: ": file://../*.txt: " + outside + base + " "},
		{name: "double-star glob over /", prompt: "file:///**/passwd",
			want: ": file:///**/passwd: " + outside + "/ "},
		{name: "symbolic link out", prompt: "file://link.txt",
			want: "prompt file " + filepath.Join(cfgDir, "link.txt") + ": is a symbolic link leading out of the config's folder " + cfgDir + " (to " + filepath.Join(base, "secret.txt") + "). Try: copy the file into " + cfgDir + ", or --allow-outside " + base},
		{name: "relative symbolic link out", prompt: "file://rel.txt",
			want: "prompt file " + filepath.Join(cfgDir, "rel.txt") + ": is a symbolic link leading out of the config's folder"},
		{name: "glob through a linked folder", prompt: "file://linkdir/*.yaml",
			want: "file://linkdir/*.yaml: is a symbolic link leading out of the config's folder " + cfgDir + " (to " + filepath.Join(base, "secrets") + ")"},
		{name: "var from outside", prompt: "{{x}}", x: "file://" + filepath.Join(base, "secret.txt"),
			want: ":8: var \"x\": file://" + filepath.Join(base, "secret.txt") + ": " + outside + base},
		{name: "prompt path without file://", prompt: "../secret.txt",
			want: "prompt file " + filepath.Join(base, "secret.txt") + ": " + outside + base},
		{name: "/proc/self/environ", prompt: "file:///proc/self/environ",
			want: ":2: prompt file /proc/self/environ: is under /proc, which no config may read, even with --allow-outside"},
		{name: "/proc/self/environ with --allow-outside /", prompt: "file:///proc/self/environ", allow: []string{"/"},
			want: ":2: prompt file /proc/self/environ: is under /proc, which no config may read, even with --allow-outside"},
		{name: "a link to /proc/self/environ with --allow-outside /", prompt: "file://environ.txt", allow: []string{"/"},
			want: "prompt file " + filepath.Join(cfgDir, "environ.txt") + ": is under /proc, which no config may read"},
		{name: "/sys with --allow-outside /", prompt: "file:///sys/kernel/*", allow: []string{"/"},
			want: "file:///sys/kernel/*: is under /sys, which no config may read"},
		{name: "/dev/stdin with --allow-outside /", prompt: "{{x}}", x: "file:///dev/stdin", allow: []string{"/"},
			want: `var "x": file:///dev/stdin: is under /dev, which no config may read`},
		{name: "glob over /proc with --allow-outside /", prompt: "file:///proc/self/*", allow: []string{"/"},
			want: "file:///proc/self/*: is under /proc, which no config may read"},
		{name: "nested folder", prompt: "file://sub/inner.txt", x: "a", content: "nested a"},
		{name: "nested through a link", prompt: "file://inlink.txt", x: "a", content: "nested a"},
		{name: "nested glob", prompt: "file://**/inner.txt", x: "a", content: "nested a"},
		{name: "dotdot that stays inside", prompt: "file://sub/../ok.txt", x: "a", content: "inside a"},
		{name: "absolute inside", prompt: "file://" + filepath.Join(cfgDir, "ok.txt"), x: "a", content: "inside a"},
		{name: "sibling allowed", prompt: "file://../sibling/p.txt", x: "a", allow: []string{filepath.Join(base, "sibling")}, content: "sibling a " + secretText},
		{name: "sibling glob allowed", prompt: "file://../sibling/*.txt", x: "a", allow: []string{filepath.Join(base, "sibling")}, content: "sibling a " + secretText},
		{name: "link into an allowed sibling", prompt: "file://tosib.txt", x: "a", allow: []string{filepath.Join(base, "sibling")}, content: "sibling a " + secretText},
		{name: "sibling not allowed", prompt: "file://tosib.txt", x: "a",
			want: "(to " + filepath.Join(base, "sibling", "p.txt") + "). Try: copy the file into " + cfgDir + ", or --allow-outside " + filepath.Join(base, "sibling")},
		{name: "another sibling allowed", prompt: "file://../secret.txt", allow: []string{filepath.Join(base, "sibling")},
			want: "is outside the config's folder " + cfgDir + " and the --allow-outside folders. Try: move it into " + cfgDir + ", or --allow-outside " + base},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeConfig(t, base, tc.prompt, tc.x)
			cfg, err := Load(path, tc.allow...)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				items := readConfig(t, cfg)
				if len(items) != 1 || items[0].Messages[0].Content != tc.content {
					t.Fatalf("items %+v, want one of %q", items, tc.content)
				}
				return
			}
			if err == nil {
				t.Fatalf("loaded:\n%s", cfg.JSONL())
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, path+": digest cannot run 1 part of this promptfoo file: (1) "+path+":") || !strings.Contains(msg, tc.want) {
				t.Errorf("got  %s\nwant %s", msg, tc.want)
			}
			if strings.Contains(msg, "\n") || strings.Contains(msg, secretText) || strings.Contains(msg, "root:") {
				t.Errorf("not one line, or holding what it refused to read: %q", msg)
			}
		})
	}
}

func readConfig(t *testing.T, cfg *Config) []dataset.Item {
	t.Helper()
	var items []dataset.Item
	skipped, err := dataset.Read(strings.NewReader(string(cfg.JSONL())), dataset.Options{}, func(it dataset.Item) error { items = append(items, it); return nil })
	if err != nil || len(skipped) > 0 {
		t.Fatalf("read back: %v %v", err, skipped)
	}
	return items
}

// A test file in the folder that names a file outside it is held to the
// same folder: the config's, not the test file's own.
func TestConfinedThroughATestFile(t *testing.T) {
	base := confineLayout(t)
	cfgDir := filepath.Join(base, "cfg")
	if err := os.WriteFile(filepath.Join(cfgDir, "tests.yaml"), []byte("- vars: {x: file://../secret.txt}\n  assert: [{type: contains, value: file:///etc/hostname}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(cfgDir, "promptfooconfig.yaml")
	if err := os.WriteFile(path, []byte("prompts: ['{{x}}']\ntests: file://tests.yaml\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	tests := filepath.Join(cfgDir, "tests.yaml")
	for _, want := range []string{
		tests + `:1: var "x": file://../secret.txt: is outside the config's folder ` + cfgDir,
		tests + `:2: assertion value file:///etc/hostname: is outside the config's folder ` + cfgDir,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v\nwant %s", err, want)
		}
	}
}

// --allow-outside names existing folders, none of them /proc, /sys or
// /dev: anything else is refused in one line naming the flag.
func TestAllowOutsideMustBeAFolder(t *testing.T) {
	base := confineLayout(t)
	path := writeConfig(t, base, "{{x}}", "a")
	for allow, want := range map[string]string{
		filepath.Join(base, "nope"):       "--allow-outside " + filepath.Join(base, "nope") + ": no such file or directory. Try: the path of an existing folder",
		filepath.Join(base, "secret.txt"): "--allow-outside " + filepath.Join(base, "secret.txt") + ": not a directory. Try: the path of an existing folder",
		"/proc/self":                      "--allow-outside /proc/self: is under /proc, which no config may read. Try: a folder holding copies of the files the config needs",
		"/dev":                            "--allow-outside /dev: is under /dev, which no config may read.",
	} {
		_, err := Load(path, allow)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("--allow-outside %s: got %v, want %s", allow, err, want)
		}
	}
}

// Files lists the config and every file it read, once each, as absolute
// paths: what a run must not write its reports over.
func TestFilesListsWhatWasRead(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"promptfooconfig.yaml": "prompts: [file://p.txt, file://p.txt]\ntests:\n  - file://t*.yaml\n  - vars: {x: file://v.txt}\n    assert: [{type: contains, value: file://a.txt}]\n",
		"p.txt":                "{{x}}",
		"t1.yaml":              "- vars: {x: one}\n  assert: [{type: contains, value: x}]\n",
		"t2.yaml":              "- vars: {x: two}\n  assert: [{type: contains, value: x}]\n",
		"v.txt":                "three",
		"a.txt":                "x",
		"unread.txt":           "",
	})
	cfg, err := Load(filepath.Join(dir, "promptfooconfig.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range cfg.Files() {
		got = append(got, strings.TrimPrefix(f, dir+string(filepath.Separator)))
	}
	want := []string{"promptfooconfig.yaml", "p.txt", "t1.yaml", "t2.yaml", "v.txt", "a.txt"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Files() = %q, want %q", got, want)
	}
	// A config given by a relative path lists absolute ones.
	wd, _ := os.Getwd()
	t.Chdir(dir)
	cfg, err = Load("promptfooconfig.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Files()) != len(want) || !slices.ContainsFunc(cfg.Files(), func(f string) bool { return f == filepath.Join(dir, "v.txt") }) {
		t.Errorf("from %s, relative: %q", wd, cfg.Files())
	}
}

// A CSV header naming a column twice would keep one of each row's two
// values, silently: it is refused, naming the column and line 1. Columns
// without a name (a spreadsheet's trailing commas) are not vars anyone
// uses, and may repeat.
func TestCSVDuplicateColumns(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"dup.csv":              "name,__expected, name \nAda,contains: A,Bob\n",
		"expected.csv":         "name,__expected,__expected\nAda,contains: A,contains: d\n",
		"blank.csv":            "name,__expected,,\nAda,contains: A,,\n",
		"promptfooconfig.yaml": "prompts: ['{{name}}']\ntests: file://dup.csv\n",
	})
	for name, want := range map[string]string{
		"dup.csv":              `dup.csv:1: column "name" appears twice in the header (columns 1 and 3), and a row can keep only one of its values. Try: rename one of them, or merge the two`,
		"expected.csv":         `expected.csv:1: column "__expected" appears twice in the header (columns 2 and 3), and a row can keep only one of its values. Try: __expected1, __expected2, ... for several assertions`,
		"promptfooconfig.yaml": `dup.csv:1: column "name" appears twice`,
	} {
		_, err := Load(filepath.Join(dir, name))
		if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, want)) {
			t.Errorf("%s: got %v\nwant %s", name, err, want)
		}
	}
	if _, err := Load(filepath.Join(dir, "blank.csv")); err != nil {
		t.Errorf("blank columns: %v", err)
	}
}

// FuzzConfinement names any reference as a prompt, a var and an
// assertion value of a config, in a folder beside which a secret lies
// (with links to it inside), and checks that the secret is never read:
// neither in the items nor in the error, and no file outside the folder
// is among those read.
func FuzzConfinement(f *testing.F) {
	for _, seed := range []string{
		"file://../secret.txt", "file:///etc/passwd", "file://link.txt", "file://rel.txt", "file://linkdir/*.yaml",
		"file://../*", "file://**/*.txt", "file://../**/secret.txt", "../secret.txt", "file://sub/../../secret.txt",
		"file:///proc/self/environ", "file://environ.txt", "file://./link.txt", "file://sub/inner.txt", "file://ok.txt",
		"file://linkdir/a.yaml", "file://linkdir", "file://.", "file://..", "file://../s*/p.txt", "file://[",
	} {
		f.Add(seed)
	}
	base := confineLayout(f)
	cfgDir := filepath.Join(base, "cfg")
	files, err := openConfined(cfgDir)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(files.close)
	f.Fuzz(func(t *testing.T, ref string) {
		files.read = nil
		doc := map[string]any{
			"prompts": []string{ref, "{{x}}"},
			"tests": []any{
				ref,
				map[string]any{"vars": map[string]string{"x": ref}, "assert": []any{map[string]string{"type": "contains", "value": ref}}},
			},
		}
		data, err := yaml.Marshal(doc)
		if err != nil {
			t.Skip()
		}
		path := filepath.Join(cfgDir, "promptfooconfig.yaml")
		l := &loader{dir: cfgDir, files: files, read: files.readFile}
		cfg, err := l.load(path, data)
		if err != nil && strings.Contains(err.Error(), secretText) {
			t.Fatalf("the error holds the secret: %v", err)
		}
		if err == nil && strings.Contains(string(cfg.JSONL()), secretText) {
			t.Fatalf("the items hold the secret:\n%s", cfg.JSONL())
		}
		for _, r := range files.read {
			if _, in := inside(cfgDir, r); !in {
				t.Fatalf("read %s, outside %s", r, cfgDir)
			}
		}
	})
}
