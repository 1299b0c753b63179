package tokens

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/tokenvault/tokenvault/internal/expr"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Types are the types a token request may name.
var Types = []string{unit.TypeToken, unit.TypeCard, unit.TypeBank}

// DefaultContainer is where a token goes when its request names none.
var DefaultContainer = map[string]string{
	unit.TypeToken: "/general/high/",
	unit.TypeCard:  "/pci/high/",
	unit.TypeBank:  "/bank/high/",
}

// DefaultFingerprint is the fingerprint expression of each type. A card's
// fingerprint is over its number only, so the same card with another expiry
// or cvc is recognised.
var DefaultFingerprint = map[string]string{
	unit.TypeToken: "{{ data | stringify }}",
	unit.TypeCard:  "{{ data.number }}",
	unit.TypeBank:  "{{ data.account_number }}|{{ data.routing_number }}",
}

// DefaultMask is the mask expression of each type; plain tokens have none.
var DefaultMask = map[string]any{
	unit.TypeCard: map[string]any{
		"number":           "{{ data.number | reveal_last: 4 }}",
		"expiration_month": "{{ data.expiration_month }}",
		"expiration_year":  "{{ data.expiration_year }}",
	},
	unit.TypeBank: map[string]any{
		"routing_number": "{{ data.routing_number }}",
		"account_number": "{{ data.account_number | reveal_last: 4 }}",
	},
}

// DefaultTemplates holds the expressions of DefaultFingerprint and
// DefaultMask parsed, for EvalExpression: most tokens use their type's
// defaults, and parsing a card's four of them again for every card was a
// fiftieth of its tokenization. Templates are immutable, so sharing them is
// safe; a tenant's own expressions are parsed each time, as nothing bounds
// how many there are.
var DefaultTemplates = func() map[string]*expr.Template {
	out := map[string]*expr.Template{}
	add := func(src string) {
		t, err := expr.Parse(src)
		if err != nil {
			panic("tokenvault: default expression " + src + ": " + err.Error())
		}
		out[src] = t
	}
	for _, src := range DefaultFingerprint {
		add(src)
	}
	for _, mask := range DefaultMask {
		for _, src := range mask.(map[string]any) {
			add(src.(string))
		}
	}
	return out
}()

// ValidateData checks the data of a token of type typ, reporting problems
// under path, and returns it normalised (card months and years as numbers).
// A card must not have expired by validOn (zero: not checked).
func ValidateData(typ string, data any, validOn time.Time, path string, fe unit.FieldErrors) any {
	switch typ {
	case unit.TypeCard:
		return validateCard(data, validOn, path, fe)
	case unit.TypeBank:
		return validateBank(data, path, fe)
	}
	if data == nil {
		fe.Add(path, "is required")
	}
	return data
}

// object checks that data is a JSON object with only the allowed fields.
func object(data any, path string, allowed []string, fe unit.FieldErrors) (map[string]any, bool) {
	m, ok := data.(map[string]any)
	if !ok {
		fe.Add(path, "must be an object")
		return nil, false
	}
	for k := range m {
		known := false
		for _, a := range allowed {
			known = known || a == k
		}
		if !known {
			fe.Add(path+"."+k, "unknown field")
		}
	}
	return m, true
}

// validateCard checks a card: number of 13 to 19 digits passing the Luhn
// check, expiration_month 1 to 12, expiration_year of four digits, the two
// not before validOn (unless it is zero), and an optional cvc of 3 or 4
// digits.
func validateCard(data any, validOn time.Time, path string, fe unit.FieldErrors) any {
	m, ok := object(data, path, []string{"number", "expiration_month", "expiration_year", "cvc"}, fe)
	if !ok {
		return data
	}
	out := map[string]any{}
	number, ok := m["number"].(string)
	switch {
	case m["number"] == nil:
		fe.Add(path+".number", "is required")
	case !ok:
		fe.Add(path+".number", "must be a string of digits")
	case !digits(number, 13, 19):
		fe.Add(path+".number", "must be 13 to 19 digits")
	case !expr.LuhnValid(number):
		fe.Add(path+".number", "is not a valid card number")
	default:
		out["number"] = number
	}
	month, monthOK := integer(m, "expiration_month", path, 1, 12, fe)
	year, yearOK := integer(m, "expiration_year", path, 1000, 9999, fe)
	if monthOK && yearOK {
		if !validOn.IsZero() && (year < validOn.Year() || (year == validOn.Year() && month < int(validOn.Month()))) {
			fe.Add(path+".expiration_year", "the card has expired") // no values: a patch may not have sent them
		}
		out["expiration_month"] = json.Number(strconv.Itoa(month))
		out["expiration_year"] = json.Number(strconv.Itoa(year))
	}
	if v, present := m["cvc"]; present {
		cvc, ok := v.(string)
		if !ok || !digits(cvc, 3, 4) {
			fe.Add(path+".cvc", "must be 3 or 4 digits")
		} else {
			out["cvc"] = cvc
		}
	}
	return out
}

// integer reads a required whole number within [lo, hi] from m[name].
func integer(m map[string]any, name, path string, lo, hi int, fe unit.FieldErrors) (int, bool) {
	v, present := m[name]
	if !present || v == nil {
		fe.Add(path+"."+name, "is required")
		return 0, false
	}
	var n int64
	var err error
	switch x := v.(type) {
	case json.Number:
		n, err = strconv.ParseInt(string(x), 10, 64)
	case float64:
		n = int64(x)
		if float64(n) != x {
			err = strconv.ErrSyntax
		}
	default:
		err = strconv.ErrSyntax
	}
	if err != nil || n < int64(lo) || n > int64(hi) {
		if name == "expiration_year" {
			fe.Add(path+"."+name, "must be a four-digit year")
		} else {
			fe.Add(path+"."+name, "must be a whole number from %d to %d", lo, hi)
		}
		return 0, false
	}
	return int(n), true
}

// validateBank checks a bank account: a routing_number of nine digits
// passing the ABA checksum and an account_number of 4 to 17 digits.
func validateBank(data any, path string, fe unit.FieldErrors) any {
	m, ok := object(data, path, []string{"routing_number", "account_number"}, fe)
	if !ok {
		return data
	}
	out := map[string]any{}
	routing, ok := m["routing_number"].(string)
	switch {
	case m["routing_number"] == nil:
		fe.Add(path+".routing_number", "is required")
	case !ok || !digits(routing, 9, 9):
		fe.Add(path+".routing_number", "must be 9 digits")
	case !abaChecksum(routing):
		fe.Add(path+".routing_number", "is not a valid ABA routing number")
	default:
		out["routing_number"] = routing
	}
	account, ok := m["account_number"].(string)
	switch {
	case m["account_number"] == nil:
		fe.Add(path+".account_number", "is required")
	case !ok || !digits(account, 4, 17):
		fe.Add(path+".account_number", "must be 4 to 17 digits")
	default:
		out["account_number"] = account
	}
	return out
}

// digits reports whether s is between lo and hi ASCII digits long.
func digits(s string, lo, hi int) bool {
	if len(s) < lo || len(s) > hi {
		return false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// abaChecksum is the weighted (3, 7, 1) mod-10 check of US routing numbers.
func abaChecksum(r string) bool {
	sum := 0
	for i := range 9 {
		sum += int(r[i]-'0') * [3]int{3, 7, 1}[i%3]
	}
	return sum%10 == 0
}
