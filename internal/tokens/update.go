package tokens

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"time"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/jsonpatch"
	"github.com/tokenvault/tokenvault/internal/jsontext"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// What an UpdateToken patch decides before it is written: the request it
// gives, and whether it may read or show more than its key may.

// ErrExpressionsOverStoredData refuses new expressions over data the
// patch does not replace to a key without token:update with reveal, where
// the token is and where it goes.
var ErrExpressionsOverStoredData = unit.Errorf(unit.PermissionDenied, "changing the mask, search indexes or fingerprint "+
	"expression of data the patch does not replace needs token:update with the reveal transform: the new "+
	"expressions would show the stored data")

// PatchedRequest rebuilds the token request of rec with fields merged in,
// so the patched token is validated exactly like a new one. With
// replaceData, the patch's data replaces the stored data instead of being
// merged into it.
func PatchedRequest(rec *Record, fields map[string]any, replaceData bool) (Request, error) {
	data, _ := jsontext.DecodeLastWins(rec.Data)
	var maskExpr any
	if len(rec.MaskExpression) > 0 {
		maskExpr, _ = jsontext.Decode(rec.MaskExpression)
	}
	metadata := map[string]any{}
	for k, v := range rec.Metadata {
		metadata[k] = v
	}
	cur := map[string]any{
		"type":                   rec.Type,
		"data":                   data,
		"containers":             rec.Containers,
		"search_indexes":         rec.SearchIndexes,
		"fingerprint_expression": rec.FingerprintExpression,
		"deduplicate_token":      rec.DeduplicateToken,
	}
	if maskExpr != nil {
		cur["mask"] = maskExpr
	}
	if len(metadata) > 0 {
		cur["metadata"] = metadata
	}
	if rec.ExpiresAt != nil {
		cur["expires_at"] = rec.ExpiresAt.Format(time.RFC3339Nano)
	}
	if rec.Subject != "" {
		cur["subject"] = rec.Subject
	}
	if v, ok := fields["subject"]; ok && v != cur["subject"] {
		return Request{}, unit.InvalidField("subject", "cannot be changed: a token's data subject is set when it is created")
	}
	merged := maps.Clone(cur)
	for k, v := range fields {
		switch k {
		case "data", "mask", "metadata":
			switch {
			case v == nil:
				delete(merged, k)
			case k == "data" && replaceData:
				merged[k] = jsonpatch.Merge(nil, v)
			default:
				merged[k] = jsonpatch.Merge(cur[k], v)
			}
		default:
			if v == nil {
				delete(merged, k)
			} else {
				merged[k] = v
			}
		}
	}
	if _, ok := merged["data"]; !ok {
		return Request{}, unit.InvalidField("data", "cannot be removed")
	}
	req, e := DecodeRequest(merged, "")
	if e != nil {
		return req, e
	}
	req.Containers = slices.Clone(req.Containers)
	return req, nil
}

// SameCard reports whether the card data next has the number, expiration
// month and year of the stored data prev.
func SameCard(prev json.RawMessage, next any) bool {
	old, _ := jsontext.Decode(prev)
	o, ok1 := old.(map[string]any)
	n, ok2 := next.(map[string]any)
	if !ok1 || !ok2 {
		return false
	}
	for _, f := range []string{"number", "expiration_month", "expiration_year"} {
		if o[f] == nil || fmt.Sprint(o[f]) != fmt.Sprint(n[f]) {
			return false
		}
	}
	return true
}

// ReadsStoredData reports whether a patch sets an expression (mask,
// search_indexes, fingerprint_expression) that will be evaluated over
// stored data it does not itself replace. Its results reach the caller
// (the mask in the answer, the fingerprint, search hits), so such a patch
// would read the data through a key that may not see it.
func ReadsStoredData(fields map[string]any, req Request) bool {
	if !SetsExpression(fields) {
		return false
	}
	given, ok := fields["data"]
	return !ok || given == nil || !reflect.DeepEqual(jsonpatch.Merge(nil, given), req.Data)
}

// ReadsNoMore reports whether p's token:read access to the token rec moved
// to containers is no wider than its access where rec is: token:update on
// both places must not let a key move a token it may not read (or may read
// only masked) to where it may.
func ReadsNoMore(p *access.Principal, rec *Record, containers []string) bool {
	rank := func(containers []string) int {
		tr, ok := p.Decide(access.PermTokenRead, access.TokenScope{ID: rec.ID, Containers: containers})
		if !ok {
			return -1
		}
		return access.TransformRank(tr)
	}
	return rank(containers) <= rank(rec.Containers)
}

// SetsExpression reports whether a patch sets an expression evaluated
// over the data: mask, search_indexes or fingerprint_expression.
func SetsExpression(fields map[string]any) bool {
	for _, k := range []string{"mask", "search_indexes", "fingerprint_expression"} {
		if _, ok := fields[k]; ok {
			return true
		}
	}
	return false
}
