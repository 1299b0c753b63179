package tokenvault

// LimiterSizes reports how many buckets each rate limit of v holds, so a
// test can check that idle ones are forgotten.
func LimiterSizes(v *Vault) map[string]int { return v.limiterSizes() }
