// Package kms adapts any go-kms-wrapping (github.com/hashicorp/go-kms-wrapping/v2)
// wrapper to a tokenvault.KeyWrapper: AWS KMS, GCP Cloud KMS, Azure Key
// Vault, Vault or OpenBao transit, or the library's own AEAD wrapper.
//
// The wrapper encrypts each keyring with the store key it is written under
// as additional data (wrapping.WithAad), and the Vault records the key id
// the wrapper reports (BlobInfo.KeyInfo.KeyId) in front of the ciphertext.
// What is stored after that is the wrapper's BlobInfo, as protobuf: for
// the cloud wrappers, an envelope (a data key wrapped by the KMS key,
// and the keyring encrypted under it). No key leaves the KMS.
//
//	w := awskms.NewWrapper()
//	_, err := w.SetConfig(ctx, wrapping.WithKeyId(keyARN), ...)
//	v, err := tokenvault.Open(ctx, tokenvault.Options{Path: "vault.db", KeyWrapper: kms.New(w)})
//
// The wrapper must honour wrapping.WithAad: the cloud wrappers (awskms,
// gcpckms, azurekeyvault) and the AEAD wrapper do; the transit wrapper
// drops it, so a keyring it wraps would open under any store key.
// contrib/cloudkms therefore puts transit inside an envelope of its own
// that binds the additional data; do the same for such a wrapper.
//
// The Vault's Kind for it is "kms-" followed by the wrapper's type (such as
// kms-awskms, kms-transit, kms-aead). Configuring a wrapper (credentials,
// regions, key names) is the wrapper's own business: see its module.
package kms

import (
	"context"
	"errors"
	"fmt"

	wrapping "github.com/hashicorp/go-kms-wrapping/v2"
	"google.golang.org/protobuf/proto"

	"github.com/tokenvault/tokenvault"
)

// Wrapper is a tokenvault.KeyWrapper backed by a go-kms-wrapping wrapper.
// It is safe for concurrent use when the wrapper is (the library's
// wrappers are, once configured).
type Wrapper struct {
	w    wrapping.Wrapper
	kind string
}

var _ tokenvault.KeyWrapper = (*Wrapper)(nil)

// New returns the KeyWrapper of w, which must be configured (SetConfig)
// already. Its kind is "kms-" and w's type.
func New(ctx context.Context, w wrapping.Wrapper) (*Wrapper, error) {
	typ, err := w.Type(ctx)
	if err != nil {
		return nil, fmt.Errorf("kms: wrapper type: %w", err)
	}
	kind := "kms-" + typ.String()
	if len(kind) > 32 {
		kind = kind[:32]
	}
	return &Wrapper{w: w, kind: kind}, nil
}

// Kind is "kms-" and the wrapper's type, such as kms-awskms.
func (k *Wrapper) Kind() string { return k.kind }

// Wrap encrypts plaintext with the wrapper, aad authenticated with it.
// The key id is the one the wrapper reports for this encryption (for
// transit, the key name; for the cloud KMSs, the key's id or ARN); the
// version is the stored format's, "blob-v1".
func (k *Wrapper) Wrap(ctx context.Context, plaintext, aad []byte) (tokenvault.WrappedKey, error) {
	blob, err := k.w.Encrypt(ctx, plaintext, wrapping.WithAad(aad))
	if err != nil {
		return tokenvault.WrappedKey{}, fmt.Errorf("kms: encrypt: %w", err)
	}
	keyID := ""
	if blob.GetKeyInfo() != nil {
		keyID = blob.GetKeyInfo().GetKeyId()
	}
	if keyID == "" {
		if keyID, err = k.w.KeyId(ctx); err != nil {
			return tokenvault.WrappedKey{}, fmt.Errorf("kms: key id: %w", err)
		}
	}
	if len(keyID) > 255 {
		keyID = keyID[:255]
	}
	b, err := proto.Marshal(blob)
	if err != nil {
		return tokenvault.WrappedKey{}, fmt.Errorf("kms: encode: %w", err)
	}
	return tokenvault.WrappedKey{Kind: k.kind, KeyID: keyID, Version: blobVersion, Ciphertext: b}, nil
}

// blobVersion names the stored format: a wrapping.BlobInfo in protobuf.
const blobVersion = "blob-v1"

// Unwrap decrypts what Wrap returned, with the same aad. A wrapper that
// panics on a malformed blob (the AEAD wrapper slices it unchecked) fails
// with an error instead.
func (k *Wrapper) Unwrap(ctx context.Context, w tokenvault.WrappedKey, aad []byte) (pt []byte, err error) {
	defer func() {
		if recover() != nil {
			pt, err = nil, errors.New("kms: decrypt: malformed ciphertext")
		}
	}()
	if w.Version != blobVersion {
		return nil, fmt.Errorf("kms: unknown format %q", w.Version)
	}
	var blob wrapping.BlobInfo
	if err := proto.Unmarshal(w.Ciphertext, &blob); err != nil {
		return nil, fmt.Errorf("kms: decode: %w", err)
	}
	pt, err = k.w.Decrypt(ctx, &blob, wrapping.WithAad(aad))
	if err != nil {
		return nil, fmt.Errorf("kms: decrypt: %w", err)
	}
	return pt, nil
}
