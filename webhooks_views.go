package tokenvault

// The objects events carry (WebhookEventInfo.Data): each an API view of
// the entity with everything secret left out.

// tokenEventView is a token as its events show it: the API's Token
// without its data and mask, as a caller with no read permission sees it.
func tokenEventView(rec *tokenRecord) *Token {
	tok := rec.api("")
	tok.Data, tok.Mask = nil, nil
	return tok
}
