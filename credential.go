package tokenvault

// Credential is a secret a caller presents to authenticate: an
// application's API key, a session key (SVC-API-KEY over HTTP), or the
// key a Vault method hands out once (Application.Key, Session.SessionKey,
// TenantBootstrap's application key). Every Vault method that acts for a
// caller takes one as its key parameter, so that a credential and an id,
// both text, cannot be passed in each other's place without a compile
// error: GetTenant(ctx, key) and GetTenantByID(ctx, id) do not swap.
//
// A Credential is a string underneath and encodes to JSON as one. Treat it
// as a secret: the Vault stores only keyed hashes of it and never writes
// it to a log or an error, and so should its holder.
type Credential string
