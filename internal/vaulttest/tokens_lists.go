package vaulttest

// PageReadBound is what a page of size n may read: its index entries and
// records, and a few reads of authentication, keys and counts.
func PageReadBound(n int) int64 { return int64(3*n + 40) }
