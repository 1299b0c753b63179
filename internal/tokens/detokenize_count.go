package tokens

import (
	"github.com/tokenvault/tokenvault/internal/expr"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// TokenIDs are the distinct tokens doc's expressions name, in the order
// they first appear: what Detokenize would read, counted before any is
// read (an approval policy holds a call over a count). A string that is
// no template is Invalid at its path, as in Detokenize.
func TokenIDs(doc any) ([]string, error) {
	var ids []string
	seen := map[string]bool{}
	_, err := Walk(doc, "", func(v any, path string) (any, bool, error) {
		s, ok := v.(string)
		if !ok {
			return nil, false, nil
		}
		tmpl, err := expr.Parse(s)
		if err != nil {
			return nil, true, unit.InvalidField(path, "%s", err.Error())
		}
		for _, id := range tmpl.Roots() {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
		return v, true, nil
	})
	return ids, err
}
