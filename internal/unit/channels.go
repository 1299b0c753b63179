package unit

// Channels: how a token's data was accessed, recorded on the audit line
// of the read (auditchain.Line.Channel) and listed by the access history
// (the root's TokenAccess.Channel). They are vocabulary rather than part
// of one feature: the tokens feature writes them on its reads, and the
// access history lists them.
const (
	// ChannelGet is GET /tokens/{id} (GetToken).
	ChannelGet = "get"
	// ChannelList is a token returned by GET /tokens (ListTokens).
	ChannelList = "list"
	// ChannelSearch is a token returned by a search (SearchTokens).
	ChannelSearch = "search"
	// ChannelDetokenize is POST /detokenize (Detokenize).
	ChannelDetokenize = "detokenize"
	// ChannelProxy is a token detokenized into a proxy's request.
	ChannelProxy = "proxy"
	// ChannelReactor is a token detokenized into a reactor's arguments.
	ChannelReactor = "reactor"
	// ChannelCreate is a create (or an intent's conversion) that
	// deduplicated to the token and returned it.
	ChannelCreate = "create"
)
