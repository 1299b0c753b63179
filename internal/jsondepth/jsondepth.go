// Package jsondepth measures how deeply a JSON text nests, without
// parsing it: parsers that recurse (encoding/json's, goja's) are given
// only texts that a bound has let through.
package jsondepth

// Of is the deepest nesting of arrays and objects in text, brackets inside
// strings skipped. It is a linear scan; for text that is not JSON it is
// still a bound on what a parser would recurse into.
func Of[T string | []byte](text T) int {
	depth, deepest, inString := 0, 0, false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case inString && c == '\\':
			i++ // the escaped character
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}
