package expr

// Templates come from API clients, so every dimension is bounded: no
// template can make Parse or Eval allocate or loop without limit.
const (
	// maxTemplateBytes bounds the source Parse accepts.
	maxTemplateBytes = 64 << 10
	// maxFilters bounds the filters of one expression.
	maxFilters = 100
	// maxInt bounds integer literals, so that arithmetic on them (start
	// plus length of a slice) cannot overflow.
	maxInt = 1_000_000
	// maxWidth bounds pad widths, the only argument that sets how much a
	// filter allocates.
	maxWidth = 4096
	// maxWork bounds the bytes of text one Eval may read or write in
	// filters and interpolation. Without it, 100 chained to_base16
	// filters would grow a value 2^100 times, and thousands of
	// expressions could each copy a large value. 16 MiB is 16 times the
	// default request body, room for a few filters over the largest
	// value while keeping the worst template to tens of milliseconds.
	maxWork = 16 << 20
	// maxParts bounds the array split makes: each part costs far more
	// memory than the byte it may come from.
	maxParts = 1 << 16
)
