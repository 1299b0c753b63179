package tokens_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
)

// patient is a caller's own type, tokenized whole and read back typed.
type patient struct {
	Name   string `json:"name"`
	SSN    string `json:"ssn"`
	Visits []int  `json:"visits"`
}

func TestTokenizeCard(t *testing.T) {
	e := vaulttest.NewEnv(t)
	app := e.Reader(t, tokenvault.TransformReveal, tokenvault.PermTokenCreate, tokenvault.PermTokenRead)
	tok, err := e.V.TokenizeCard(ctx, app.Key, tokenvault.Card{Number: vaulttest.Visa, ExpirationMonth: 12, ExpirationYear: 2999, CVC: "123"})
	if err != nil {
		t.Fatalf("TokenizeCard: %v", err)
	}
	if tok.Type != tokenvault.TypeCard || tok.Containers[0] != "/pci/high/" {
		t.Errorf("TokenizeCard = type %q containers %v, want card in /pci/high/", tok.Type, tok.Containers)
	}
	if m, _ := tok.Data.(map[string]any); m["number"] == vaulttest.Visa {
		t.Errorf("TokenizeCard answered the number: %v", tok.Data)
	}
	got, err := e.V.GetToken(ctx, app.Key, tok.ID)
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := got.Data.(map[string]any); m["number"] != vaulttest.Visa || m["cvc"] != "123" {
		t.Errorf("GetToken(card).Data = %v, want the number and cvc revealed", got.Data)
	}

	_, err = e.V.TokenizeCard(ctx, app.Key, tokenvault.Card{Number: "4242424242424241", ExpirationMonth: 13, ExpirationYear: 2999})
	vaulttest.WantKind(t, "TokenizeCard(bad card)", err, tokenvault.Invalid)
	var te *tokenvault.Error
	if !errors.As(err, &te) || len(te.Fields["data.number"]) == 0 || len(te.Fields["data.expiration_month"]) == 0 {
		t.Errorf("TokenizeCard(bad card) = %v, want fields data.number and data.expiration_month", err)
	}
	noCreate := e.Reader(t, tokenvault.TransformReveal, tokenvault.PermTokenRead)
	_, err = e.V.TokenizeCard(ctx, noCreate.Key, tokenvault.Card{Number: vaulttest.Visa, ExpirationMonth: 12, ExpirationYear: 2999})
	vaulttest.WantKind(t, "TokenizeCard without token:create", err, tokenvault.PermissionDenied)
}

func TestTokenizeValue(t *testing.T) {
	e := vaulttest.NewEnv(t)
	app := e.Reader(t, tokenvault.TransformReveal, tokenvault.PermTokenCreate, tokenvault.PermTokenRead)
	tok, err := e.V.TokenizeValue(ctx, app.Key, "078-05-1120")
	if err != nil {
		t.Fatalf("TokenizeValue: %v", err)
	}
	got, err := e.V.GetToken(ctx, app.Key, tok.ID)
	if err != nil || got.Type != tokenvault.TypeToken || got.Data != "078-05-1120" {
		t.Errorf("GetToken(TokenizeValue) = %+v, %v; want a plain token of the value", got, err)
	}
	_, err = e.V.TokenizeValue(ctx, app.Key, nil)
	vaulttest.WantKind(t, "TokenizeValue(nil)", err, tokenvault.Invalid)
	_, err = e.V.TokenizeValue(ctx, "key_unknown", "x")
	vaulttest.WantKind(t, "TokenizeValue(unknown key)", err, tokenvault.Unauthenticated)
}

// TestTokenizeAsKeepsTheCallersType: a value of the caller's own type
// goes in whole and comes back as that type; what cannot be decoded into
// it is an error, never a silent zero value.
func TestTokenizeAsKeepsTheCallersType(t *testing.T) {
	e := vaulttest.NewEnv(t)
	app := e.Reader(t, tokenvault.TransformReveal, tokenvault.PermTokenCreate, tokenvault.PermTokenRead)
	in := patient{Name: "Ada", SSN: "078-05-1120", Visits: []int{3, 5}}
	tok, err := tokenvault.TokenizeAs(ctx, e.V, app.Key, in)
	if err != nil {
		t.Fatalf("TokenizeAs: %v", err)
	}
	out, err := tokenvault.DetokenizeAs[patient](ctx, e.V, app.Key, tok.ID)
	if err != nil || !reflect.DeepEqual(out, in) {
		t.Errorf("DetokenizeAs[patient] = %+v, %v; want %+v", out, err, in)
	}

	_, err = tokenvault.DetokenizeAs[int](ctx, e.V, app.Key, tok.ID)
	vaulttest.WantKind(t, "DetokenizeAs[int](a patient)", err, tokenvault.Invalid)
	redacting := e.Reader(t, tokenvault.TransformRedact, tokenvault.PermTokenRead)
	_, err = tokenvault.DetokenizeAs[patient](ctx, e.V, redacting.Key, tok.ID)
	vaulttest.WantKind(t, "DetokenizeAs by a redacting key", err, tokenvault.PermissionDenied)
	_, err = tokenvault.DetokenizeAs[patient](ctx, e.V, app.Key, "no-such-token")
	vaulttest.WantKind(t, "DetokenizeAs(unknown id)", err, tokenvault.NotFound)
	_, err = tokenvault.TokenizeAs(ctx, e.V, app.Key, func() {})
	vaulttest.WantKind(t, "TokenizeAs(a func)", err, tokenvault.Invalid)
	_, err = tokenvault.TokenizeAs[*patient](ctx, e.V, app.Key, nil)
	vaulttest.WantKind(t, "TokenizeAs(nil)", err, tokenvault.Invalid)
}
