package vaulttest

import "github.com/tokenvault/tokenvault"

// CVCOf reads the cvc in a token's data, "" when there is none.
func CVCOf(tok *tokenvault.Token) string {
	d, _ := tok.Data.(map[string]any)
	s, _ := d["cvc"].(string)
	return s
}
