package shamir_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/keywrap/shamir"
)

// A root key split 2 of 3: the program keeps only the shares' check value
// (the key's LocalKeyID); any two custodians' shares open the Vault.
func Example() {
	key := make([]byte, 32)
	rand.Read(key)
	check, _ := tokenvault.LocalKeyID(key)
	shares, err := shamir.Split(key, 3, 2)
	if err != nil {
		log.Fatal(err)
	}
	dir, _ := os.MkdirTemp("", "shamir-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	v, err := tokenvault.Open(ctx, tokenvault.Options{Path: filepath.Join(dir, "vault.db"), Keys: tokenvault.KeyOptions{MasterKey: key}})
	if err != nil {
		log.Fatal(err)
	}
	v.Close()
	clear(key) // from now on the key exists only as shares

	// Later: two custodians hand in their shares.
	combined, err := shamir.Combine([]shamir.Share{shares[2], shares[0]})
	if err != nil {
		log.Fatal(err)
	}
	defer clear(combined)
	if id, _ := tokenvault.LocalKeyID(combined); id != check {
		log.Fatal("the shares do not make the root key")
	}
	v, err = tokenvault.Open(ctx, tokenvault.Options{Path: filepath.Join(dir, "vault.db"), Keys: tokenvault.KeyOptions{MasterKey: combined}})
	if err != nil {
		log.Fatal(err)
	}
	defer v.Close()
	fmt.Println("opened with 2 of 3 shares")
	// Output: opened with 2 of 3 shares
}
