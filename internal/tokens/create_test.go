package tokens

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/unit"
	"github.com/tokenvault/tokenvault/internal/unit/worktest"
)

const createTenant = "tenant-1"

// noLists keeps no token lists: these tests are about the records, lines
// and counts of a create, patch or conversion.
type noLists struct{}

func (noLists) List(*unit.Tx, *Record) error          { return nil }
func (noLists) Move(*unit.Tx, *Record, *Record) error { return nil }
func (noLists) Unlist(*unit.Tx, *Record) error        { return nil }

// fakeIntents converts the one intent it holds, recording the token id
// the conversion made.
type fakeIntents struct {
	id, typ string
	data    []byte
	made    string
}

func (f *fakeIntents) Convert(_ *unit.Tx, _ *access.Principal, id string, makeToken func(typ string, data []byte) (string, error)) error {
	if id != f.id {
		return unit.NotFoundError("token intent")
	}
	made, err := makeToken(f.typ, f.data)
	f.made = made
	return err
}

func (f *fakeIntents) CheckExpressions(p *access.Principal, containers []string) error { return nil }

// keyWith is a private application's key with perms in every container,
// shaped by transform.
func keyWith(transform string, perms ...string) *access.Principal {
	return &access.Principal{TenantID: createTenant, ActorID: "0190f5a2-9000-7000-8000-0000000000a1",
		ActorType: unit.ActorApplication, AppType: access.Private, Permissions: perms,
		Rules: []access.Rule{{Permissions: perms, Container: "/", Transform: transform}}}
}

// newCreateService is a Service on a new Work with one tenant, counting
// what it does in counts.
func newCreateService(t *testing.T, in Intents) (*Service, *worktest.Work, map[string]int) {
	t.Helper()
	w := worktest.New(t)
	w.Tenant(t, createTenant)
	counts := map[string]int{}
	s := &Service{IDs: &unit.IDSource{}, Aliases: AliasRules, Intents: in, Lists: noLists{}, CVCRetention: 1 << 40,
		Count: func(_ *unit.Tx, op string) { counts[op]++ }}
	return s, w, counts
}

// create prepares req and creates it as p in one unit of work.
func create(t *testing.T, s *Service, w *worktest.Work, p *access.Principal, req Request) *Token {
	t.Helper()
	fe := unit.FieldErrors{}
	pt := s.Prepare(req, w.Now(), w.Now(), "", true, fe)
	if err := fe.Err(); err != nil {
		t.Fatalf("Prepare(%+v) = %v", req, err)
	}
	var tok *Token
	err := w.Update(context.Background(), func(tx *unit.Tx) error {
		var err error
		tok, err = s.Create(tx, p, pt)
		return err
	})
	if err != nil {
		t.Fatalf("Create(%+v) = %v", req, err)
	}
	return tok
}

// TestCreateDeduplicatesForClearReadersOnly: a deduplicating create finds
// the token only for a key that reads it in clear, answering it as a
// create, with a read line on the create channel; a masking reader gets
// a new token.
func TestCreateDeduplicatesForClearReadersOnly(t *testing.T) {
	t.Parallel()
	s, w, counts := newCreateService(t, nil)
	revealer := keyWith(access.TransformReveal, access.PermTokenCreate, access.PermTokenRead)
	req := Request{Type: unit.TypeToken, Data: "alice@example.com", DeduplicateToken: true}
	first := create(t, s, w, revealer, req)
	w.Lines()
	again := create(t, s, w, revealer, req)
	if again.ID != first.ID {
		t.Errorf("a repeated deduplicating create = %s, want %s", again.ID, first.ID)
	}
	lines := w.Lines()
	if len(lines) != 1 || lines[0].Message != msgDeduplicated || lines[0].Channel != unit.ChannelCreate {
		t.Errorf("lines of a deduplicated create = %+v, want one %q line on channel %s", lines, msgDeduplicated, unit.ChannelCreate)
	}
	if counts[CountCreated] != 1 || counts[CountRead] != 1 {
		t.Errorf("counts = %v, want created 1, read 1", counts)
	}
	masker := keyWith(access.TransformMask, access.PermTokenCreate, access.PermTokenRead)
	if other := create(t, s, w, masker, req); other.ID == first.ID {
		t.Errorf("a masking reader's deduplicating create = the existing token %s, want a new one", first.ID)
	}
}

