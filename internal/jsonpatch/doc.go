// Package jsonpatch applies RFC 7386 JSON merge patches, the body of
// every PATCH of the API (tokens, reactors, proxies).
//
// # What it owns
//
// Merge, the patch itself on plain JSON values; Decode, which reads a
// patch body that must be an object of allowed fields (Invalid
// otherwise, worded as the API words it); and Apply, which patches a
// resource's JSON form and decodes the result into its request type,
// refusing a patch whose keys differ from a field's only by case.
//
// # What it does not do
//
// It validates nothing of the resource: the caller validates the patched
// request as it validates a full one. Texts are read by internal/jsontext.
package jsonpatch
