// Package expr is the Liquid-style {{ ... }} template language of token
// masks, fingerprint expressions, search indexes and detokenization.
//
// It is its own small language, not Liquid itself, because templates come
// from API clients: every construct is checked when the template is
// parsed, and nothing a template says can make evaluation loop or allocate
// without bound.
//
// # Syntax
//
// A template is literal text with expressions in double braces:
//
//	{{ data.number | reveal_last: 4 }}
//	{{ 0190a1b2-7c4e-7d11-9a3b-2f1e0c9d8b7a | json: '$.number' | last4 }}
//	Card ending {{ data.number | last4 }}, expires {{ data | card_exp }}
//
// An expression is a root operand followed by filters separated by "|".
// The root is a string literal ('x' or "x", no escapes; a string holds
// anything but its own quote) or raw text up to the first "|" outside
// quotes, trimmed. Raw roots are not interpreted here: the caller's
// [Resolver] decides what they mean. [Vars] reads dotted paths such as
// data.number; detokenization reads token ids. [Template.Roots] lists them
// so a caller can load what a template names before evaluating it.
//
// A filter is a name, then optionally ":" and arguments separated by ",".
// Arguments are integers (optionally negative), string literals and the
// words true and false.
// Whitespace around tokens is free. A "}}" outside an expression is
// literal text; a "{{" without its "}}" is an error.
//
// # Values
//
// Values are what encoding/json decodes into an any: map[string]any,
// []any, string, bool, nil, and numbers as float64 or json.Number. Numbers
// made by filters are json.Number.
//
// A template that is exactly one expression, with no text around it,
// evaluates to that expression's value with its JSON type. Any other
// template evaluates to a string, each value printed in place: strings as
// they are, nil as "", numbers in shortest decimal form, booleans as true
// or false, and objects and arrays as JSON (encoding/json).
//
// # Filters
//
// Filters marked "text" take their input printed as above, so nil (a
// missing value) acts as "", a number as its digits, and an object as its
// JSON. Lengths, positions and widths count characters (runes), not bytes.
//
//	Filter                    Input   Result
//	------------------------  ------  -------------------------------------------------------------
//	last4                     text    the last 4 characters (all of a shorter string)
//	reveal_last: n[, c]       text    every character but the last n replaced by c (default "X");
//	                                  "4242424242424242" | reveal_last: 4 is "XXXXXXXXXXXX4242"
//	reveal: first, last[, c]  text    the first and last characters kept, the middle replaced by c
//	                                  (default "X"); unchanged if first+last covers the whole string
//	slice: start[, length]    any     length (default 1) elements of an array, or characters of
//	                                  anything else, from start; a negative start counts from the
//	                                  end; out of range gives "" or []
//	pad_left: n[, c]          text    padded on the left to at least n (at most 4096) characters with
//	                                  c (default " ")
//	pad_right: n[, c]         text    padded on the right likewise
//	stringify                 any     the value printed as text; nil gives "" (not "null")
//	to_string                 any     the same as stringify
//	json: '$.path'            any     the one value the path selects in an object or array, or in a
//	                                  string holding JSON; the path is $ then .key, ['key'],
//	                                  ["key"] or [n]; selecting nothing is an error (a present
//	                                  null is selected)
//	upcase, downcase          text    the string in upper or lower case
//	replace: from, to         text    every occurrence of from replaced by to ("" replaces nothing)
//	remove: s                 text    every occurrence of s removed
//	split: sep                text    an array of strings split at each sep ("" splits into
//	                                  characters; an empty string gives [])
//	card_bin                  text    the first 6 digits of a card number; spaces and dashes between
//	                                  digits are allowed; fewer than 6 digits is an error
//	card_mask                 text    all digits but the first 6 and last 4 replaced by "X",
//	                                  separators kept; fewer than 13 digits is an error
//	card_exp[: format]        any     a card object's expiry from expiration_month and
//	                                  expiration_year (numbers or digit strings) in format (default
//	                                  "MM/YY"), where MM, YYYY and YY are replaced; a year below 100
//	                                  is taken to be in the 2000s
//	to_number                 any     a json.Number from a number or a string holding exactly a JSON
//	                                  number; anything else is an error
//	to_boolean                any     true or false from a bool or the strings "true" and "false";
//	                                  anything else is an error
//	hmac: alg, key            text    lowercase hex HMAC under key; alg is 'sha256' or 'sha512'
//	to_base64                 text    standard base64 (with padding) of the text
//	to_base16                 text    lowercase hex of the text
//	alias_card[: bin, last4,  text    a random alias of a card number (digits with spaces or dashes
//	  luhn_valid]                     between them): every digit replaced by a random digit but
//	                                  the BIN (when bin is true: 6 digits, or 8 for numbers of 16
//	                                  digits or more; see [CardBINLength]) and the last four (when
//	                                  last4 is true); delimiters kept in place. The alias fails the
//	                                  Luhn check unless luhn_valid is true, and never equals the
//	                                  number; a number with no digit left to make random is an error
//	alias_preserve_format     text    a random alias keeping the format: letters become random
//	  [: first, last]                 letters of the same case, digits random digits, anything else
//	                                  stays; the first and last characters (default 0) are kept;
//	                                  nothing left to make random is an error
//	alias_preserve_length     text    a random alias of the same length: every character becomes a
//	  [: first, last]                 random letter or digit, punctuation too; first and last kept
//	                                  as above
//	fpe: name[, tweak]        text    NIST SP 800-38G FF1 (AES-256) under the tenant's FPE key,
//	                                  in a token's id only (an error anywhere else): the same
//	                                  value, name and tweak always give the same id in a tenant.
//	                                  name is digits, alphanumeric, base36 or card[_bin][_last4]
//	                                  [_luhn] (package internal/fpe: spaces and dashes kept, a
//	                                  card keeps its first 6 and/or last 4 digits and fails the
//	                                  Luhn check unless _luhn); tweak is literal text
//	fpe_tweaked: name, path   text    fpe with the tweak read from a variable path (data.country,
//	                                  metadata.region in a token's id); a path naming nothing is
//	                                  an error
//
// The alias filters make token ids: they draw from the randomness given to
// [Template.EvalRand], and fail under [Template.Eval], so masks,
// fingerprints and search indexes stay the same each time they are
// computed. Booleans default to false and counts to 0.
//
// Mask and pad characters must be exactly one character. Counts must not be
// negative. An unknown filter, a wrong number of arguments, an argument of
// the wrong kind or a malformed json path is reported by [Parse], at the
// filter's name, not when some token first reaches it.
//
// # What a result shows
//
// [Template.Flow] analyses a template without evaluating it: what its
// result may show of its variables, over the whole expression, so that
// filters composed around one that hides (a replace before fpe, a slice
// before a card transformation) are judged together. [Label] numbers each
// character of the variables' texts as a source; each filter has a rule
// (flow_filters.go) that maps an abstract value to the abstract value it
// gives: per character of the result, the sources it shows in clear, the
// source it is an exact copy of, and whether randomness or a key went into
// it. [Flow] has the union: Clear (every source the result depends on
// with no secret between: shown, or passed through a function someone
// who sees the result can undo or test guesses against) and Exact (the
// sources shown as they are).
//
// The shape of a text is public: its length and the class of each
// character (ASCII digit, uppercase letter, lowercase letter, space, dash,
// anything else), as are object keys, array lengths and JSON types. What
// is hidden is which character of its class a place holds. Each filter:
//
//	Filter                      What its result shows
//	--------------------------  --------------------------------------------------------------
//	last4, reveal_last, reveal, the characters kept, exactly, in place; mask and pad characters
//	slice, pad_left, pad_right  are constants
//	stringify, to_string, json  what it reads; an object or array as JSON (a character JSON may
//	                            escape makes the length unknown: the whole shows all it holds);
//	                            json over a text of the data: unknown shape, shows all of it
//	upcase, downcase            each character shows itself (digits, spaces, dashes stay exact)
//	replace, remove, split      exact when no unknown character may be a character of the
//	                            searched text; a one-character replace maps each character on
//	                            its own (shows it, not exactly); otherwise the length depends
//	                            on the data and the whole shows all it reads
//	card_bin, card_mask         the first 6 digits (and last 4) exactly, others constants
//	card_exp, to_boolean,       all they read (card_exp the expiry only)
//	  to_number
//	hmac                        every character shows every character read: the key is written
//	                            in the expression, so guesses can be tested
//	to_base64, to_base16        each character shows the bytes it encodes
//	alias_card                  the BIN and last four when kept, exactly; other digits random,
//	                            but the last random one fixes the Luhn check and so shows the
//	                            kept digits
//	alias_preserve_format       kept characters exactly; a digit or ASCII letter becomes a random
//	                            one of its class; any other character may stay, so shows itself
//	alias_preserve_length       kept characters exactly; others random
//	fpe, fpe_tweaked            card: the BIN and last four kept exactly, other digits keyed;
//	                            format: characters of the alphabet keyed, spaces and dashes kept,
//	                            a character that may be either shows itself (where it is kept)
//
// A filter without a rule shows everything it reads, anywhere; a
// template that fails whatever the data holds shows nothing. A text of
// more than 4096 characters is analysed as one block. FuzzFlow (over card
// numbers) and FuzzFlowText (over plain texts) check the analysis against
// evaluation: for what the analysis accepts, changing a character it
// hides changes no character of the result that is not keyed, nor which
// characters are keyed, nor, under a given random stream, the random
// ones (a class chosen by the data would show).
//
// # Errors
//
// Every error is an [*Error] with the 0-based byte offset of the problem:
// for a parse error, the offending token; for an evaluation error, the
// "{{" of the expression that failed. Messages never quote the data being
// evaluated, which may be a card number.
//
// # Limits
//
// Templates are at most 64 KiB and expressions at most 100 filters.
// Integer arguments are within ±1,000,000, pad widths within 4096, and
// split makes at most 65,536 parts. One evaluation reads and writes at most
// 16 MiB of text in filters and interpolation; beyond that it fails rather
// than let chained filters (to_base16 a hundred times doubles a value a
// hundred times) grow without bound.
//
// # Concurrency
//
// A [Template] is immutable after [Parse] and may be evaluated by many
// goroutines at once. A [Resolver] is called from the goroutine that calls
// Eval.
package expr
