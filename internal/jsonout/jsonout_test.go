package jsonout_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/digest-cli/digest/internal/jsonout"
)

type line struct {
	Summary string `json:"summary"`
	N       int    `json:"n"`
}

// hostile holds what a model could answer: a terminal escape, DEL, a C1
// control, a right-to-left override, and HTML.
var hostile = line{Summary: "<b>a & b</b> \x1b]0;title\x07 \x7f \u009b2J invoice_\u202egnp.exe", N: 1}

// checkShown fails when out holds a character a terminal acts on or that
// reorders text, or when the HTML characters were escaped.
func checkShown(t *testing.T, out []byte) {
	t.Helper()
	for _, bad := range []string{"\x1b", "\x07", "\x7f", "\u009b", "\u202e"} {
		if bytes.Contains(out, []byte(bad)) {
			t.Errorf("%q got through as it is:\n%s", bad, out)
		}
	}
	if !bytes.Contains(out, []byte("<b>a & b</b>")) {
		t.Errorf("the HTML characters were escaped:\n%s", out)
	}
}

func TestDocumentIsIndentedSafeAndDecodesBack(t *testing.T) {
	var b bytes.Buffer
	if err := jsonout.Document(&b, []line{hostile, {Summary: "plain", N: 2}}); err != nil {
		t.Fatal(err)
	}
	out := b.Bytes()
	checkShown(t, out)
	if !bytes.HasPrefix(out, []byte("[\n  {\n    \"summary\": ")) || !bytes.HasSuffix(out, []byte("}\n]\n")) {
		t.Errorf("not one document indented by two spaces:\n%s", out)
	}
	var back []line
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	if want := []line{hostile, {Summary: "plain", N: 2}}; !reflect.DeepEqual(back, want) {
		t.Errorf("decoded %+v, want %+v", back, want)
	}
}

func TestLinesAreOneValueEachAndDecodeBack(t *testing.T) {
	values := []line{hostile, {Summary: "two\nlines", N: 2}, {N: 3}}
	var b bytes.Buffer
	if err := jsonout.Lines(&b, slices.Values(values)); err != nil {
		t.Fatal(err)
	}
	checkShown(t, b.Bytes())
	var back []line
	sc := bufio.NewScanner(&b)
	for sc.Scan() {
		var v line
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%v: %q", err, sc.Text())
		}
		back = append(back, v)
	}
	if !reflect.DeepEqual(back, values) {
		t.Errorf("decoded %+v, want %+v", back, values)
	}
}

func TestLinesWritesNothingForNoValues(t *testing.T) {
	var b bytes.Buffer
	if err := jsonout.Lines(&b, slices.Values([]line(nil))); err != nil || b.Len() != 0 {
		t.Errorf("wrote %q, %v; want nothing", b.String(), err)
	}
}

// failing fails every write, as a closed pipe does.
type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestWriteErrorsAreReturned(t *testing.T) {
	if err := jsonout.Document(failing{}, hostile); err == nil || !strings.Contains(err.Error(), "broken pipe") {
		t.Errorf("Document: %v, want broken pipe", err)
	}
	if err := jsonout.Lines(failing{}, slices.Values([]line{hostile})); err == nil || !strings.Contains(err.Error(), "broken pipe") {
		t.Errorf("Lines: %v, want broken pipe", err)
	}
	if err := jsonout.Document(&bytes.Buffer{}, func() {}); err == nil {
		t.Error("Document encoded a func")
	}
	if err := jsonout.Lines(&bytes.Buffer{}, slices.Values([]any{1, func() {}})); err == nil {
		t.Error("Lines encoded a func")
	}
}
