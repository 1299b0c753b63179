package vaulttest

import "testing"

func ForEachStoreB(b *testing.B, fn func(b *testing.B, e *Env)) {
	for _, sk := range StoreKinds {
		b.Run("store="+sk.Name, func(b *testing.B) { fn(b, NewEnvOn(b, sk.Open(b))) })
	}
}
