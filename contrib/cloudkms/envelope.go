package cloudkms

import (
	"context"
	"errors"
	"fmt"

	wrapping "github.com/hashicorp/go-kms-wrapping/v2"
)

// envelope binds a wrapper that ignores wrapping.WithAad (the transit
// wrapper passes the plaintext to transit's encrypt and drops every
// option) to the additional data, as the cloud wrappers do themselves:
// the key material is sealed locally with AES-256-GCM under a fresh data
// key, with the additional data, and only the data key goes to the inner
// wrapper. Without it a keyring wrapped for one tenant's store key would
// unwrap under another's (keywrap/kms gives the store key as the
// additional data).
type envelope struct{ wrapping.Wrapper }

// envelopeMechanism marks the blobs of an envelope (KeyInfo.Mechanism).
const envelopeMechanism = 0x7456 // "tV"

func (e envelope) Encrypt(ctx context.Context, plaintext []byte, opt ...wrapping.Option) (*wrapping.BlobInfo, error) {
	env, err := wrapping.EnvelopeEncrypt(plaintext, opt...)
	if err != nil {
		return nil, fmt.Errorf("envelope: %w", err)
	}
	inner, err := e.Wrapper.Encrypt(ctx, env.Key)
	if err != nil {
		return nil, err
	}
	info := &wrapping.KeyInfo{Mechanism: envelopeMechanism, WrappedKey: inner.GetCiphertext()}
	if ki := inner.GetKeyInfo(); ki != nil {
		info.KeyId = ki.GetKeyId()
	}
	return &wrapping.BlobInfo{Ciphertext: env.Ciphertext, Iv: env.Iv, KeyInfo: info}, nil
}

func (e envelope) Decrypt(ctx context.Context, in *wrapping.BlobInfo, opt ...wrapping.Option) ([]byte, error) {
	ki := in.GetKeyInfo()
	if ki == nil || ki.GetMechanism() != envelopeMechanism {
		return nil, errors.New("envelope: not an envelope's blob")
	}
	key, err := e.Wrapper.Decrypt(ctx, &wrapping.BlobInfo{Ciphertext: ki.GetWrappedKey(), KeyInfo: &wrapping.KeyInfo{KeyId: ki.GetKeyId()}})
	if err != nil {
		return nil, err
	}
	pt, err := wrapping.EnvelopeDecrypt(&wrapping.EnvelopeInfo{Key: key, Iv: in.GetIv(), Ciphertext: in.GetCiphertext()}, opt...)
	if err != nil {
		// One generic error: which step failed says nothing useful.
		return nil, errors.New("envelope: decryption failed")
	}
	return pt, nil
}

// Finalize releases the inner wrapper (the transit wrapper's token
// renewal).
func (e envelope) Finalize(ctx context.Context) error { return finalize(ctx, e.Wrapper) }

// finalize calls w's Finalize, of either signature: go-kms-wrapping's
// InitFinalizer takes options, the transit wrapper's does not.
func finalize(ctx context.Context, w wrapping.Wrapper) error {
	switch f := w.(type) {
	case wrapping.InitFinalizer:
		return f.Finalize(ctx)
	case interface{ Finalize(context.Context) error }:
		return f.Finalize(ctx)
	}
	return nil
}
