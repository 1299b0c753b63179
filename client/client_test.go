package client_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/client"
	"github.com/tokenvault/tokenvault/httpapi"
	"github.com/tokenvault/tokenvault/internal/openapitest"
	"github.com/tokenvault/tokenvault/internal/testfake"
	"github.com/tokenvault/tokenvault/store/bolt"
)

const operatorKey = "op_client-test-operator-key-0123456789"

// TestEveryEndpoint drives every endpoint of the API through the client
// against httpapi, and checks each answer decodes into the Vault's types.
func TestEveryEndpoint(t *testing.T) {
	ctx := context.Background()
	key := make([]byte, 32)
	rand.Read(key)
	box := &testfake.Mailer{}
	// bbolt, for the operator's backup.
	st, err := bolt.Open(filepath.Join(t.TempDir(), "vault.db"), &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// bbolt too for the subject keys, for their backup.
	sk, err := bolt.Open(filepath.Join(t.TempDir(), "subject-keys.db"), &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sk.Close()
	v, err := tokenvault.Open(ctx, tokenvault.Options{Store: st, SubjectKeys: sk, Mailer: box, Keys: tokenvault.KeyOptions{MasterKey: key}, Retention: tokenvault.RetentionOptions{SweepInterval: -1}, Outbound: tokenvault.OutboundOptions{AllowPrivateDestinations: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	mux := http.NewServeMux()
	// Every answer is also held to openapi.yaml, and at the end every
	// operation of the document must have been answered with a 2xx.
	cov := new(openapitest.Coverage)
	mux.Handle("/vault/", http.StripPrefix("/vault", openapitest.Mount(t, v, httpapi.Options{OperatorKey: operatorKey}, cov)))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer func() {
		if missing := cov.Missing(); len(missing) > 0 && !t.Failed() {
			t.Errorf("operations of openapi.yaml never answered 2xx here: %v", missing)
		}
	}()
	dest := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if len(b) == 0 {
			b = []byte(`{}`)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Path", r.URL.EscapedPath())
		w.Write(b)
	}))
	defer dest.Close()
	boot, err := v.CreateTenant(ctx, tokenvault.CreateTenantRequest{Name: "Acme"})
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(srv.URL+"/vault", nil)
	mgmt := boot.Application.Key
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}

	root, err := c.Root(ctx)
	must("Root", err)
	if root.OpenAPI != "/vault/openapi.json" {
		t.Errorf("Root = %+v, want the document at /vault/openapi.json", root)
	}
	doc, err := c.OpenAPI(ctx)
	must("OpenAPI", err)
	if !bytes.Equal(doc, bytes.TrimSpace(httpapi.OpenAPI())) {
		t.Errorf("OpenAPI = %.100s, want the document httpapi serves", doc)
	}

	app, err := c.CreateApplication(ctx, mgmt, tokenvault.CreateApplicationRequest{Name: "be", Type: tokenvault.Private,
		Rules: []tokenvault.AccessRule{{Priority: 1, Container: "/", Transform: "reveal", Permissions: []string{"token:create", "token:read", "token:update", "token:delete", "token:search", "token:use"}}}})
	must("CreateApplication", err)
	apps, err := c.ListApplications(ctx, mgmt, tokenvault.ListApplicationsRequest{IDs: []string{app.ID}})
	must("ListApplications", err)
	if len(apps.Data) != 1 {
		t.Errorf("ListApplications = %+v", apps)
	}
	_, err = c.GetApplication(ctx, mgmt, app.ID)
	must("GetApplication", err)
	_, err = c.GetApplicationByKey(ctx, mgmt)
	must("GetApplicationByKey", err)
	_, err = c.UpdateApplication(ctx, mgmt, app.ID, tokenvault.UpdateApplicationRequest{Name: "be2", Rules: app.Rules})
	must("UpdateApplication", err)
	app2, err := c.RegenerateApplicationKey(ctx, mgmt, app.ID)
	must("RegenerateApplicationKey", err)
	_, err = c.UnfreezeApplication(ctx, mgmt, app.ID)
	must("UnfreezeApplication", err)
	decoy, err := c.CreateDecoy(ctx, mgmt, tokenvault.CreateDecoyRequest{ApplicationID: app.ID, Token: tokenvault.TokenRequest{Type: "token", Data: "bait"}})
	must("CreateDecoy", err)
	decoys, err := c.ListDecoys(ctx, mgmt)
	must("ListDecoys", err)
	if len(decoys) != 1 || decoys[0].ID != decoy.ID {
		t.Errorf("ListDecoys = %+v, want %+v", decoys, decoy)
	}
	k := app2.Key
	perms, err := c.ListPermissions(ctx, mgmt, tokenvault.Public)
	must("ListPermissions", err)
	if len(perms) != 4 { // fpe:encode, token-intent:create, token:create, token:update
		t.Errorf("ListPermissions(public) = %v", perms)
	}
	_, err = c.GetTenant(ctx, mgmt)
	must("GetTenant", err)
	stats, err := c.TenantStatistics(ctx, mgmt)
	must("TenantStatistics", err)
	if stats.Applications < 2 || len(stats.Tokens.ByType) != 3 {
		t.Errorf("TenantStatistics = %+v, want the applications made above and every token type", stats)
	}
	preview, err := c.PreviewAccess(ctx, mgmt, tokenvault.AccessPreviewRequest{ApplicationID: app.ID, Token: tokenvault.AccessPreviewToken{Type: "card"}})
	must("PreviewAccess", err)
	if len(preview.Decisions) != 6 || !preview.Decisions[1].Allowed || preview.Decisions[1].Transform != "reveal" {
		t.Errorf("PreviewAccess = %+v, want token:read revealed by the rule on /", preview)
	}
	fpeApp, err := c.CreateApplication(ctx, mgmt, tokenvault.CreateApplicationRequest{Name: "fpe", Type: tokenvault.Private,
		Permissions: []string{tokenvault.PermFPEEncode, tokenvault.PermFPEDecode}})
	must("CreateApplication (fpe)", err)
	encoded, err := c.FPEEncode(ctx, fpeApp.Key, tokenvault.FPERequest{Transformation: "digits", Values: []string{"123-45-6789"}})
	must("FPEEncode", err)
	decoded, err := c.FPEDecode(ctx, fpeApp.Key, tokenvault.FPERequest{Transformation: "digits", Values: encoded.Values})
	must("FPEDecode", err)
	if decoded.Values[0] != "123-45-6789" {
		t.Errorf("FPEDecode(FPEEncode) = %v", decoded.Values)
	}

	// Approvals: a policy of 1 of 2 approvers holds the creation of
	// management applications, then its own removal.
	var approvers []*tokenvault.Application
	for _, name := range []string{"approver 1", "approver 2"} {
		ap, err := c.CreateApplication(ctx, mgmt, tokenvault.CreateApplicationRequest{Name: name, Type: tokenvault.Management,
			Permissions: []string{tokenvault.PermTenantRead}})
		must("CreateApplication (approver)", err)
		approvers = append(approvers, ap)
	}
	_, err = c.SetApprovalPolicy(ctx, mgmt, tokenvault.ApprovalPolicy{Required: 1, Approvers: []string{approvers[0].ID, approvers[1].ID},
		Operations: []string{tokenvault.ApprovalCreateManagement}, TTLSeconds: 3600})
	must("SetApprovalPolicy", err)
	_, err = c.GetApprovalPolicy(ctx, mgmt)
	must("GetApprovalPolicy", err)
	held := func(what string, err error) *tokenvault.ApprovalRequired {
		t.Helper()
		var ar *tokenvault.ApprovalRequired
		if !errors.As(err, &ar) || ar.Change.ID == "" || ar.Change.Status != tokenvault.ChangePending {
			t.Fatalf("%s = %v, want *ApprovalRequired", what, err)
		}
		return ar
	}
	_, err = c.CreateApplication(ctx, mgmt, tokenvault.CreateApplicationRequest{Name: "held", Type: tokenvault.Management,
		Permissions: []string{tokenvault.PermTenantRead}})
	ar := held("CreateApplication (held)", err)
	if ar.Key == "" {
		t.Error("the 202 of a held creation has no key")
	}
	changes, err := c.ListApprovals(ctx, approvers[0].Key, tokenvault.ListApprovalsRequest{Status: tokenvault.ChangePending})
	must("ListApprovals", err)
	if len(changes.Data) != 1 || changes.Data[0].ID != ar.Change.ID {
		t.Errorf("ListApprovals = %+v, want the held creation", changes)
	}
	_, err = c.GetApproval(ctx, approvers[0].Key, ar.Change.ID)
	must("GetApproval", err)
	if _, err := c.ApproveChange(ctx, mgmt, ar.Change.ID); !errors.Is(err, tokenvault.ErrPermissionDenied) {
		t.Errorf("ApproveChange by its requester = %v, want PermissionDenied", err)
	}
	applied, err := c.ApproveChange(ctx, approvers[0].Key, ar.Change.ID)
	must("ApproveChange", err)
	if applied.Status != tokenvault.ChangeApplied {
		t.Errorf("ApproveChange = %+v, want applied", applied)
	}
	_, err = c.CreateApplication(ctx, mgmt, tokenvault.CreateApplicationRequest{Name: "held 2", Type: tokenvault.Management,
		Permissions: []string{tokenvault.PermTenantRead}})
	ar = held("CreateApplication (held 2)", err)
	rejected, err := c.RejectChange(ctx, approvers[1].Key, ar.Change.ID, "not now")
	must("RejectChange", err)
	if rejected.Status != tokenvault.ChangeRejected || rejected.Reason != "not now" {
		t.Errorf("RejectChange = %+v", rejected)
	}
	_, err = c.SetApprovalPolicy(ctx, mgmt, tokenvault.ApprovalPolicy{})
	ar = held("SetApprovalPolicy (remove)", err)
	_, err = c.ApproveChange(ctx, approvers[1].Key, ar.Change.ID)
	must("ApproveChange (policy)", err)

	// The operator's routes.
	other, err := c.CreateTenant(ctx, operatorKey, tokenvault.CreateTenantRequest{Name: "Other", Owner: tokenvault.User{ID: "ignored", Email: "o@example.com"}})
	must("CreateTenant", err)
	if other.Application.Key == "" || other.Owner.User.Email != "o@example.com" || other.Owner.User.ID == "ignored" {
		t.Errorf("CreateTenant = %+v", other)
	}
	tenants, err := c.ListTenants(ctx, operatorKey, tokenvault.PageRequest{Size: 1})
	must("ListTenants", err)
	if tenants.Pagination.TotalItems != 2 || len(tenants.Data) != 1 {
		t.Errorf("ListTenants = %+v", tenants)
	}
	gotTenant, err := c.GetTenantByID(ctx, operatorKey, other.Tenant.ID)
	must("GetTenantByID", err)
	if gotTenant.Name != "Other" {
		t.Errorf("GetTenantByID = %+v", gotTenant)
	}
	chain, err := c.VerifyAuditChain(ctx, operatorKey, other.Tenant.ID)
	must("VerifyAuditChain", err)
	if chain.TenantID != other.Tenant.ID || chain.Lines == 0 || chain.LastSeq != uint64(chain.Lines) {
		t.Errorf("VerifyAuditChain = %+v", chain)
	}
	must("DeleteTenant", c.DeleteTenant(ctx, operatorKey, other.Tenant.ID))
	// A tenant deletes itself with its own management key.
	third, err := c.CreateTenant(ctx, operatorKey, tokenvault.CreateTenantRequest{Name: "Third", Owner: tokenvault.User{Email: "t@example.com"}})
	must("CreateTenant (third)", err)
	must("DeleteOwnTenant", c.DeleteOwnTenant(ctx, third.Application.Key))
	if _, err := c.GetTenant(ctx, third.Application.Key); !errors.Is(err, tokenvault.ErrUnauthenticated) {
		t.Errorf("the key of the tenant that deleted itself: %v", err)
	}
	if _, err := c.GetTenant(ctx, other.Application.Key); !errors.Is(err, tokenvault.ErrUnauthenticated) {
		t.Errorf("the deleted tenant's key: %v", err)
	}
	if _, err := c.ListTenants(ctx, mgmt, tokenvault.PageRequest{}); !errors.Is(err, tokenvault.ErrUnauthenticated) {
		t.Errorf("ListTenants with a tenant key: %v", err)
	}
	var backup bytes.Buffer
	must("Backup", c.Backup(ctx, operatorKey, &backup))
	if backup.Len() == 0 {
		t.Error("Backup wrote nothing")
	}
	if err := c.Backup(ctx, mgmt, io.Discard); !errors.Is(err, tokenvault.ErrUnauthenticated) {
		t.Errorf("Backup with a tenant key: %v", err)
	}
	// Data subjects: a token of one, its report, its erasure and
	// certificate, the subject key store's backup.
	subjectTok, err := c.CreateToken(ctx, k, tokenvault.TokenRequest{Type: "token", Data: "subject's", Subject: "person-7"})
	must("CreateToken(subject)", err)
	report, err := c.SubjectAccessReport(ctx, k, "person-7")
	must("SubjectAccessReport", err)
	if len(report.Tokens) != 1 || report.Tokens[0].ID != subjectTok.ID || report.Tokens[0].Data != "subject's" {
		t.Errorf("SubjectAccessReport = %+v", report)
	}
	var subjectKeys bytes.Buffer
	must("BackupSubjectKeys", c.BackupSubjectKeys(ctx, operatorKey, &subjectKeys))
	if subjectKeys.Len() == 0 {
		t.Error("BackupSubjectKeys wrote nothing")
	}
	erasure, err := c.EraseSubject(ctx, mgmt, "person-7")
	must("EraseSubject", err)
	if erasure.Tokens != 1 || erasure.Subject != "person-7" {
		t.Errorf("EraseSubject = %+v", erasure)
	}
	cert, err := c.SubjectCertificate(ctx, mgmt, "person-7")
	must("SubjectCertificate", err)
	if cert.Hash() != erasure.Hash() {
		t.Errorf("SubjectCertificate = %+v; want %+v", cert, erasure)
	}
	if _, err := c.GetToken(ctx, k, subjectTok.ID); !errors.Is(err, tokenvault.ErrNotFound) {
		t.Errorf("GetToken(erased) = %v; want NotFound", err)
	}
	// The audit chain's keys and checkpoints (audit_keys_test.go holds
	// what they answer).
	cp, err := c.SignAuditChain(ctx, operatorKey, boot.Tenant.ID)
	must("SignAuditChain", err)
	rotated, err := c.RotateAuditKey(ctx, operatorKey)
	must("RotateAuditKey", err)
	auditKeys, err := c.AuditKeys(ctx)
	must("AuditKeys", err)
	if len(auditKeys) != 2 || auditKeys[0].ID != cp.KeyID || auditKeys[1].ID != rotated.ID {
		t.Errorf("AuditKeys = %+v; want %s, then %s", auditKeys, cp.KeyID, rotated.ID)
	}
	// An export, and its manifest (exports_test.go holds the rest).
	var exported bytes.Buffer
	manifest, err := c.ExportTokens(ctx, mgmt, tokenvault.ExportRequest{Recipient: exportRecipient(t)}, &exported)
	must("ExportTokens", err)
	if _, err := tokenvault.VerifyExport(manifest, auditKeys, bytes.NewReader(exported.Bytes())); err != nil {
		t.Errorf("VerifyExport of ExportTokens = %v", err)
	}
	must("RotateDataKey", c.RotateDataKey(ctx, mgmt))
	withPurposes, err := c.SetPurposes(ctx, mgmt, tokenvault.SetPurposesRequest{Purposes: []tokenvault.Purpose{
		{Name: "fraud-review", Description: "Reviewing a payment flagged as fraud"}}})
	must("SetPurposes", err)
	if len(withPurposes.Purposes) != 1 || withPurposes.Purposes[0].Name != "fraud-review" {
		t.Errorf("SetPurposes = %+v, want the tenant with fraud-review", withPurposes.Purposes)
	}
	fpeVersion, err := c.RotateFPEKey(ctx, mgmt)
	must("RotateFPEKey", err)
	if fpeVersion != 2 {
		t.Errorf("RotateFPEKey = %d, want 2", fpeVersion)
	}
	secret, err := c.WebhookSecret(ctx, mgmt)
	must("WebhookSecret", err)
	if len(secret) != 64 {
		t.Errorf("WebhookSecret = %q", secret)
	}

	out, err := c.Tokenize(ctx, k, map[string]any{"name": "Ada"})
	must("Tokenize", err)
	id := out.(map[string]any)["name"].(string)
	det, err := c.Detokenize(ctx, k, map[string]any{"n": "{{" + id + "}}"})
	must("Detokenize", err)
	if det.(map[string]any)["n"] != "Ada" {
		t.Errorf("Detokenize = %v", det)
	}
	tok, err := c.CreateToken(ctx, k, tokenvault.TokenRequest{Type: "token", Data: "x", Metadata: map[string]string{"ref": "A1"}, SearchIndexes: []string{"{{ data }}"}})
	must("CreateToken", err)
	got, err := c.GetToken(ctx, k, tok.ID)
	must("GetToken", err)
	if got.Data != "x" {
		t.Errorf("GetToken = %+v", got)
	}
	_, err = c.UpdateToken(ctx, k, tok.ID, json.RawMessage(`{"metadata": {"ref": "B2"}}`))
	must("UpdateToken", err)
	list, err := c.ListTokens(ctx, k, tokenvault.ListTokensRequest{Metadata: map[string]string{"ref": "b2"}})
	must("ListTokens", err)
	if len(list.Data) != 1 {
		t.Errorf("ListTokens(metadata) = %+v", list)
	}
	found, err := c.SearchTokens(ctx, k, tokenvault.SearchTokensRequest{Query: "data:x"})
	must("SearchTokens", err)
	if len(found.Data) != 1 {
		t.Errorf("SearchTokens = %+v", found)
	}
	importer, err := c.CreateApplication(ctx, mgmt, tokenvault.CreateApplicationRequest{Name: "importer", Type: tokenvault.Private,
		Permissions: []string{tokenvault.PermTokenImport, tokenvault.PermTokenCreate}})
	must("CreateApplication(importer)", err)
	imported, err := c.ImportTokens(ctx, importer.Key, tokenvault.ImportBatch{Lines: []tokenvault.ImportLine{
		{Number: 3, ID: "legacy_0001", Type: "token", Data: "kept value"},
		{Number: 5, Problem: "not valid JSON"},
		{Number: 8, ID: "legacy_keptvalue", Type: "token", Data: "kept value"},
	}})
	must("ImportTokens", err)
	if imported.Imported != 1 || imported.Rejected != 2 || imported.Rejects[0].Line != 5 || imported.Rejects[1].Line != 8 {
		t.Errorf("ImportTokens = %+v, want 1 imported, lines 5 and 8 rejected", imported)
	}
	// Who saw it: the get, the list and the search, newest first, by
	// cursor; and the same for its metadata.
	channels := func(what string, got []tokenvault.TokenAccess, want ...string) {
		t.Helper()
		var seen []string
		for _, a := range got {
			if a.TokenID != tok.ID || a.ActorID == "" || a.Transform != tokenvault.TransformReveal {
				t.Errorf("%s: access %+v", what, a)
			}
			seen = append(seen, a.Channel)
		}
		if !slices.Equal(seen, want) {
			t.Errorf("%s: channels %v, want %v", what, seen, want)
		}
	}
	acc, err := c.TokenAccessPage(ctx, mgmt, tok.ID, tokenvault.PageRequest{Size: 2})
	must("TokenAccessPage", err)
	channels("TokenAccessPage", acc.Data, tokenvault.ChannelSearch, tokenvault.ChannelList)
	acc, err = c.TokenAccessPage(ctx, mgmt, tok.ID, tokenvault.PageRequest{Size: 2, Start: acc.Pagination.After})
	must("TokenAccessPage by cursor", err)
	channels("TokenAccessPage by cursor", acc.Data, tokenvault.ChannelGet)
	acc, err = c.TokenAccess(ctx, mgmt, tok.ID)
	must("TokenAccess", err)
	channels("TokenAccess", acc.Data, tokenvault.ChannelSearch, tokenvault.ChannelList, tokenvault.ChannelGet)
	if _, err := c.TokenAccess(ctx, k, tok.ID); !errors.Is(err, tokenvault.ErrPermissionDenied) {
		t.Errorf("TokenAccess with a private key = %v, want ErrPermissionDenied", err)
	}
	subject, err := c.SubjectAccess(ctx, mgmt, tokenvault.SubjectAccessRequest{Metadata: map[string]string{"ref": "B2"}})
	must("SubjectAccess", err)
	channels("SubjectAccess", subject.Data, tokenvault.ChannelSearch, tokenvault.ChannelList, tokenvault.ChannelGet)
	if !slices.Equal(subject.Tokens, []string{tok.ID}) {
		t.Errorf("SubjectAccess tokens = %v", subject.Tokens)
	}
	must("DeleteToken", c.DeleteToken(ctx, k, tok.ID))
	_, err = c.GetToken(ctx, k, tok.ID)
	if !errors.Is(err, tokenvault.ErrNotFound) {
		t.Errorf("GetToken after delete = %v, want ErrNotFound", err)
	}
	_, err = c.CreateApplication(ctx, mgmt, tokenvault.CreateApplicationRequest{Name: "", Type: tokenvault.Private})
	var te *tokenvault.Error
	if !errors.As(err, &te) || te.Kind != tokenvault.Invalid || te.Fields["name"] == nil {
		t.Errorf("invalid request = %v, want Invalid with a field", err)
	}

	pub, err := c.CreateApplication(ctx, mgmt, tokenvault.CreateApplicationRequest{Name: "web", Type: tokenvault.Public, Permissions: []string{"token:create"}})
	must("CreateApplication(public)", err)
	sess, err := c.CreateSession(ctx, pub.Key)
	must("CreateSession", err)
	must("AuthorizeSession", c.AuthorizeSession(ctx, k, tokenvault.AuthorizeSessionRequest{Nonce: sess.Nonce, Permissions: []string{"token:create"}}))

	// Token intents: a public key creates, reads and deletes its own; a
	// private key converts one, once. The public key sees no fingerprint.
	card := map[string]any{"number": "378282246310005", "expiration_month": 1, "expiration_year": 2040, "cvc": "1234"}
	intent, err := c.CreateTokenIntent(ctx, pub.Key, tokenvault.TokenIntentRequest{Type: tokenvault.TypeCard, Data: card})
	must("CreateTokenIntent", err)
	if intent.Card == nil || intent.Card.Brand != tokenvault.BrandAmex || intent.Card.Bin != "378282" || intent.Card.Last4 != "0005" {
		t.Errorf("CreateTokenIntent = %+v", intent)
	}
	_, err = c.GetTokenIntent(ctx, pub.Key, intent.ID)
	must("GetTokenIntent", err)
	converted, err := c.CreateToken(ctx, k, tokenvault.TokenRequest{TokenIntentID: intent.ID})
	must("CreateToken(token_intent_id)", err)
	if converted.Type != tokenvault.TypeCard || converted.Fingerprint == "" || intent.Fingerprint != "" {
		t.Errorf("converted = %+v", converted)
	}
	if _, err := c.CreateToken(ctx, k, tokenvault.TokenRequest{TokenIntentID: intent.ID}); !errors.Is(err, tokenvault.ErrNotFound) {
		t.Errorf("converting twice = %v, want ErrNotFound", err)
	}
	dropped, err := c.CreateTokenIntent(ctx, pub.Key, tokenvault.TokenIntentRequest{Type: tokenvault.TypeToken, Data: "x"})
	must("CreateTokenIntent(token)", err)
	must("DeleteTokenIntent", c.DeleteTokenIntent(ctx, pub.Key, dropped.ID))
	if _, err := c.GetTokenIntent(ctx, pub.Key, dropped.ID); !errors.Is(err, tokenvault.ErrNotFound) {
		t.Errorf("GetTokenIntent after delete = %v, want ErrNotFound", err)
	}

	inv, err := c.CreateInvitation(ctx, mgmt, tokenvault.CreateInvitationRequest{Email: "ada@example.com"})
	must("CreateInvitation", err)
	_, err = c.ListInvitations(ctx, mgmt, tokenvault.ListInvitationsRequest{})
	must("ListInvitations", err)
	_, err = c.GetInvitation(ctx, mgmt, inv.ID)
	must("GetInvitation", err)
	_, err = c.ResendInvitation(ctx, mgmt, inv.ID)
	must("ResendInvitation", err)
	member, err := c.AcceptInvitation(ctx, box.Token(), tokenvault.User{FirstName: "Ada"})
	must("AcceptInvitation", err)
	members, err := c.ListMembers(ctx, mgmt, tokenvault.ListMembersRequest{UserIDs: []string{member.User.ID}})
	must("ListMembers", err)
	if len(members.Data) != 1 {
		t.Errorf("ListMembers = %+v", members)
	}
	must("DeleteMember", c.DeleteMember(ctx, mgmt, member.ID))
	inv2, err := c.CreateInvitation(ctx, mgmt, tokenvault.CreateInvitationRequest{Email: "bob@example.com"})
	must("CreateInvitation", err)
	must("DeleteInvitation", c.DeleteInvitation(ctx, mgmt, inv2.ID))

	f, err := c.CreateFormula(ctx, mgmt, tokenvault.FormulaRequest{Name: "f", Code: "module.exports = async (req) => ({raw: req.args})"})
	must("CreateFormula", err)
	_, err = c.ListFormulas(ctx, mgmt, tokenvault.ListFormulasRequest{})
	must("ListFormulas", err)
	_, err = c.GetFormula(ctx, mgmt, f.ID)
	must("GetFormula", err)
	_, err = c.UpdateFormula(ctx, mgmt, f.ID, tokenvault.FormulaRequest{Name: "f2", Code: f.Code})
	must("UpdateFormula", err)
	r, err := c.CreateReactor(ctx, mgmt, tokenvault.CreateReactorRequest{Name: "r", Formula: &tokenvault.Ref{ID: f.ID}, Configuration: map[string]any{}})
	must("CreateReactor", err)
	_, err = c.ListReactors(ctx, mgmt, tokenvault.ListReactorsRequest{Name: "r"})
	must("ListReactors", err)
	_, err = c.GetReactor(ctx, mgmt, r.ID)
	must("GetReactor", err)
	_, err = c.UpdateReactor(ctx, mgmt, r.ID, tokenvault.UpdateReactorRequest{Name: "r2", Configuration: map[string]any{}})
	must("UpdateReactor", err)
	must("PatchReactor", c.PatchReactor(ctx, mgmt, r.ID, json.RawMessage(`{"name": "r3"}`)))
	res, err := c.InvokeReactor(ctx, k, r.ID, tokenvault.InvokeReactorRequest{Args: map[string]any{"who": "{{" + id + "}}"}})
	must("InvokeReactor", err)
	if raw, _ := res.Raw.(map[string]any); raw["who"] != "Ada" {
		t.Errorf("InvokeReactor = %+v", res)
	}
	must("DeleteReactor", c.DeleteReactor(ctx, mgmt, r.ID))
	must("DeleteFormula", c.DeleteFormula(ctx, mgmt, f.ID))

	wh, err := c.CreateWebhook(ctx, mgmt, tokenvault.WebhookRequest{Name: "w", URL: dest.URL + "/hook", Events: []string{"*"}})
	must("CreateWebhook", err)
	_, err = c.ListWebhooks(ctx, mgmt, tokenvault.ListWebhooksRequest{})
	must("ListWebhooks", err)
	_, err = c.GetWebhook(ctx, mgmt, wh.ID)
	must("GetWebhook", err)
	_, err = c.ListWebhookEventTypes(ctx, mgmt)
	must("ListWebhookEventTypes", err)
	d, err := c.TestWebhook(ctx, mgmt, wh.ID)
	must("TestWebhook", err)
	_, err = c.ListWebhookDeliveries(ctx, mgmt, wh.ID, tokenvault.PageRequest{})
	must("ListWebhookDeliveries", err)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		_, err = c.RedeliverWebhookDelivery(ctx, mgmt, wh.ID, d.ID)
		if tokenvault.ErrorKind(err) != tokenvault.Conflict || time.Now().After(deadline) {
			break // 409 only while the test event is being attempted
		}
	}
	must("RedeliverWebhookDelivery", err)
	_, err = c.UpdateWebhook(ctx, mgmt, wh.ID, tokenvault.WebhookRequest{Name: "w2", URL: dest.URL + "/hook", Events: []string{"*"}, Status: tokenvault.WebhookDisabled})
	must("UpdateWebhook", err)
	_, err = c.RotateWebhookSecret(ctx, mgmt, wh.ID)
	must("RotateWebhookSecret", err)
	must("DeleteWebhook", c.DeleteWebhook(ctx, mgmt, wh.ID))

	p, err := c.CreateProxy(ctx, mgmt, tokenvault.ProxyRequest{Name: "p", DestinationURL: dest.URL})
	must("CreateProxy", err)
	_, err = c.ListProxies(ctx, mgmt, tokenvault.ListProxiesRequest{})
	must("ListProxies", err)
	_, err = c.GetProxy(ctx, mgmt, p.ID)
	must("GetProxy", err)
	_, err = c.UpdateProxy(ctx, mgmt, p.ID, tokenvault.ProxyRequest{Name: "p2", DestinationURL: dest.URL})
	must("UpdateProxy", err)
	must("PatchProxy", c.PatchProxy(ctx, mgmt, p.ID, json.RawMessage(`{"name": "p3"}`)))
	pres, err := c.InvokeProxy(ctx, tokenvault.ProxyCall{ProxyKey: p.Key, APIKey: k, Method: "POST", Path: "/echo",
		Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"n": "{{` + id + `}}"}`)})
	must("InvokeProxy", err)
	if pres.Status != 200 || string(pres.Body) != `{"n":"Ada"}` {
		t.Errorf("InvokeProxy = %d %s", pres.Status, pres.Body)
	}
	for _, method := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
		for _, path := range []string{"", "/a/b"} {
			pres, err := c.InvokeProxy(ctx, tokenvault.ProxyCall{ProxyKey: p.Key, APIKey: k, Method: method, Path: path})
			must("InvokeProxy "+method+" /proxy"+path, err)
			if pres.Status != 200 {
				t.Errorf("InvokeProxy %s /proxy%s = %d %s", method, path, pres.Status, pres.Body)
			}
		}
	}
	// The path arrives as the caller meant it: escaped, encoded slashes kept.
	for _, tc := range []struct{ path, raw, want string }{
		{"/a?b#c", "", "/a%3Fb%23c"},
		{"/a b/c", "", "/a%20b/c"},
		{"/files/a/b", "/files/a%2Fb", "/files/a%2Fb"},
		{"/files/a/b", "/files/other", "/files/a/b"},
	} {
		pres, err := c.InvokeProxy(ctx, tokenvault.ProxyCall{ProxyKey: p.Key, APIKey: k, Method: "GET", Path: tc.path, RawPath: tc.raw})
		must("InvokeProxy "+tc.path, err)
		if got := pres.Header.Get("X-Path"); got != tc.want {
			t.Errorf("InvokeProxy Path %q RawPath %q reached %s, want %s", tc.path, tc.raw, got, tc.want)
		}
	}
	_, err = c.InvokeProxy(ctx, tokenvault.ProxyCall{ProxyKey: p.Key, APIKey: k, Method: "GET", Path: "x"})
	if e, ok := err.(*tokenvault.Error); !ok || e.Kind != tokenvault.Invalid || len(e.Fields["path"]) == 0 {
		t.Errorf("InvokeProxy with path x = %v, want Invalid naming path", err)
	}
	_, err = c.InvokeProxy(ctx, tokenvault.ProxyCall{ProxyKey: p.Key, Method: "GET"})
	if tokenvault.ErrorKind(err) != tokenvault.Unauthenticated {
		t.Errorf("InvokeProxy without a key = %v", err)
	}
	must("DeleteProxy", c.DeleteProxy(ctx, mgmt, p.ID))

	logs, err := c.ListLogs(ctx, mgmt, tokenvault.ListLogsRequest{EntityType: "reactor"})
	must("ListLogs", err)
	if len(logs.Data) == 0 {
		t.Error("no reactor logs")
	}
	types, err := c.EntityTypes(ctx, mgmt)
	must("EntityTypes", err)
	if len(types) == 0 {
		t.Error("no entity types")
	}
	must("DeleteApplication", c.DeleteApplication(ctx, mgmt, app.ID))
	_, err = c.GetTenant(ctx, "key_nope")
	if !errors.Is(err, tokenvault.ErrUnauthenticated) || !strings.Contains(err.Error(), "API key") {
		t.Errorf("unknown key = %v", err)
	}
}
