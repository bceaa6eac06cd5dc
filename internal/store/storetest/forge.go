package storetest

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/digest-cli/digest/internal/store"
)

func forgeAnswers(t *testing.T, s store.Store, keys ...string) map[string][]byte {
	t.Helper()
	got, err := s.ForgeAnswers(context.Background(), keys)
	if err != nil {
		t.Fatalf("ForgeAnswers: %v", err)
	}
	return got
}

func saveForgeAnswer(t *testing.T, s store.Store, key, body string, ttl time.Duration) {
	t.Helper()
	if err := s.SaveForgeAnswer(context.Background(), key, []byte(body), ttl); err != nil {
		t.Fatalf("SaveForgeAnswer(%s): %v", key, err)
	}
}

// testForgeAnswersRoundTrip: answers come back byte for byte (any bytes),
// to another store on the same database, and only for the keys asked.
func testForgeAnswersRoundTrip(t *testing.T, b Backend) {
	where := b.Fresh(t)
	s1, s2 := open(t, b, where), open(t, b, where)
	binary := string([]byte{0, 1, 0xff, '\n', '"'})
	saveForgeAnswer(t, s1, "k1", `{"pr":1}`, 0)
	saveForgeAnswer(t, s1, "k2", binary, time.Hour)
	saveForgeAnswer(t, s1, "k3", "", 0)
	got := forgeAnswers(t, s2, "k1", "k2", "k3", "missing", "k1")
	if len(got) != 3 || string(got["k1"]) != `{"pr":1}` || !bytes.Equal(got["k2"], []byte(binary)) {
		t.Errorf("ForgeAnswers = %q, want k1, k2 as saved and k3", got)
	}
	if body, ok := got["k3"]; !ok || len(body) != 0 {
		t.Errorf("the empty answer came back as %q, %v", body, ok)
	}
	if got := forgeAnswers(t, s2); len(got) != 0 {
		t.Errorf("no keys gave %q", got)
	}
}

// testForgeAnswersChunksLongLists: one call reads more keys than one
// statement may bind.
func testForgeAnswersChunksLongLists(t *testing.T, b Backend) {
	s := open(t, b, b.Fresh(t))
	var keys []string
	for i := range 1201 {
		k := fmt.Sprintf("key-%d", i)
		keys = append(keys, k)
		if i%3 == 0 {
			saveForgeAnswer(t, s, k, k, 0)
		}
	}
	got := forgeAnswers(t, s, keys...)
	if len(got) != 401 {
		t.Fatalf("found %d answers, want 401", len(got))
	}
	for k, body := range got {
		if string(body) != k {
			t.Errorf("%s holds %q", k, body)
		}
	}
}

// testForgeAnswersExpire: an answer saved for a while is gone after it, by
// the database's clock, and the next save stands.
func testForgeAnswersExpire(t *testing.T, b Backend) {
	s := open(t, b, b.Fresh(t))
	saveForgeAnswer(t, s, "soon", "unknown", 50*time.Millisecond)
	saveForgeAnswer(t, s, "later", "unknown", time.Hour)
	if got := forgeAnswers(t, s, "soon", "later"); len(got) != 2 {
		t.Fatalf("before expiry: %q, want both", got)
	}
	time.Sleep(150 * time.Millisecond)
	if got := forgeAnswers(t, s, "soon", "later"); len(got) != 1 || got["later"] == nil {
		t.Fatalf("after expiry: %q, want only later", got)
	}
	saveForgeAnswer(t, s, "soon", "known", 0)
	if got := forgeAnswers(t, s, "soon"); string(got["soon"]) != "known" {
		t.Errorf("an expired answer saved again: %q", got)
	}
	if err := s.SaveForgeAnswer(context.Background(), "bad", nil, -time.Second); err == nil {
		t.Error("a negative ttl was accepted")
	}
}

// testForgeAnswerKeptForEverWins: an answer kept for ever is replaced by
// another kept for ever, never by one that expires; one that expires is
// replaced by anything.
func testForgeAnswerKeptForEverWins(t *testing.T, b Backend) {
	where := b.Fresh(t)
	s1, s2 := open(t, b, where), open(t, b, where)
	saveForgeAnswer(t, s1, "k", "unknown", time.Hour)
	saveForgeAnswer(t, s2, "k", "unknown again", time.Hour)
	if got := forgeAnswers(t, s1, "k"); string(got["k"]) != "unknown again" {
		t.Errorf("an expiring answer replaced by another: %q", got["k"])
	}
	saveForgeAnswer(t, s2, "k", "pr 7", 0)
	saveForgeAnswer(t, s1, "k", "unknown", time.Hour)
	if got := forgeAnswers(t, s1, "k"); string(got["k"]) != "pr 7" {
		t.Errorf("an answer kept for ever was replaced by an expiring one: %q", got["k"])
	}
	saveForgeAnswer(t, s1, "k", "pr 8", 0)
	if got := forgeAnswers(t, s2, "k"); string(got["k"]) != "pr 8" {
		t.Errorf("an answer kept for ever was not replaced by another: %q", got["k"])
	}
}
