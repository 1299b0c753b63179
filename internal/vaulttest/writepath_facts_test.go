package vaulttest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// writePathLoad is what the concurrent writers did: every token created,
// and those then updated and deleted.
type writePathLoad struct {
	mu                        sync.Mutex
	created, updated, deleted map[string]bool
}

func (l *writePathLoad) note(set map[string]bool, id string) {
	l.mu.Lock()
	set[id] = true
	l.mu.Unlock()
}

// live is the tokens created and not deleted.
func (l *writePathLoad) live() map[string]bool {
	out := map[string]bool{}
	for id := range l.created {
		if !l.deleted[id] {
			out[id] = true
		}
	}
	return out
}

// runWritePathLoad has goroutines goroutines on each of the vaults
// tokenize perG values each, updating every third and deleting every fifth
// right after creating it.
func runWritePathLoad(t *testing.T, vaults []*tokenvault.Vault, key tokenvault.Credential, goroutines, perG int) *writePathLoad {
	t.Helper()
	l := &writePathLoad{created: map[string]bool{}, updated: map[string]bool{}, deleted: map[string]bool{}}
	ctx := context.Background()
	var wg sync.WaitGroup
	for vi, v := range vaults {
		for range goroutines {
			wg.Go(func() {
				for i := range perG {
					out, err := v.Tokenize(ctx, key, tokenvault.TokenRequest{
						Type: "token", Data: randomValue(), Containers: []string{writePathContainer},
					})
					if err != nil {
						t.Errorf("Tokenize on vault %d: %v", vi, err)
						return
					}
					tok, ok := out.(*tokenvault.Token)
					if !ok {
						t.Errorf("Tokenize(TokenRequest) = %T, want *tokenvault.Token", out)
						return
					}
					l.note(l.created, tok.ID)
					if i%3 == 0 {
						patch := json.RawMessage(fmt.Sprintf(`{"metadata":{"round":"%d"}}`, i))
						if _, err := v.UpdateToken(ctx, key, tok.ID, patch); err != nil {
							t.Errorf("UpdateToken on vault %d: %v", vi, err)
							return
						}
						l.note(l.updated, tok.ID)
					}
					if i%5 == 0 {
						if err := v.DeleteToken(ctx, key, tok.ID); err != nil {
							t.Errorf("DeleteToken on vault %d: %v", vi, err)
							return
						}
						l.note(l.deleted, tok.ID)
					}
				}
			})
		}
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return l
}

// TestWritePathTwoVaultsKeepEveryFact: two Vaults on one store (on
// PostgreSQL, two processes' stores on one database) write one tenant at
// once (tokenize, update, delete, with a webhook subscribed); then,
// through each Vault, the counts equal a full walk, every list page walked
// by cursor holds every live token once, every event reached the
// receiver, and the audit chain verifies with every operation's line on it
// (the chain may be linked beside the commit: it is polled for up to
// 30 s). Whatever moves out of the commit must still lose no committed
// fact.
func TestWritePathTwoVaultsKeepEveryFact(t *testing.T) {
	for _, kind := range writePathStores {
		t.Run("store="+kind, func(t *testing.T) { testTwoVaultsKeepEveryFact(t, kind) })
	}
}

func testTwoVaultsKeepEveryFact(t *testing.T, kind string) {
	p := openWritePathPair(t, kind)
	ctx := context.Background()
	tid := p.boot.Tenant.ID
	rcv := vaulttest.NewHookReceiver(t, func(_ int, w http.ResponseWriter) { w.WriteHeader(http.StatusNoContent) })
	if _, err := p.a.CreateWebhook(ctx, p.boot.Application.Key, tokenvault.WebhookRequest{
		Name: "writes", URL: rcv.URL + "/hook",
		Events: []string{tokenvault.EventTokenCreated, tokenvault.EventTokenUpdated, tokenvault.EventTokenDeleted},
	}); err != nil {
		t.Fatalf("CreateWebhook on A: %v", err)
	}

	l := runWritePathLoad(t, []*tokenvault.Vault{p.a, p.b}, p.app.Key, 4, 15)
	live := l.live()
	t.Logf("%d tokens created, %d updated, %d deleted, %d live", len(l.created), len(l.updated), len(l.deleted), len(live))

	for _, v := range []struct {
		name string
		v    *tokenvault.Vault
	}{{"A", p.a}, {"B", p.b}} {
		for _, req := range []tokenvault.ListTokensRequest{
			{},
			{Type: "token"},
			{Container: writePathContainer},
			{Container: "/acme/"},
			{Container: "/"},
		} {
			checkListWalk(t, v.name, v.v, p.app.Key, req, live)
		}
	}

	checkWritePathEvents(t, rcv, l)
	checkWritePathChain(t, p, tid, len(l.created)+len(l.updated)+len(l.deleted))
}

// checkListWalk walks every page of req by cursor through v (name) and
// fails unless the walk holds each token of want once and nothing else,
// and every page's TotalItems (a kept count: the key's access has no
// rules) equals the walk.
func checkListWalk(t *testing.T, name string, v *tokenvault.Vault, key tokenvault.Credential, req tokenvault.ListTokensRequest, want map[string]bool) {
	t.Helper()
	what := fmt.Sprintf("ListTokens(type %q, container %q) on %s", req.Type, req.Container, name)
	seen := map[string]int{}
	var totals []int
	req.Size = 7 // many pages
	for pages := 0; ; pages++ {
		if pages > len(want) {
			t.Fatalf("%s: more pages than tokens; the cursor does not advance", what)
		}
		page, err := v.ListTokens(context.Background(), key, req)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		totals = append(totals, page.Pagination.TotalItems)
		for _, tok := range page.Data {
			seen[tok.ID]++
		}
		if page.Pagination.After == "" {
			break
		}
		req.Start = page.Pagination.After
	}
	var missing, twice, extra int
	for id := range want {
		switch seen[id] {
		case 0:
			missing++
		case 1:
		default:
			twice++
		}
	}
	for id := range seen {
		if !want[id] {
			extra++
		}
	}
	if missing+twice+extra > 0 {
		t.Errorf("%s: the walk misses %d live tokens, holds %d twice or more and %d not live (of %d live)", what, missing, twice, extra, len(want))
	}
	for i, n := range totals {
		if n != len(want) {
			t.Errorf("%s: page %d counts total_items %d, the walk found %d (want %d)", what, i+1, n, len(seen), len(want))
			break
		}
	}
}

// checkWritePathEvents polls rcv, for up to a minute, until it has
// received token.created for every token created, token.updated for every
// one updated and token.deleted for every one deleted (at least once).
func checkWritePathEvents(t *testing.T, rcv *vaulttest.HookReceiver, l *writePathLoad) {
	t.Helper()
	want := map[string]map[string]bool{
		tokenvault.EventTokenCreated: l.created,
		tokenvault.EventTokenUpdated: l.updated,
		tokenvault.EventTokenDeleted: l.deleted,
	}
	deadline := time.Now().Add(time.Minute)
	for {
		got := map[string]map[string]bool{}
		for _, req := range rcv.Got() {
			var body struct {
				Event struct {
					Type string `json:"type"`
					Data struct {
						Token struct {
							ID string `json:"id"`
						} `json:"token"`
					} `json:"data"`
				} `json:"event"`
			}
			if err := json.Unmarshal(req.Body, &body); err != nil {
				t.Fatalf("a delivery's body is not JSON: %v", err)
			}
			if got[body.Event.Type] == nil {
				got[body.Event.Type] = map[string]bool{}
			}
			got[body.Event.Type][body.Event.Data.Token.ID] = true
		}
		var missing []string
		for _, typ := range slices.Sorted(maps.Keys(want)) {
			n := 0
			for id := range want[typ] {
				if !got[typ][id] {
					n++
				}
			}
			if n > 0 {
				missing = append(missing, fmt.Sprintf("%s: %d of %d", typ, n, len(want[typ])))
			}
		}
		if len(missing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("after a minute the receiver misses events: %v", missing)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkWritePathChain signs the tenant's chain through both Vaults and
// verifies it through B until the report is clean and holds at least ops lines (every
// operation's line linked), for up to 30 s.
func checkWritePathChain(t *testing.T, p *writePathPair, tid string, ops int) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	for {
		// Through both: an instance signs what is linked, and links
		// first when it holds (or can take) the linker's lease.
		for _, v := range []*tokenvault.Vault{p.a, p.b} {
			if _, err := v.SignAuditChain(ctx, tid); err != nil {
				t.Fatalf("SignAuditChain: %v", err)
			}
		}
		rep, err := p.b.VerifyAuditChain(ctx, tid)
		if err != nil {
			t.Fatalf("VerifyAuditChain on B: %v", err)
		}
		if rep.OK && rep.Lines >= ops {
			t.Logf("the chain verifies: %d lines, seq %d..%d, %d checkpoints", rep.Lines, rep.FirstSeq, rep.LastSeq, rep.Checkpoints)
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("after 30 s the chain does not verify with every line: ok %v, %d lines for %d operations, %d problems",
				rep.OK, rep.Lines, ops, len(rep.Problems))
			for i, pr := range rep.Problems {
				if i == 10 {
					t.Errorf("... and %d more", len(rep.Problems)-10)
					break
				}
				t.Errorf("problem: %+v", pr)
			}
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}
