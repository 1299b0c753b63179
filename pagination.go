package tokenvault

import "github.com/tokenvault/tokenvault/internal/paging"

// Page sizes (internal/paging). Lists default to DefaultPageSize items a
// page and accept up to MaxPageSize (members: MaxMemberPageSize).
const (
	DefaultPageSize   = paging.DefaultPageSize
	MaxPageSize       = paging.MaxPageSize
	MaxMemberPageSize = paging.MaxMemberPageSize
)

// PageRequest asks for one page of a list (paging.Request): zero values
// mean page 1 of DefaultPageSize items; a cursor (Start) walks by position.
type PageRequest = paging.Request

// Pagination describes the page returned and the whole list.
type Pagination = paging.Pagination

// Page is one page of a list.
type Page[T any] = paging.Page[T]
