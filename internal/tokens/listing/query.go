package listing

import (
	"slices"
	"strings"

	"github.com/tokenvault/tokenvault/internal/access"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Query is the filter behind the token lists and searches (the root's
// ListTokens and SearchTokens). Empty fields do not filter.
type Query struct {
	IDs         []string
	Container   string
	Type        string
	Fingerprint string
	Metadata    map[string]string
	Search      []string // exact search index values
	// Subject is a data subject (tokens.Record.Subject), matched exactly.
	Subject string
}

// Walkable reports whether q is answered by walking a list index (Page):
// it has no filter answered by an index of exact values (ids,
// fingerprint, metadata, search), which the tokens feature reads instead.
func (q Query) Walkable() bool {
	return q.IDs == nil && q.Fingerprint == "" && len(q.Metadata) == 0 && len(q.Search) == 0 && q.Subject == ""
}

// ReadsContent reports whether q has a term on what only token:read shows
// of a token (its metadata, its fingerprint, its subject): such a term
// matches only tokens the key may read.
func (q Query) ReadsContent() bool {
	return q.Fingerprint != "" || len(q.Metadata) > 0 || q.Subject != ""
}

// Matches applies the filters that need the record itself.
func (q Query) Matches(rec *tokens.Record) bool {
	if q.Type != "" && rec.Type != q.Type {
		return false
	}
	if q.Fingerprint != "" && rec.Fingerprint != q.Fingerprint {
		return false // the fingerprint index may name more
	}
	if q.Subject != "" && rec.Subject != q.Subject {
		return false
	}
	if q.Container != "" && !slices.ContainsFunc(rec.Containers, func(c string) bool { return access.ContainerContains(q.Container, c) }) {
		return false
	}
	for k, v := range q.Metadata {
		if got, ok := rec.Metadata[k]; !ok || !strings.EqualFold(got, v) {
			return false
		}
	}
	return true
}

// matchesShape reports whether every token of shape s matches the type and
// container filters of q (a container filter takes a token with any
// container at or below it).
func (q Query) matchesShape(s tokens.ShapeRecord) bool {
	if q.Type != "" && s.Type != q.Type {
		return false
	}
	if q.Container == "" || q.Container == "/" {
		return true
	}
	return slices.ContainsFunc(s.Containers, func(c string) bool { return access.ContainerContains(q.Container, c) })
}

// maxQueryLength bounds a search query.
const maxQueryLength = 4096

// ParseQuery parses the query language of a token search (the root's
// SearchTokensRequest): terms joined by AND, each field:value, the value
// in double quotes when it holds spaces. It returns Invalid naming query
// for one it does not read.
func ParseQuery(s string) (Query, error) {
	var q Query
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
			q.Search = append(q.Search, value)
		case strings.HasPrefix(field, "metadata."):
			if unit.HasControl(field) {
				return q, unit.InvalidField("query", "metadata key %q %s", strings.TrimPrefix(field, "metadata."), unit.NoControl)
			}
			if q.Metadata == nil {
				q.Metadata = map[string]string{}
			}
			q.Metadata[strings.TrimPrefix(field, "metadata.")] = value
		case field == "type":
			q.Type = value
		case field == "container":
			if !access.ValidContainer(value) {
				return q, unit.InvalidField("query", "container %q is not a container", value)
			}
			q.Container = value
		case field == "fingerprint":
			q.Fingerprint = value
		case field == "id":
			q.IDs = append(q.IDs, value)
		case field == "subject":
			if q.Subject != "" && q.Subject != value || !tokens.ValidSubject(value) {
				return q, unit.InvalidField("query", "subject %q is not one data subject", value)
			}
			q.Subject = value
		default:
			return q, unit.InvalidField("query", "unknown field %q; use data, metadata.<key>, type, container, fingerprint, id or subject", field)
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
