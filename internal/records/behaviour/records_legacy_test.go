package records_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/auditlog"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/testseam"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"

	"github.com/tokenvault/tokenvault/internal/seal"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/memory"
)

// legacyVault is a Vault on a memory store with a clock that moves when
// told, and an application that may do what these tests do.
type legacyVault struct {
	v     *tokenvault.Vault
	s     *memory.Store
	key   tokenvault.Credential // a private application's: tokens
	mgmt  tokenvault.Credential // the management application's: logs, rotation
	tid   string
	mu    sync.Mutex
	clock time.Time
}

func newLegacyVault(t *testing.T) *legacyVault {
	t.Helper()
	ctx := context.Background()
	mk := make([]byte, 32)
	rand.Read(mk)
	lv := &legacyVault{s: memory.New(), clock: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
	v, err := tokenvault.Open(ctx, tokenvault.Options{
		Store:     lv.s,
		Now:       lv.now,
		Logger:    slog.New(slog.NewTextHandler(t.Output(), nil)),
		Keys:      tokenvault.KeyOptions{MasterKey: mk},
		Retention: tokenvault.RetentionOptions{SweepInterval: -1},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	lv.v = v
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Old", Owner: tokenvault.User{Email: "o@example.com", FirstName: "O"}})
	if err != nil {
		t.Fatal(err)
	}
	lv.tid = boot.Tenant.ID
	app, err := v.CreateApplication(ctx, boot.Application.Key, tokenvault.CreateApplicationRequest{
		Name: "old", Type: tokenvault.Private, Permissions: []string{tokenvault.PermTokenCreate, tokenvault.PermTokenRead, tokenvault.PermTokenUpdate},
	})
	if err != nil {
		t.Fatal(err)
	}
	lv.key, lv.mgmt = app.Key, boot.Application.Key
	return lv
}

func (lv *legacyVault) now() time.Time {
	lv.mu.Lock()
	defer lv.mu.Unlock()
	return lv.clock
}

func (lv *legacyVault) advance(d time.Duration) {
	lv.mu.Lock()
	defer lv.mu.Unlock()
	lv.clock = lv.clock.Add(d)
}

// plaintexts opens every value under prefix.
func (lv *legacyVault) plaintexts(t *testing.T, prefix barrier.Prefix) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := testseam.Of(lv.v).Work.View(context.Background(), func(tx *unit.Tx) error {
		kvs, err := tx.ScanValues(prefix)
		if err != nil {
			return err
		}
		for _, kv := range kvs {
			if len(kv.Raw) == 0 || kv.Key.String() == barrier.Tenant(lv.tid).Keyring().String() {
				continue // index entries; the wrapped keyring
			}
			b, err := tx.Open(kv.Key, kv.Raw)
			if err != nil {
				return err
			}
			out[kv.Key.String()] = b
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// downgrade writes every token and log line of the tenant again the way
// the Vault wrote them before format version 1 (sealed JSON, the token
// record's and the API Log's JSON tags as they were), and indexes every
// line as it did (log-entity and log-type entries instead of the packed
// one): the store as that code left it.
func (lv *legacyVault) downgrade(t *testing.T) {
	t.Helper()
	err := testseam.Of(lv.v).Work.Update(context.Background(), func(tx *unit.Tx) error {
		_, err := tx.TenantKeys(lv.tid, false)
		if err != nil {
			return err
		}
		kvs, err := tx.ScanValues(barrier.Tenant(lv.tid).Records(tokens.Kind))
		if err != nil {
			return err
		}
		for _, kv := range kvs {
			var r tokens.Record
			if err := tx.OpenRecord(kv.Key, kv.Raw, &r); err != nil {
				return err
			}
			b, _ := json.Marshal(r.V0())
			if err := tx.Reseal(kv.Key, b); err != nil {
				return err
			}
		}
		kvs, err = tx.ScanValues(barrier.Tenant(lv.tid).Logs())
		if err != nil {
			return err
		}
		for _, kv := range kvs {
			var l auditlog.LineRecord
			if err := tx.OpenRecord(kv.Key, kv.Raw, &l); err != nil {
				return err
			}
			b, _ := json.Marshal(auditlog.LogOf(kv.Key, &l)) // Log's JSON was the stored form
			if err := tx.Reseal(kv.Key, b); err != nil {
				return err
			}
			suffix := kv.Rest
			if err := tx.Delete(auditlog.IndexKey(lv.tid, l.EntityType, l.EntityID, suffix)); err != nil {
				return err
			}
			if err := tx.PutIndex(barrier.Tenant(lv.tid).LogEntityIndex(l.EntityType, l.EntityID).Key(suffix)); err != nil {
				return err
			}
			if err := tx.PutIndex(barrier.Tenant(lv.tid).LogTypeIndex(l.EntityType).Key(suffix)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// format counts the plaintexts under prefix by their first byte: JSON
// ('{') or format version 1.
func (lv *legacyVault) format(t *testing.T, prefix barrier.Prefix) (json, v1 int) {
	t.Helper()
	for k, b := range lv.plaintexts(t, prefix) {
		switch {
		case len(b) > 0 && b[0] == '{':
			json++
		case len(b) > 0 && b[0] == 1:
			v1++
		default:
			t.Errorf("%s holds %q", k, b)
		}
	}
	return json, v1
}

func (lv *legacyVault) countKeys(t *testing.T, prefix barrier.Prefix) int {
	t.Helper()
	n := 0
	lv.s.View(context.Background(), func(tx store.Tx) error {
		return tx.Scan([]byte(prefix.String()), nil, 0, func(_, _ []byte) error { n++; return nil })
	})
	return n
}

// TestLegacyRecordsRead: a store written before format version 1 (tokens
// and log lines as sealed JSON, log lines with a log-type index entry)
// answers every read exactly as it did; a write rewrites the record it
// touches in the new format, the re-seal pass rewrites the rest, and the
// sweeper removes the old index entries.
func TestLegacyRecordsRead(t *testing.T) {
	ctx := context.Background()
	lv := newLegacyVault(t)
	var ids []string
	for i := range 5 {
		tok, err := lv.v.CreateToken(ctx, lv.key, tokenvault.TokenRequest{Type: tokenvault.TypeToken, Data: map[string]any{"n": i, "s": "secret"},
			Metadata: map[string]string{"k": "v"}, SearchIndexes: []string{"{{ data.s }}"}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tok.ID)
		lv.advance(time.Second)
	}
	card, err := lv.v.CreateToken(ctx, lv.key, cardRequestForTest())
	if err != nil {
		t.Fatal(err)
	}
	ids = append(ids, card.ID)
	lv.advance(time.Second)
	if _, err := lv.v.GetToken(ctx, lv.key, ids[0]); err != nil {
		t.Fatal(err)
	}
	lv.advance(time.Second)

	from := time.Date(2030, 1, 2, 3, 4, 7, 0, time.UTC)
	queries := []tokenvault.ListLogsRequest{
		{},
		{PageRequest: tokenvault.PageRequest{Size: 3}},
		{PageRequest: tokenvault.PageRequest{Size: 2, Page: 2}},
		{EntityType: tokenvault.TypeToken},
		{EntityType: tokenvault.TypeCard},
		{EntityType: tokenvault.TypeToken, EntityID: ids[0]},
		{StartDate: &from},
		{EntityType: tokenvault.TypeToken, StartDate: &from, PageRequest: tokenvault.PageRequest{Size: 2}},
	}
	answer := func() (out []any) {
		for _, q := range queries {
			p, err := lv.v.ListLogs(ctx, lv.mgmt, q)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, p)
			if p.Pagination.After != "" {
				q.Start, q.Page = p.Pagination.After, 0
				next, err := lv.v.ListLogs(ctx, lv.mgmt, q)
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, next)
			}
		}
		for _, id := range ids {
			// Reads are logged: read in a view to compare the record only.
			err := testseam.Of(lv.v).Work.View(ctx, func(tx *unit.Tx) error {
				rec, err := testseam.Of(lv.v).Tokens.Load(tx, lv.tid, id, false)
				out = append(out, rec)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		return out
	}
	want := answer()
	if j, v1 := lv.format(t, barrier.Tenant(lv.tid).Records(tokens.Kind)); j != 0 || v1 != len(ids) {
		t.Fatalf("new tokens: %d JSON, %d in format 1", j, v1)
	}
	if n := lv.countKeys(t, barrier.Tenant(lv.tid).Index("log-type")); n != 0 {
		t.Fatalf("new lines wrote %d log-type entries", n)
	}

	lv.downgrade(t)
	lines := lv.countKeys(t, barrier.Tenant(lv.tid).Logs())
	if j, _ := lv.format(t, barrier.Tenant(lv.tid).Records(tokens.Kind)); j != len(ids) {
		t.Fatalf("downgraded: %d tokens in JSON, want %d", j, len(ids))
	}
	if n := lv.countKeys(t, barrier.Tenant(lv.tid).Index("log-type")); n != lines {
		t.Fatalf("downgraded: %d log-type entries, want %d", n, lines)
	}
	if diff := cmp.Diff(want, answer(), recordCmp...); diff != "" {
		t.Fatalf("the old layout answers differently (-new +old):\n%s", diff)
	}
	if _, err := lv.v.GetToken(ctx, lv.key, ids[1]); err != nil {
		t.Fatalf("GetToken of a JSON record: %v", err)
	}

	// The next write rewrites the record it touches, and logs a line in
	// the new layout, found beside the old ones.
	count := func(q tokenvault.ListLogsRequest) (int, string) {
		p, err := lv.v.ListLogs(ctx, lv.mgmt, q)
		if err != nil || len(p.Data) == 0 {
			t.Fatalf("ListLogs(%+v) = %+v, %v", q, p, err)
		}
		return p.Pagination.TotalItems, p.Data[0].Message
	}
	byEntity, _ := count(tokenvault.ListLogsRequest{EntityType: tokenvault.TypeToken, EntityID: ids[2]})
	byType, _ := count(tokenvault.ListLogsRequest{EntityType: tokenvault.TypeToken})
	lv.advance(time.Second)
	if _, err := lv.v.UpdateToken(ctx, lv.key, ids[2], json.RawMessage(`{"metadata":{"k":"w"}}`)); err != nil {
		t.Fatal(err)
	}
	for _, q := range []tokenvault.ListLogsRequest{{EntityType: tokenvault.TypeToken, EntityID: ids[2]}, {EntityType: tokenvault.TypeToken}} {
		n, newest := count(q)
		want := byType + 1
		if q.EntityID != "" {
			want = byEntity + 1
		}
		if n != want || newest != "Token updated" {
			t.Errorf("ListLogs(%+v) with both layouts: %d lines, newest %q; want %d, %q", q, n, newest, want, "Token updated")
		}
	}
	if j, v1 := lv.format(t, barrier.Tenant(lv.tid).Records(tokens.Kind)); j != len(ids)-1 || v1 != 1 {
		t.Fatalf("after one update: %d JSON, %d in format 1; want %d and 1", j, v1, len(ids)-1)
	}

	// The re-seal pass rewrites the others, and the sweeper drops the
	// log-type entries.
	if err := lv.v.RotateDataKey(ctx, lv.mgmt); err != nil {
		t.Fatal(err)
	}
	lv.advance(time.Minute)
	if _, err := lv.v.Reseal(ctx); err != nil {
		t.Fatal(err)
	}
	if j, _ := lv.format(t, barrier.Tenant(lv.tid).Records(tokens.Kind)); j != 0 {
		t.Errorf("after the re-seal pass: %d tokens still JSON", j)
	}
	if j, _ := lv.format(t, barrier.Tenant(lv.tid).Logs()); j != 0 {
		t.Errorf("after the re-seal pass: %d log lines still JSON", j)
	}
	if _, err := lv.v.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if n := lv.countKeys(t, barrier.Tenant(lv.tid).Index("log-type")); n != 0 {
		t.Errorf("after a sweep: %d log-type entries left", n)
	}
	for _, id := range ids {
		if _, err := lv.v.GetToken(ctx, lv.key, id); err != nil {
			t.Errorf("GetToken(%s) after the migration: %v", id, err)
		}
	}
}

// TestCorruptRecord: a token or log line whose plaintext does not decode
// is an internal error, never a panic.
func TestCorruptRecord(t *testing.T) {
	ctx := context.Background()
	lv := newLegacyVault(t)
	tok, err := lv.v.CreateToken(ctx, lv.key, tokenvault.TokenRequest{Type: tokenvault.TypeToken, Data: "x"})
	if err != nil {
		t.Fatal(err)
	}
	stored := lv.plaintexts(t, barrier.Tenant(lv.tid).All())
	for _, bad := range [][]byte{{}, {1}, {2, 0}, {'{'}, {1, 0xff, 0xff, 0xff}} {
		err := testseam.Of(lv.v).Work.Update(ctx, func(tx *unit.Tx) error {
			_, err := tx.TenantKeys(lv.tid, false)
			if err != nil {
				return err
			}
			for k := range stored {
				if strings.HasPrefix(k, barrier.Tenant(lv.tid).Records(tokens.Kind).String()) || strings.HasPrefix(k, barrier.Tenant(lv.tid).Logs().String()) {
					all := barrier.Tenant(lv.tid).All()
					if err := tx.Reseal(all.Key(strings.TrimPrefix(k, all.String())), bad); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		_, err = lv.v.GetToken(ctx, lv.key, tok.ID)
		var e *tokenvault.Error
		if !errors.As(err, &e) || e.Kind != tokenvault.Internal {
			t.Errorf("GetToken of a token stored as %x = %v, want an internal error", bad, err)
		}
		_, err = lv.v.ListLogs(ctx, lv.mgmt, tokenvault.ListLogsRequest{})
		if !errors.As(err, &e) || e.Kind != tokenvault.Internal {
			t.Errorf("ListLogs with lines stored as %x = %v, want an internal error", bad, err)
		}
	}
}

func cardRequestForTest() tokenvault.TokenRequest {
	return tokenvault.TokenRequest{Type: tokenvault.TypeCard, Data: map[string]any{
		"number": "4242424242424242", "expiration_month": 12, "expiration_year": 2099, "cvc": "123"}}
}

// TestLegacyTokenOutsideTheCurrentFormat: a token in the JSON of format
// version 0 may hold a time the current format cannot (here before year 0
// in UTC). It still reads; a write to it (an update, the sweeper's removal
// of a card's cvc) writes it back in version 0 rather than in a record
// that would not decode; and the re-seal pass seals it again with the
// active term, still in version 0, rather than leave it under the
// rotated-out key.
func TestLegacyTokenOutsideTheCurrentFormat(t *testing.T) {
	ctx := context.Background()
	lv := newLegacyVault(t)
	var ids []string
	for _, req := range []tokenvault.TokenRequest{{Type: tokenvault.TypeToken, Data: 0}, {Type: tokenvault.TypeToken, Data: 1}, cardRequestForTest()} {
		tok, err := lv.v.CreateToken(ctx, lv.key, req)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, tok.ID)
	}
	lv.downgrade(t)
	early := time.Date(0, 1, 1, 0, 0, 0, 0, time.FixedZone("", 3600)) // year -1 in UTC
	err := testseam.Of(lv.v).Work.Update(ctx, func(tx *unit.Tx) error {
		_, err := tx.TenantKeys(lv.tid, false)
		if err != nil {
			return err
		}
		for _, id := range []string{ids[0], ids[2]} {
			key := barrier.Tenant(lv.tid).Record(tokens.Kind, id)
			var r tokens.Record
			if ok, err := tx.GetRecord(key, &r); err != nil || !ok {
				return fmt.Errorf("token %s: %v, %v", id, ok, err)
			}
			r.CreatedAt = early
			b, _ := json.Marshal(r.V0())
			if err := tx.Reseal(key, b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		for _, id := range []string{ids[0], ids[2]} {
			tok, err := lv.v.GetToken(ctx, lv.key, id)
			if err != nil {
				t.Fatalf("%s: GetToken(%s): %v", when, id, err)
			}
			if !tok.CreatedAt.Equal(early) {
				t.Errorf("%s: token %s created_at %v, want %v", when, id, tok.CreatedAt, early)
			}
		}
	}
	check("before any write")
	tok, err := lv.v.UpdateToken(ctx, lv.key, ids[0], json.RawMessage(`{"metadata": {"k": "v"}}`))
	if err != nil || tok.Metadata["k"] != "v" {
		t.Fatalf("UpdateToken: %v, %v", tok, err)
	}
	check("after an update")
	if j, v1 := lv.format(t, barrier.Tenant(lv.tid).Records(tokens.Kind)); j != 3 || v1 != 0 {
		t.Errorf("after an update: %d tokens JSON, %d in format 1; want 3 and 0", j, v1)
	}

	// Past the cvc's retention the sweeper removes it, and goes on.
	lv.advance(2 * tokenvault.DefaultCVCRetention)
	if _, err := lv.v.Sweep(ctx); err != nil {
		t.Fatalf("Sweep: %v", err)
	}
	check("after a sweep")
	if pt := lv.plaintexts(t, barrier.Tenant(lv.tid).Records(tokens.Kind))[barrier.Tenant(lv.tid).Record(tokens.Kind, ids[2]).String()]; bytes.Contains(pt, []byte(`"cvc"`)) || pt[0] != '{' {
		t.Errorf("the card after a sweep: %s, want version 0 JSON without its cvc", pt)
	}

	if err := lv.v.RotateDataKey(ctx, lv.mgmt); err != nil {
		t.Fatal(err)
	}
	lv.advance(time.Minute)
	if _, err := lv.v.Reseal(ctx); err != nil {
		t.Fatal(err)
	}
	check("after the re-seal pass")
	if j, v1 := lv.format(t, barrier.Tenant(lv.tid).Records(tokens.Kind)); j != 2 || v1 != 1 {
		t.Errorf("after the re-seal pass: %d tokens JSON, %d in format 1; want 2 and 1", j, v1)
	}
	err = testseam.Of(lv.v).Work.View(ctx, func(tx *unit.Tx) error {
		ks, err := tx.TenantKeys(lv.tid, false)
		if err != nil {
			return err
		}
		kvs, err := tx.ScanValues(barrier.Tenant(lv.tid).Records(tokens.Kind))
		for _, kv := range kvs {
			if term, ok := seal.Term(kv.Raw); !ok || term != ks.Ring().ActiveTerm() {
				t.Errorf("%s sealed with term %d after the re-seal pass, want the active %d", kv.Key.String(), term, ks.Ring().ActiveTerm())
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