// TestCreateLiteralIDTaken: a literal id of a live token is a Conflict.
func TestCreateLiteralIDTaken(t *testing.T) {
	t.Parallel()
	s, w, _ := newCreateService(t, nil)
	p := keyWith(access.TransformReveal, access.PermTokenCreate)
	req := Request{ID: "customer-42", Type: unit.TypeToken, Data: "x"}
	create(t, s, w, p, req)
	fe := unit.FieldErrors{}
	pt := s.Prepare(req, w.Now(), w.Now(), "", true, fe)
	err := w.Update(context.Background(), func(tx *unit.Tx) error { _, err := s.Create(tx, p, pt); return err })
	if unit.ErrorKind(err) != unit.Conflict {
		t.Errorf("Create of a taken id = %v, want Conflict", err)
	}
}

// TestPatchKeepsIdentity: a patch rewrites the data and keeps the
// token's id, type and creation, marking who modified it.
func TestPatchKeepsIdentity(t *testing.T) {
	t.Parallel()
	s, w, counts := newCreateService(t, nil)
	p := keyWith(access.TransformReveal, access.PermTokenCreate, access.PermTokenRead, access.PermTokenUpdate)
	tok := create(t, s, w, p, Request{Type: unit.TypeToken, Data: map[string]any{"a": "1"}})
	if err := CheckPatchFields(map[string]any{"id": "x"}); unit.ErrorKind(err) != unit.Invalid {
		t.Errorf("CheckPatchFields(id) = %v, want Invalid", err)
	}
	var got *Token
	err := w.Update(context.Background(), func(tx *unit.Tx) error {
		var err error
		got, err = s.Patch(tx, p, tok.ID, map[string]any{"data": map[string]any{"b": "2"}})
		return err
	})
	if err != nil {
		t.Fatalf("Patch = %v", err)
	}
	data, _ := json.Marshal(got.Data)
	if got.ID != tok.ID || !got.CreatedAt.Equal(tok.CreatedAt) || string(data) != `{"a":"1","b":"2"}` {
		t.Errorf("Patch = %s %v %s, want %s %v {\"a\":\"1\",\"b\":\"2\"}", got.ID, got.CreatedAt, data, tok.ID, tok.CreatedAt)
	}
	if counts[CountUpdated] != 1 {
		t.Errorf("counts = %v, want updated 1", counts)
	}
}

// TestConvertMakesTheIntentsToken: a request with token_intent_id makes
// the token of the intent's type and data, and tells the intents feature
// its id.
func TestConvertMakesTheIntentsToken(t *testing.T) {
	t.Parallel()
	in := &fakeIntents{id: "0190f5a2-9000-7000-8000-0000000000b1", typ: unit.TypeToken, data: []byte(`"from the intent"`)}
	s, w, _ := newCreateService(t, in)
	p := keyWith(access.TransformReveal, access.PermTokenCreate, access.PermTokenRead)
	tok := create(t, s, w, p, Request{TokenIntentID: in.id})
	if tok.ID != in.made || tok.Type != unit.TypeToken || tok.Data != "from the intent" {
		t.Errorf("conversion = %s %s %v (intent told %s), want a token of %q", tok.ID, tok.Type, tok.Data, in.made, "from the intent")
	}
	fe := unit.FieldErrors{}
	s.Prepare(Request{TokenIntentID: in.id, Type: unit.TypeToken}, w.Now(), w.Now(), "", true, fe)
	if len(fe["type"]) == 0 {
		t.Errorf("a conversion with a type: %v, want a problem at type", fe)
	}
}
