package transfer

import (
	"encoding/json"
	"testing"
)

func TestIDProblem(t *testing.T) {
	card := map[string]any{"number": "5555555555554444", "expiration_month": json.Number("1"), "expiration_year": json.Number("2036")}
	tests := []struct {
		name, id, typ string
		data          any
		ok            bool
	}{
		{"uuid", "6f1c2c3e-0a4b-4c5d-8e9f-0123456789ab", "card", card, true},
		{"uuid made of the number", "55555555-5555-4444-8000-000000000000", "card", card, false},
		{"uuid with the bin only", "55555555-0000-4000-8000-000000000000", "card", card, true},
		{"plain id", "cus_42_card_7", "card", card, true},
		{"bin and last four", "tok_55555555_4444", "card", card, true},
		{"middle digits", "tok_55665556", "card", map[string]any{"number": "4000056655665556"}, false},
		{"bin and last four of another", "tok_40000566_5556", "card", map[string]any{"number": "4000056655665556"}, true},
		{"the number", "tok_5555555555554444", "card", card, false},
		{"separated digits", "tok-5555-5555-5555-4444", "card", card, false},
		{"a plain token's value", "user_Alice.Smith", "token", "alice smith", false},
		{"four characters of a value", "id_alic", "token", "alice smith", true},
		{"nested value", "acct_98765432", "bank", map[string]any{"routing_number": "110000000", "account_number": "000123456789"}, true},
		{"account number run", "acct_23456", "bank", map[string]any{"routing_number": "110000000", "account_number": "000123456789"}, false},
		{"number data", "n_31415", "token", json.Number("3.14159"), false},
		{"punctuation", "tok/1", "token", "x", false},
		{"too long", string(make([]byte, 129)), "token", "x", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := IDProblem(tc.id, tc.typ, tc.data)
			if (got == "") != tc.ok {
				t.Errorf("IDProblem(%q) = %q, want ok=%v", tc.id, got, tc.ok)
			}
		})
	}
}

func TestDecodeLine(t *testing.T) {
	tests := []struct {
		line, problem string
	}{
		{`{"id":"a01","type":"token","data":"x","created_at":"2021-01-02T03:04:05Z"}`, ""},
		{`{"id":"a01","type":"token","data":"x","tenant_id":"t","fingerprint":"f","privacy":{}}`, ""},
		{`{"id":"a01","type":"token","data":"x","colour":"red"}`, `unknown field "colour"`},
		{`{"id":"a01","type":"token"}`, "data: is required"},
		{`{"type":"token","data":"x"}`, "id: is required"},
		{`{"id":"a01","type":"token","data":"x","metadata":{"a":1}}`, "metadata: must be an object of strings"},
		{`{"id":"a01","type":"token","data":"x","created_at":"yesterday"}`, "created_at: must be an RFC 3339 time"},
		{`{"id":"a01","type":"token","data":"4242424242424242"`, "not valid JSON"},
		{`["4242424242424242"]`, "not a JSON object"},
	}
	for _, tc := range tests {
		l := DecodeLine([]byte(tc.line), 7)
		if l.Problem != tc.problem || l.Number != 7 {
			t.Errorf("DecodeLine(%s) = problem %q line %d, want %q line 7", tc.line, l.Problem, l.Number, tc.problem)
		}
	}
}
