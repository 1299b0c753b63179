// Package transfer_test holds the behaviour tests of the export of a
// tenant's tokens, through a Vault's public methods (internal/vaulttest).
package export_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"filippo.io/age"
	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

var ctx = context.Background()

// exportEnv is a tenant with an exporter key (token:export), its
// recipient's identity and a few tokens.
type exportEnv struct {
	*vaulttest.Env
	exporter tokenvault.Credential
	id       *age.X25519Identity
	tokens   []*tokenvault.Token
}

func newExportEnv(t *testing.T, e *vaulttest.Env) *exportEnv {
	t.Helper()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	x := &exportEnv{Env: e, exporter: e.App(t, tokenvault.Management, tokenvault.PermTokenExport).Key, id: id}
	for i, req := range []tokenvault.TokenRequest{
		vaulttest.CardRequest("4242424242424242"),
		{Type: "token", Data: "alice@example.com", Containers: []string{"/people/eu/"}, Metadata: map[string]string{"customer": "c1"},
			SearchIndexes: []string{"{{ data }}"}},
		{Type: "token", Data: map[string]any{"name": "Bob", "age": 42}, Containers: []string{"/people/us/"}, Mask: "{{ data.name }}"},
		{ID: "custom-id-1", Type: "bank", Data: map[string]any{"account_number": "000123456789", "routing_number": "110000000"}},
	} {
		tok := e.Token(t, req)
		if tok == nil {
			t.Fatalf("token %d not created", i)
		}
		x.tokens = append(x.tokens, tok)
	}
	return x
}

// export runs ExportTokens and decrypts what it wrote.
func (x *exportEnv) export(t *testing.T, req tokenvault.ExportRequest) (*tokenvault.ExportManifest, []byte, []tokenvault.ExportLine) {
	t.Helper()
	if req.Recipient == "" {
		req.Recipient = x.id.Recipient().String()
	}
	var buf bytes.Buffer
	m, err := x.V.ExportTokens(ctx, x.exporter, req, &buf)
	if err != nil {
		t.Fatalf("ExportTokens(%+v) = %v", req, err)
	}
	return m, buf.Bytes(), decrypt(t, x.id, buf.Bytes())
}

