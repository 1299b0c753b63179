package tokenvault

// ResizeAuthCache bounds v's authentication cache to n entries, so that a
// test can exceed the bound with a few hundred keys rather than
// access.MaxAuthEntries.
func ResizeAuthCache(v *Vault, n int) { v.auth.Resize(n) }

// AuthCacheLen reports how many entries v's authentication cache holds.
func AuthCacheLen(v *Vault) int { return v.auth.Len() }
