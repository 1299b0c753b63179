package vaulttest

import "github.com/tokenvault/tokenvault/store"

// SharedStore hides the SingleProcess marker, as a store shared between
// processes would, so every call authenticates from the store.
type SharedStore struct{ store.Store }