func decrypt(t *testing.T, id age.Identity, file []byte) []tokenvault.ExportLine {
	t.Helper()
	r, err := age.Decrypt(bytes.NewReader(file), id)
	if err != nil {
		t.Fatalf("age.Decrypt: %v", err)
	}
	var out []tokenvault.ExportLine
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var l tokenvault.ExportLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func ids(lines []tokenvault.ExportLine) []string {
	var out []string
	for _, l := range lines {
		out = append(out, l.ID)
	}
	slices.Sort(out)
	return out
}

// TestExportTokens: every live token of the tenant, in the exchange
// format (data revealed, mask as given, no cvc, no fingerprint), with a
// manifest that verifies, is stored, and is named by an audit line that
// holds no data.
func TestExportTokens(t *testing.T) {
	vaulttest.ForEachStore(t, func(t *testing.T, e *vaulttest.Env) {
		x := newExportEnv(t, e)
		m, file, lines := x.export(t, tokenvault.ExportRequest{})
		if m.Count != 4 || len(lines) != 4 || m.TenantID != e.Boot.Tenant.ID || m.ID == "" {
			t.Fatalf("manifest %+v, %d lines; want 4 tokens of the tenant", m, len(lines))
		}
		byID := map[string]tokenvault.ExportLine{}
		for _, l := range lines {
			byID[l.ID] = l
		}
		card := byID[x.tokens[0].ID]
		if !strings.Contains(string(card.Data), "4242424242424242") || strings.Contains(string(card.Data), "cvc") {
			t.Errorf("card line data = %s, want the number and no cvc", card.Data)
		}
		email := byID[x.tokens[1].ID]
		if string(email.Data) != `"alice@example.com"` || email.Metadata["customer"] != "c1" || !slices.Equal(email.Containers, []string{"/people/eu/"}) ||
			!slices.Equal(email.SearchIndexes, []string{"{{ data }}"}) || !email.CreatedAt.Equal(x.tokens[1].CreatedAt) {
			t.Errorf("email line = %+v, want the token as created", email)
		}
		if bob := byID[x.tokens[2].ID]; string(bob.Mask) != `"{{ data.name }}"` {
			t.Errorf("mask = %s, want the mask expression", bob.Mask)
		}
		if _, ok := byID["custom-id-1"]; !ok {
			t.Errorf("the custom id is not kept: %v", ids(lines))
		}
		plain, _ := io.ReadAll(must(age.Decrypt(bytes.NewReader(file), x.id)))
		if bytes.Contains(plain, []byte(`"fingerprint"`)) || bytes.Contains(file, []byte("alice")) {
			t.Error("a fingerprint is exported, or data is in clear in the file")
		}
		keys, err := e.V.AuditKeys(ctx)
		if err != nil {
			t.Fatal(err)
		}
		v, err := tokenvault.VerifyExport(m, keys, bytes.NewReader(file), x.id)
		if err != nil || !v.Signature || !v.Ciphertext || !v.Plaintext || v.Count != 4 {
			t.Fatalf("VerifyExport = %+v, %v; want every check passed", v, err)
		}
		got, err := e.V.GetExport(ctx, x.exporter, m.ID)
		if err != nil || got.Digest() != m.Digest() || !bytes.Equal(got.Signature, m.Signature) {
			t.Fatalf("GetExport = %+v, %v; want the manifest", got, err)
		}
		e.SettleChain(t)
		logs, err := e.V.ListLogs(ctx, e.Mgmt, tokenvault.ListLogsRequest{EntityType: tokenvault.EntityExport, EntityID: m.ID})
		if err != nil {
			t.Fatal(err)
		}
		if len(logs.Data) != 1 || !strings.Contains(logs.Data[0].Message, m.Digest()) || !strings.Contains(logs.Data[0].Message, "4 ") ||
			strings.Contains(logs.Data[0].Message, "alice") {
			t.Fatalf("audit lines of the export = %+v, want one naming the manifest's digest and no data", logs.Data)
		}
	})
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestExportFilters: by container (and below it), type, search query;
// a filter given twice, a bad container or type, a bad query is Invalid.
func TestExportFilters(t *testing.T) {
	e := vaulttest.NewEnv(t)
	x := newExportEnv(t, e)
	for _, tc := range []struct {
		name string
		req  tokenvault.ExportRequest
		want []string
	}{
		{"container", tokenvault.ExportRequest{Container: "/people/"}, []string{x.tokens[1].ID, x.tokens[2].ID}},
		{"container leaf", tokenvault.ExportRequest{Container: "/people/eu/"}, []string{x.tokens[1].ID}},
		{"type", tokenvault.ExportRequest{Type: "card"}, []string{x.tokens[0].ID}},
		{"type and container", tokenvault.ExportRequest{Type: "card", Container: "/people/"}, nil},
		{"search index", tokenvault.ExportRequest{Query: "data:alice@example.com"}, []string{x.tokens[1].ID}},
		{"metadata", tokenvault.ExportRequest{Query: "metadata.customer:C1"}, []string{x.tokens[1].ID}},
		{"query type", tokenvault.ExportRequest{Query: "type:bank"}, []string{"custom-id-1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _, lines := x.export(t, tc.req)
			want := slices.Sorted(slices.Values(tc.want))
			if got := ids(lines); !slices.Equal(got, want) || m.Count != int64(len(want)) {
				t.Fatalf("exported %v (count %d), want %v", got, m.Count, want)
			}
			if m.Filter.Container != tc.req.Container || m.Filter.Type != tc.req.Type || m.Filter.Query != tc.req.Query {
				t.Errorf("manifest filter %+v, want the request's", m.Filter)
			}
		})
	}
	rcpt := x.id.Recipient().String()
	for _, tc := range []struct {
		name string
		req  tokenvault.ExportRequest
	}{
		{"no recipient", tokenvault.ExportRequest{}},
		{"private key as recipient", tokenvault.ExportRequest{Recipient: x.id.String()}},
		{"ssh key", tokenvault.ExportRequest{Recipient: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHsKLqeplhpW+uObz5dvMgjz1OxfM/XXUB+VHtZ6isGN"}},
		{"bad age key", tokenvault.ExportRequest{Recipient: "age1notakey"}},
		{"bad container", tokenvault.ExportRequest{Recipient: rcpt, Container: "people"}},
		{"bad type", tokenvault.ExportRequest{Recipient: rcpt, Type: "cheese"}},
		{"container twice", tokenvault.ExportRequest{Recipient: rcpt, Container: "/people/", Query: "container:/people/"}},
		{"bad query", tokenvault.ExportRequest{Recipient: rcpt, Query: "nonsense"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			_, err := e.V.ExportTokens(ctx, x.exporter, tc.req, &buf)
			vaulttest.WantKind(t, "ExportTokens", err, tokenvault.Invalid)
			if buf.Len() != 0 || strings.Contains(err.Error(), "AGE-SECRET-KEY") {
				t.Errorf("wrote %d bytes, error %q: want nothing written and no secret repeated", buf.Len(), err)
			}
		})
	}
}

// TestExportPermission: only a key holding token:export exports: not a
// management key without it, not a private key (which may not hold it),
// and neither reads a manifest.
func TestExportPermission(t *testing.T) {
	e := vaulttest.NewEnv(t)
	x := newExportEnv(t, e)
	rcpt := x.id.Recipient().String()
	private := e.App(t, tokenvault.Private, tokenvault.PermTokenRead, tokenvault.PermTokenSearch).Key
	manager := e.App(t, tokenvault.Management, tokenvault.PermLogRead, tokenvault.PermTokenAccessRead).Key
	for name, key := range map[string]tokenvault.Credential{"manager without token:export": manager, "private": private} {
		var buf bytes.Buffer
		_, err := e.V.ExportTokens(ctx, key, tokenvault.ExportRequest{Recipient: rcpt}, &buf)
		vaulttest.WantKind(t, "ExportTokens by "+name, err, tokenvault.PermissionDenied)
		if buf.Len() != 0 {
			t.Errorf("%s: %d bytes written", name, buf.Len())
		}
	}
	if _, err := e.V.CreateApplication(ctx, e.Mgmt, tokenvault.CreateApplicationRequest{Name: "p", Type: tokenvault.Private,
		Permissions: []string{tokenvault.PermTokenExport}}); !errors.Is(err, tokenvault.ErrInvalid) {
		t.Errorf("a private application holding token:export = %v, want Invalid", err)
	}
	var buf bytes.Buffer
	_, err := e.V.ExportTokens(ctx, "key_not_a_key", tokenvault.ExportRequest{Recipient: rcpt}, &buf)
	vaulttest.WantKind(t, "ExportTokens with an unknown key", err, tokenvault.Unauthenticated)
	m, _, _ := x.export(t, tokenvault.ExportRequest{})
	_, err = e.V.GetExport(ctx, private, m.ID)
	vaulttest.WantKind(t, "GetExport by a private key", err, tokenvault.PermissionDenied)
}

// TestExportTenantIsolation: a tenant's export holds its tokens only, and
// its manifests are another tenant's NotFound.
func TestExportTenantIsolation(t *testing.T) {
	e := vaulttest.NewEnv(t)
	x := newExportEnv(t, e)
	other := e.Tenant(t, "Other")
	exp2, err := e.V.CreateApplication(ctx, other.Application.Key, tokenvault.CreateApplicationRequest{Name: "exp", Type: tokenvault.Management,
		Permissions: []string{tokenvault.PermTokenExport}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	m2, err := e.V.ExportTokens(ctx, exp2.Key, tokenvault.ExportRequest{Recipient: x.id.Recipient().String()}, &buf)
	if err != nil {
		t.Fatal(err)
	}
	if lines := decrypt(t, x.id, buf.Bytes()); len(lines) != 0 || m2.Count != 0 || m2.TenantID != other.Tenant.ID {
		t.Fatalf("the other tenant exported %v (manifest %+v), want nothing", ids(lines), m2)
	}
	m, _, _ := x.export(t, tokenvault.ExportRequest{})
	_, err = e.V.GetExport(ctx, exp2.Key, m.ID)
	vaulttest.WantKind(t, "GetExport of another tenant's export", err, tokenvault.NotFound)
}

// TestExportVerifyRefusesChanges: a changed ciphertext, a cut one, a
// changed manifest, a wrong key or identity fail verification.
func TestExportVerifyRefusesChanges(t *testing.T) {
	e := vaulttest.NewEnv(t)
	x := newExportEnv(t, e)
	m, file, _ := x.export(t, tokenvault.ExportRequest{})
	keys, err := e.V.AuditKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(file)
	flipped[len(flipped)-20] ^= 1
	if _, err := tokenvault.VerifyExport(m, keys, bytes.NewReader(flipped)); !errors.Is(err, tokenvault.ErrExportCiphertext) {
		t.Errorf("VerifyExport of a changed file = %v, want ErrExportCiphertext", err)
	}
	if _, err := tokenvault.VerifyExport(m, keys, bytes.NewReader(file[:len(file)-1]), x.id); !errors.Is(err, tokenvault.ErrExportCiphertext) {
		t.Errorf("VerifyExport of a cut file = %v, want ErrExportCiphertext", err)
	}
	for name, change := range map[string]func(*tokenvault.ExportManifest){
		"count":     func(m *tokenvault.ExportManifest) { m.Count-- },
		"hash":      func(m *tokenvault.ExportManifest) { m.PlaintextSHA256 = strings.Repeat("0", 64) },
		"tenant":    func(m *tokenvault.ExportManifest) { m.TenantID = "another" },
		"signature": func(m *tokenvault.ExportManifest) { m.Signature[0] ^= 1 },
	} {
		c := *m
		c.Signature = bytes.Clone(m.Signature)
		change(&c)
		if _, err := tokenvault.VerifyExport(&c, keys, bytes.NewReader(file), x.id); !errors.Is(err, tokenvault.ErrExportSignature) {
			t.Errorf("VerifyExport of a manifest with a changed %s = %v, want ErrExportSignature", name, err)
		}
	}
	if _, err := tokenvault.VerifyExport(m, nil, bytes.NewReader(file)); !errors.Is(err, tokenvault.ErrExportSignature) {
		t.Errorf("VerifyExport without the vault's keys = %v, want ErrExportSignature", err)
	}
	stranger, _ := age.GenerateX25519Identity()
	if _, err := tokenvault.VerifyExport(m, keys, bytes.NewReader(file), stranger); !errors.Is(err, tokenvault.ErrExportDecrypt) {
		t.Errorf("VerifyExport with another identity = %v, want ErrExportDecrypt", err)
	}
}

// TestExportApproval: held by the policy, an export writes nothing and
// answers a pending change; approved, its requester runs exactly that
// export once; another request, another key or a second use is refused.
func TestExportApproval(t *testing.T) {
	e := vaulttest.NewEnv(t)
	x := newExportEnv(t, e)
	var approvers []*tokenvault.Application
	var apIDs []string
	for range 2 {
		a := e.App(t, tokenvault.Management, tokenvault.PermTenantRead)
		approvers, apIDs = append(approvers, a), append(apIDs, a.ID)
	}
	if _, err := e.V.SetApprovalPolicy(ctx, e.Mgmt, tokenvault.ApprovalPolicy{Required: 2, Approvers: apIDs,
		Operations: []string{tokenvault.ApprovalExport}, TTLSeconds: 3600}); err != nil {
		t.Fatal(err)
	}
	req := tokenvault.ExportRequest{Recipient: x.id.Recipient().String(), Container: "/people/"}
	var buf bytes.Buffer
	_, err := e.V.ExportTokens(ctx, x.exporter, req, &buf)
	var ar *tokenvault.ApprovalRequired
	if !errors.As(err, &ar) || buf.Len() != 0 || ar.Change.Operation != tokenvault.ApprovalExport {
		t.Fatalf("held ExportTokens = %v, %d bytes; want a pending change and nothing written", err, buf.Len())
	}
	if !strings.Contains(string(ar.Change.After), "/people/") {
		t.Errorf("the change shows %s, want the recipient and filter", ar.Change.After)
	}
	if _, err := e.V.ExportTokensApproved(ctx, x.exporter, ar.Change.ID, req, &buf); !errors.Is(err, tokenvault.ErrConflict) {
		t.Errorf("ExportTokensApproved before approval = %v, want Conflict", err)
	}
	for _, a := range approvers {
		if _, err := e.V.ApproveChange(ctx, a.Key, ar.Change.ID); err != nil {
			t.Fatal(err)
		}
	}
	other := e.App(t, tokenvault.Management, tokenvault.PermTokenExport).Key
	if _, err := e.V.ExportTokensApproved(ctx, other, ar.Change.ID, req, &buf); !errors.Is(err, tokenvault.ErrPermissionDenied) {
		t.Errorf("ExportTokensApproved by another key = %v, want PermissionDenied", err)
	}
	wider := req
	wider.Container = ""
	if _, err := e.V.ExportTokensApproved(ctx, x.exporter, ar.Change.ID, wider, &buf); !errors.Is(err, tokenvault.ErrConflict) {
		t.Errorf("ExportTokensApproved of another request = %v, want Conflict", err)
	}
	if buf.Len() != 0 {
		t.Fatalf("%d bytes written by refused exports", buf.Len())
	}
	m, err := e.V.ExportTokensApproved(ctx, x.exporter, ar.Change.ID, req, &buf)
	if err != nil || m.Count != 2 || m.ApprovalID != ar.Change.ID {
		t.Fatalf("ExportTokensApproved = %+v, %v; want the 2 tokens of /people/", m, err)
	}
	if _, err := e.V.ExportTokensApproved(ctx, x.exporter, ar.Change.ID, req, io.Discard); !errors.Is(err, tokenvault.ErrConflict) {
		t.Errorf("ExportTokensApproved a second time = %v, want Conflict", err)
	}
}

// failingWriter fails after n bytes.
type failingWriter struct{ n int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		return 0, fmt.Errorf("the receiver went away")
	}
	w.n -= len(p)
	return len(p), nil
}

// TestExportFailureRecorded: an export whose writer fails ends with its
// error, stores no manifest, and leaves an audit line saying so; its id
// was given to OnStart.
func TestExportFailureRecorded(t *testing.T) {
	e := vaulttest.NewEnv(t)
	x := newExportEnv(t, e)
	for i := range 300 { // more than age's first 64 KiB chunk
		e.Token(t, tokenvault.TokenRequest{Type: "token", Data: fmt.Sprintf("%d-%s", i, strings.Repeat("x", 300))})
	}
	var started string
	_, err := e.V.ExportTokens(ctx, x.exporter, tokenvault.ExportRequest{Recipient: x.id.Recipient().String(),
		OnStart: func(id string) { started = id }}, &failingWriter{n: 1000})
	if err == nil || started == "" {
		t.Fatalf("ExportTokens to a failing writer = %v (started %q), want its error after start", err, started)
	}
	_, err = e.V.GetExport(ctx, x.exporter, started)
	vaulttest.WantKind(t, "GetExport of a failed export", err, tokenvault.NotFound)
	e.SettleChain(t)
	logs, err := e.V.ListLogs(ctx, e.Mgmt, tokenvault.ListLogsRequest{EntityType: tokenvault.EntityExport, EntityID: started})
	if err != nil || len(logs.Data) != 1 || !strings.Contains(logs.Data[0].Message, "failed") {
		t.Fatalf("audit lines = %+v, %v; want one recording the failure", logs, err)
	}
}

// TestExportEvents: a completed export is the event export.completed
// carrying its manifest, a failed one export.failed; neither holds data.
func TestExportEvents(t *testing.T) {
	e := vaulttest.NewEnv(t)
	tap := vaulttest.TapEvents(e.V)
	if _, _, err := vaulttest.PutEventWebhook(ctx, e.V, e.Boot.Tenant.ID,
		[]string{tokenvault.EventExportCompleted, tokenvault.EventExportFailed}, true); err != nil {
		t.Fatal(err)
	}
	x := newExportEnv(t, e)
	m, _, _ := x.export(t, tokenvault.ExportRequest{})
	_, err := e.V.ExportTokens(ctx, x.exporter, tokenvault.ExportRequest{Recipient: x.id.Recipient().String()}, &failingWriter{n: 0})
	if err == nil {
		t.Fatal("ExportTokens to a failing writer went ahead")
	}
	var types []string
	for _, ev := range tap.Events() {
		types = append(types, ev.Info.Type)
		if strings.Contains(string(ev.JSON), "alice") || strings.Contains(string(ev.JSON), "4242424242424242") {
			t.Errorf("event %s holds data: %s", ev.Info.Type, ev.JSON)
		}
		if ev.Info.Type == tokenvault.EventExportCompleted && !strings.Contains(string(ev.JSON), m.PlaintextSHA256) {
			t.Errorf("export.completed = %s, want the manifest", ev.JSON)
		}
	}
	if !slices.Equal(types, []string{tokenvault.EventExportCompleted, tokenvault.EventExportFailed}) {
		t.Fatalf("events = %v, want export.completed then export.failed", types)
	}
}

// TestExportLeavesOut: expired tokens and decoys are not exported.
func TestExportLeavesOut(t *testing.T) {
	e := vaulttest.NewEnv(t)
	x := newExportEnv(t, e)
	soon := e.Clock.Now().Add(time.Hour)
	expiring := e.Token(t, tokenvault.TokenRequest{Type: "token", Data: "short-lived", ExpiresAt: &soon})
	backend := e.App(t, tokenvault.Private, tokenvault.PermTokenCreate)
	decoy, err := e.V.CreateDecoy(ctx, e.Mgmt, tokenvault.CreateDecoyRequest{ApplicationID: backend.ID,
		Token: tokenvault.TokenRequest{Type: "token", Data: "bait"}})
	if err != nil {
		t.Fatal(err)
	}
	_, _, lines := x.export(t, tokenvault.ExportRequest{})
	got := ids(lines)
	if slices.Contains(got, decoy.ID) || !slices.Contains(got, expiring.ID) || len(got) != 5 {
		t.Fatalf("exported %v; want the 4 tokens and the live expiring one, no decoy %s", got, decoy.ID)
	}
	e.Clock.Advance(2 * time.Hour)
	if _, _, lines := x.export(t, tokenvault.ExportRequest{}); slices.Contains(ids(lines), expiring.ID) || len(lines) != 4 {
		t.Fatalf("exported %v after the expiry; want the 4 tokens", ids(lines))
	}
}
