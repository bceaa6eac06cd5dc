// Package key derives the content-hash identities digest stores results
// under, so the same work is recognised wherever and whenever it recurs.
package key

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/url"
	"strings"

	"github.com/digest-cli/digest/internal/provider"
)

// Of hashes parts with SHA-256 in a canonical encoding: each part is length
// prefixed, so ("ab","c") and ("a","bc") never share a key.
func Of(parts ...string) string {
	h := sha256.New()
	var n [8]byte
	for _, p := range parts {
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// RepoID names a history by its root commit, so every clone of a
// repository, wherever it lives, shares one cache, and repositories with
// different roots never collide. 16 hex digits (64 bits) keep ids short in
// reports while leaving collisions out of reach for any one user's cache.
func RepoID(rootCommit string) string {
	return Of("digest/repo", rootCommit)[:16]
}

// Commit is the cache key of a commit: repo_id:commit_hash.
func Commit(repoID, hash string) string {
	return repoID + ":" + hash
}

// Request is the idempotency key of an evaluation request: everything that
// shapes the answer, the repeat index included, so that no answer is ever
// served for another model, parameter, prompt or repeat.
type Request struct {
	Provider    string             `json:"provider"`
	BaseURL     string             `json:"base_url"`
	Model       string             `json:"model"`
	Temperature *float64           `json:"temperature"`
	MaxTokens   int                `json:"max_tokens"`
	Seed        *int               `json:"seed"`
	System      string             `json:"system"`
	Messages    []provider.Message `json:"messages"`
	Repeat      int                `json:"repeat"`
	// ReasoningEffort is left out when empty, so keys made before digest
	// sent it are the same.
	ReasoningEffort string `json:"reasoning_effort,omitempty"`
}

// Key hashes the request's canonical JSON (fixed field order, no map
// keys to reorder) under a version tag.
func (r Request) Key() string {
	b, _ := json.Marshal(r)
	return Of("digest/eval/v1", string(b))
}

// BaseURL is a server's address as it enters a key. Spellings of one
// server (scheme and host in any case, a trailing slash, the scheme's
// default port, localhost by name or by loopback address) give one key, so
// an answer is not paid for again for a slash; user info, which may hold a
// password, is left out. An address that is not a URL is kept as it is.
func BaseURL(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return raw
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.User = nil
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
		host = "localhost"
	}
	if port == "80" && u.Scheme == "http" || port == "443" && u.Scheme == "https" {
		port = ""
	}
	u.Host = host
	if strings.Contains(host, ":") {
		u.Host = "[" + host + "]"
	}
	if port != "" {
		u.Host += ":" + port
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}
