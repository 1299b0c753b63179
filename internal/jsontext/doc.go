// Package jsontext reads the JSON a caller gives the Vault: once, exactly,
// and never with a loss. Every feature that takes JSON from a caller
// (token requests and data, patches, tenant code's arguments, a
// destination's answer) decodes it here.
//
// # What it owns
//
//   - Decoding (decode.go): Decode and DecodeLastWins scan a text once
//     (jsoncheck) and decode it once, numbers as json.Number, refusing a
//     document nested deeper than MaxDepth (ErrTooDeep), strings that
//     would decode with a loss and, for Decode, keys given twice.
//     Normalize and AsPlain turn Go values into the same plain values.
//   - The three forms a caller's JSON arrives in (plain.go): a
//     jsoncheck.Doc from httpapi (DocValue), raw text (Decode), and Go
//     values (PlainCopy, which copies plain ones in one walk and leaves
//     any other to encoding/json). Value takes a value in any of the
//     three, as the arguments of tenant code arrive.
//   - The errors (check.go): CheckError and CheckGoText name the bad
//     string's path, Refused tells them from a decoder's syntax error,
//     BadDateTime names a date-time field encoding/json could not read,
//     and Field builds the paths they name ("cards[2].data").
//
// # What it does not do
//
// It knows no request or resource: callers decode their own types from
// the plain values it returns, and word their own errors for a text that
// is not JSON at all. Its errors are unit errors of kind Invalid, worded
// as the API words them (tests compare them).
package jsontext
