package httpapi

// IdempotentRoutes lists the routes an Idempotency-Key applies to.
func IdempotentRoutes() map[string]bool { return idempotentRoutes }
