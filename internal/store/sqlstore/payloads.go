package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"

	"golang.org/x/sync/errgroup"

	objects "github.com/digest-cli/digest/internal/payloads"
	"github.com/digest-cli/digest/internal/store"
)

// UsePayloads sends the bodies of the payloads stored from now on to b
// (--payloads): each is written there, under its content's name, before
// the row naming it commits, and the row keeps the object's URI and only
// what reports show: an answer's text, a request's last user message.
// nil keeps them in the database, as without --payloads. Close closes b.
func (s *DB) UsePayloads(b *objects.Bucket) { s.bucket = b }

// putPuts is how many objects SaveEval writes at once.
const putPuts = 8

// putPayloads writes bodies (by hash) to the object store, if one is in
// use, and returns their URIs by hash; nil without one.
func (s *DB) putPayloads(ctx context.Context, bodies map[string][]byte) (map[string]any, error) {
	uris := make(map[string]any, len(bodies))
	if s.bucket == nil {
		return uris, nil // every uri NULL
	}
	got := make(map[string]string, len(bodies))
	type put struct{ hash, uri string }
	done := make(chan put, len(bodies))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(putPuts)
	for h, body := range bodies {
		g.Go(func() error {
			uri, err := s.bucket.Put(gctx, body)
			if err != nil {
				return err
			}
			done <- put{h, uri}
			return nil
		})
	}
	err := g.Wait()
	close(done)
	if err != nil {
		return nil, err
	}
	for p := range done {
		got[p.hash] = p.uri
	}
	for h, uri := range got {
		uris[h] = uri
	}
	return uris, nil
}

// kept is what the database keeps of a payload's body: all of it without
// an object store; with one, an answer's text (reports show it, and a
// rerun reads it back) and of a request only its last user message, the
// prompt reports show.
func (s *DB) kept(body []byte, request bool) []byte {
	if s.bucket == nil || !request {
		return body
	}
	return promptOnly(body)
}

// message is a provider-neutral request's message, as provider.Request
// marshals it.
type message struct {
	Role    string
	Content string
}

// promptOnly reduces a request (provider-neutral JSON) to its last user
// message, in the same shape; a body that is not such JSON to nothing.
func promptOnly(body []byte) []byte {
	var req struct{ Messages []message }
	if json.Unmarshal(body, &req) != nil {
		return []byte("{}")
	}
	var keep []message
	for _, m := range req.Messages {
		if m.Role == "user" {
			keep = []message{m}
		}
	}
	out, _ := json.Marshal(struct{ Messages []message }{keep})
	return out
}

// ResultPayloads returns the request and response payloads of the answer
// stored under key: each with its object's URI when it is in an object
// store, else its body from the database. ok is false when no answer is
// stored under key.
func (s *DB) ResultPayloads(ctx context.Context, key string) (request, response store.Payload, ok bool, err error) {
	var rq, rs store.Payload
	var rqURI, rsURI sql.NullString
	var rqGz, rsGz []byte
	err = s.db.QueryRowContext(ctx, `SELECT pq.hash, pq.uri, pq.gz, pa.hash, pa.uri, pa.gz
		FROM eval_results r JOIN payloads pq ON pq.hash = r.request JOIN payloads pa ON pa.hash = r.response
		WHERE r.key = ?`, key).Scan(&rq.Hash, &rqURI, &rqGz, &rs.Hash, &rsURI, &rsGz)
	if err == sql.ErrNoRows {
		return rq, rs, false, nil
	}
	if err != nil {
		return rq, rs, false, s.explain(err)
	}
	for _, p := range []struct {
		out *store.Payload
		uri sql.NullString
		gz  []byte
	}{{&rq, rqURI, rqGz}, {&rs, rsURI, rsGz}} {
		if p.uri.Valid {
			p.out.URI = p.uri.String
			continue
		}
		if p.out.Body, err = gunzip(p.gz); err != nil {
			return rq, rs, false, s.explain(err)
		}
	}
	return rq, rs, true, nil
}
