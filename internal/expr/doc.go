// Package expr is the {{ ... }} expression language of token masks,
// fingerprint expressions, search indexes and detokenization.
//
// A template is literal text with expressions in double braces. An
// expression is a root operand and filters:
//
//	{{ data.number | reveal_last: 4 }}
//	{{ 0190a1b2-... | json: '$.number' }}
//
// The root is a string literal ('x' or "x", no escapes) or raw text that
// the caller's [Resolver] interprets: [Vars] reads dotted paths such as
// data.number, detokenization reads token ids. A template that is exactly
// one expression evaluates to that value with its JSON type; any other
// template evaluates to a string (see [Stringify]).
//
// Filters (arguments are integers or quoted strings; a missing value acts
// as ""):
//
//	last4                         last four characters
//	reveal_last: n[, c]           mask all but the last n characters with c (default X)
//	reveal: first, last[, c]      mask all but the first and last characters
//	slice: start[, length]        characters of a string or elements of an array; negative start counts from the end
//	pad_left: n[, c]              pad on the left to n characters with c (default space)
//	pad_right: n[, c]             pad on the right
//	stringify, to_string          text: strings as they are, nothing as "", others as JSON
//	json: '$.path'                select one value ($, .key, ['key'], [n]); a JSON string is parsed first
//	upcase, downcase              change case
//	replace: from, to             replace every occurrence
//	remove: s                     remove every occurrence
//	split: sep                    an array of strings
//	card_bin                      first six digits of a card number
//	card_mask                     card number with all but the BIN and last four masked
//	card_exp[: format]            a card's expiry, format with MM, YY, YYYY (default MM/YY)
//	to_number, to_boolean         convert text
//	hmac: 'sha256'|'sha512', key  hex HMAC of the text
//	to_base64, to_base16          encode the text
//
// Parse errors (unknown filters, wrong arguments, unclosed braces) and
// evaluation errors (a JSON path that selects nothing, a value a filter
// cannot take) are [*Error] with a byte position. Every input is bounded:
// templates to 64 KiB, widths to 4096, 100 filters per expression.
package expr
