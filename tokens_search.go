package tokenvault

import (
	"context"
	"strings"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// SearchTokensRequest is the body of a token search. Query is a list of
// terms joined by AND (case-insensitive), each field:value, the value in
// double quotes when it holds spaces:
//
//	data:<value>            the token has a search index with exactly this value
//	metadata.<key>:<value>  metadata entry, value compared case-insensitively
//	type:<type>             token, card or bank
//	container:<container>   in this container or one below it
//	fingerprint:<value>     this fingerprint, among tokens the key reads in clear
//	id:<id>                 this token
//
// An empty query matches every token.
type SearchTokensRequest struct {
	Query string `json:"query"`
	PageRequest
}

// SearchTokens finds tokens by their search indexes, metadata and
// attributes, without decrypting any token that does not match an exact
// index term. Results are shaped by the caller's token:search access;
// tokens it does not reach are left out. A result carries what is stored
// with the token (fingerprint, metadata, search indexes, mask,
// expressions) only if the caller may also read it (token:read; see
// searchView), and a metadata or fingerprint term matches only such
// tokens, as GET /tokens would list them. Requires token:search, and
// token:read for a metadata or fingerprint term.
//
// Returns Invalid for a bad query (after the permission is checked),
// Unauthenticated, PermissionDenied.
func (v *Vault) SearchTokens(ctx context.Context, key Credential, req SearchTokensRequest) (*Page[Token], error) {
	pg, err := req.PageRequest.Resolve(MaxPageSize)
	if err != nil {
		return nil, err
	}
	var out *Page[Token]
	err = v.update(ctx, func(t *txn) error {
		p, err := t.authorize(key, PermTokenSearch)
		if err != nil {
			return err
		}
		// After the permission: a key that may not search learns
		// nothing, not even how its query would be read.
		q, err := parseQuery(req.Query)
		if err != nil {
			return err
		}
		// As GET /tokens?metadata.k=v: finding by metadata or
		// fingerprint reads them.
		if q.readsContent() && !p.Has(PermTokenRead) {
			return unit.Errorf(PermissionDenied, "the key lacks the permission %s, which a metadata or fingerprint term needs", PermTokenRead)
		}
		if out, err = t.tokenList(p, PermTokenSearch, q, pg); err != nil {
			return err
		}
		return t.logReads(p, PermTokenSearch, out.Data, "Token read (searched)", ChannelSearch)
	})
	return out, err
}

// readsContent reports whether q has a term on what only token:read shows
// of a token (its metadata, its fingerprint): such a term matches only
// tokens the key may read.
func (q tokenQuery) readsContent() bool { return q.fingerprint != "" || len(q.metadata) > 0 }

// searchView is what a search shows of a token the key may find (token:search)
// but not read (token:read): its identity and placement (id, tenant, type,
// containers, expiry, deduplicate flag, timestamps, actors) and its data as
// the token:search transform shows it (the mask by default), nothing stored
// with it: no mask field, fingerprint, fingerprint expression, metadata or
// search indexes.
func searchView(tok *Token) {
	data := tok.Data
	tok.WithholdContent()
	tok.Data = data
}

// maxQueryLength bounds a search query.
const maxQueryLength = 4096

// parseQuery parses the query language of SearchTokensRequest.
func parseQuery(s string) (tokenQuery, error) {
	var q tokenQuery
	if len(s) > maxQueryLength {
		return q, unit.InvalidField("query", "must be at most %d bytes", maxQueryLength)
	}
	terms, err := splitTerms(s)
	if err != nil {
		return q, err
	}
	for i := 0; i < len(terms); i++ {
		term := terms[i]
		if i%2 == 1 {
			if !strings.EqualFold(term.text, "AND") || term.quoted {
				return q, unit.InvalidField("query", "terms must be joined by AND, found %q", term.text)
			}
			if i == len(terms)-1 {
				return q, unit.InvalidField("query", "AND must be followed by a term")
			}
			continue
		}
		field, value, ok := strings.Cut(term.text, ":")
		if !ok || term.quoted || value == "" && !term.valueQuoted {
			return q, unit.InvalidField("query", "each term must be field:value, found %q", term.text)
		}
		switch {
		case field == "data":
			q.search = append(q.search, value)
		case strings.HasPrefix(field, "metadata."):
			if unit.HasControl(field) {
				return q, unit.InvalidField("query", "metadata key %q %s", strings.TrimPrefix(field, "metadata."), unit.NoControl)
			}
			if q.metadata == nil {
				q.metadata = map[string]string{}
			}
			q.metadata[strings.TrimPrefix(field, "metadata.")] = value
		case field == "type":
			q.typ = value
		case field == "container":
			if !validContainer(value) {
				return q, unit.InvalidField("query", "container %q is not a container", value)
			}
			q.container = value
		case field == "fingerprint":
			q.fingerprint = value
		case field == "id":
			q.ids = append(q.ids, value)
		default:
			return q, unit.InvalidField("query", "unknown field %q; use data, metadata.<key>, type, container, fingerprint or id", field)
		}
	}
	return q, nil
}

type queryTerm struct {
	text        string
	quoted      bool // the whole term was quoted
	valueQuoted bool // the value after ':' was quoted
}

// splitTerms splits a query on spaces outside double quotes, removing the
// quotes.
func splitTerms(s string) ([]queryTerm, error) {
	var terms []queryTerm
	var cur strings.Builder
	var term queryTerm
	inQuote, started := false, false
	flush := func() {
		if started {
			term.text = cur.String()
			terms = append(terms, term)
		}
		cur.Reset()
		term, started = queryTerm{}, false
	}
	for _, r := range s {
		switch {
		case r == '"':
			if !inQuote {
				if !started {
					term.quoted = true
				} else if strings.HasSuffix(cur.String(), ":") {
					term.valueQuoted = true
				}
			}
			inQuote, started = !inQuote, true
		case (r == ' ' || r == '\t' || r == '\n') && !inQuote:
			flush()
		default:
			cur.WriteRune(r)
			started = true
		}
	}
	if inQuote {
		return nil, unit.InvalidField("query", "unterminated quote")
	}
	flush()
	return terms, nil
}
