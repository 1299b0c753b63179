package tokens_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// sameRand is an Options.Rand that gives the same byte every time: every
// draw of an alias expression is the same alias, until the byte changes.
type sameRand struct{ b atomic.Int32 }

func (r *sameRand) Read(p []byte) (int, error) {
	b := byte(r.b.Load())
	for i := range p {
		p[i] = b
	}
	return len(p), nil
}

// TestRacingCreatesOfOneID: callers racing to create a token under one
// literal id, or under one alias id (every draw the same), in process
// (CreateToken, Tokenize) and over HTTP, on every store: exactly one
// succeeds and gets the whole token; every other gets a Conflict (409).
// A store that ran the write again after the optimistic run's fallback
// used to commit the first run's token and answer with the fallback's
// nil result: a 201 with a null body.
func TestRacingCreatesOfOneID(t *testing.T) {
	const racers, rounds = 12, 10
	for _, sk := range vaulttest.StoreKinds {
		t.Run("store="+sk.Name, func(t *testing.T) {
			t.Parallel()
			rnd := &sameRand{}
			e := vaulttest.NewEnvOn(t, sk.Open(t), func(o *tokenvault.Options) { o.Rand = rnd })
			app := e.Reader(t, "reveal", "token:create", "token:read")
			srv := httptest.NewServer(httpapi.New(e.V, httpapi.Options{}))
			defer srv.Close()

			ways := []struct {
				name   string
				alias  bool
				create func(id string) result
			}{
				{"CreateToken", false, func(id string) result {
					tok, err := e.V.CreateToken(ctx, app.Key, tokenvault.TokenRequest{ID: id, Type: "token", Data: "secret"})
					if tok == nil {
						return result{err: err}
					}
					return result{tok.ID, tok.Data, err}
				}},
				{"Tokenize", false, func(id string) result {
					out, err := e.V.Tokenize(ctx, app.Key, json.RawMessage(`{"id": "`+id+`", "type": "token", "data": "secret"}`))
					tok, _ := out.(*tokenvault.Token)
					if tok == nil {
						return result{err: err}
					}
					return result{tok.ID, tok.Data, err}
				}},
				{"CreateToken alias", true, func(id string) result {
					tok, err := e.V.CreateToken(ctx, app.Key, tokenvault.TokenRequest{ID: id, Type: "token", Data: "secret"})
					if tok == nil {
						return result{err: err}
					}
					return result{tok.ID, tok.Data, err}
				}},
				{"POST /tokens", false, func(id string) result { return postToken(t, srv.URL, string(app.Key), id) }},
				{"POST /tokens alias", true, func(id string) result { return postToken(t, srv.URL, string(app.Key), id) }},
			}
			for n, w := range ways {
				for round := range rounds {
					id := fmt.Sprintf("order-%d-%d", n, round)
					if w.alias {
						id = "{{ data | alias_preserve_length }}"
						rnd.b.Add(1) // a new alias, which every racer draws
					}
					results := make([]result, racers)
					var wg sync.WaitGroup
					start := make(chan struct{})
					for i := range racers {
						wg.Go(func() {
							<-start
							results[i] = w.create(id)
						})
					}
					close(start)
					wg.Wait()
					won, winner := 0, ""
					for _, r := range results {
						switch {
						case r.err == nil && r.id != "" && r.data == "secret":
							won++
							winner = r.id
						case r.err != nil && tokenvault.ErrorKind(r.err) == tokenvault.Conflict:
						default:
							t.Errorf("%s %q: a racer got %q %v, %v; want the whole token or a Conflict", w.name, id, r.id, r.data, r.err)
						}
					}
					if won != 1 {
						t.Errorf("%s %q: %d racers created the token, want 1", w.name, id, won)
						continue
					}
					if _, err := e.V.GetToken(ctx, app.Key, winner); err != nil {
						t.Errorf("%s: GetToken(%s) = %v", w.name, winner, err)
					}
				}
			}
		})
	}
}

// result is what one racer got: the created token's id and data ("" and
// nil for none), or the error.
type result struct {
	id   string
	data any
	err  error
}

// postToken creates a token over HTTP; a 201 must carry it, a 409 is a
// Conflict.
func postToken(t *testing.T, base, key, id string) (r result) {
	body, _ := json.Marshal(map[string]any{"id": id, "type": "token", "data": "secret"})
	req, _ := http.NewRequest("POST", base+"/tokens", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(httpapi.APIKeyHeader, key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		r.err = err
		return r
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	switch res.StatusCode {
	case http.StatusCreated:
		var tok tokenvault.Token
		if err := json.Unmarshal(b, &tok); err != nil {
			r.err = fmt.Errorf("201 with %q: %v", b, err)
		}
		r.id, r.data = tok.ID, tok.Data
	case http.StatusConflict:
		r.err = &tokenvault.Error{Kind: tokenvault.Conflict, Message: string(b)}
	default:
		r.err = fmt.Errorf("%d %s", res.StatusCode, b)
	}
	return r
}
