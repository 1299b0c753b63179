package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"

	wrapping "github.com/hashicorp/go-kms-wrapping/v2"
	"github.com/hashicorp/go-kms-wrapping/v2/aead"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/keywrap/kms"
)

// The kinds of root of trust the server knows (-seal, and -to of
// rotate-master-key).
const (
	sealLocal   = "local"    // <data>/master.key or TOKENVAULT_MASTER_KEY
	sealPKCS11  = "pkcs11"   // an AES key in an HSM (keywrap/pkcs11)
	sealKMSAEAD = "kms-aead" // go-kms-wrapping's AEAD wrapper, key in a file: for tests
)

var sealKinds = []string{sealLocal, sealPKCS11, sealKMSAEAD}

// checkSeal checks the -seal settings of c.
func checkSeal(c config, getenv func(string) string) error {
	if !validSeal(c.seal) {
		return fmt.Errorf("-seal must be one of %s, not %q", strings.Join(sealKinds, ", "), c.seal)
	}
	pinEnv := getenv("TOKENVAULT_PKCS11_PIN") != ""
	switch c.seal {
	case sealLocal:
		if c.pkcs11Lib != "" || c.pkcs11TokenLabel != "" || c.pkcs11PinFile != "" || c.kmsAEADKeyFile != "" {
			// The -pkcs11-* flags also name the target of rotate-master-key -to pkcs11.
			if c.rotateTo == "" || c.rotateTo == sealLocal {
				return errors.New("the -pkcs11-* and -kms-aead-* flags need -seal pkcs11 or kms-aead (or rotate-master-key -to)")
			}
		}
	default:
		if strings.TrimSpace(getenv("TOKENVAULT_MASTER_KEY")) != "" {
			return fmt.Errorf("-seal %s: TOKENVAULT_MASTER_KEY must not be set (with a key wrapper no master key exists outside it)", c.seal)
		}
	}
	if c.seal == sealPKCS11 || c.rotateTo == sealPKCS11 {
		switch {
		case c.pkcs11Lib == "" || c.pkcs11TokenLabel == "" || c.pkcs11KeyLabel == "":
			return errors.New("pkcs11 needs -pkcs11-lib, -pkcs11-token-label and -pkcs11-key-label")
		case pinEnv && c.pkcs11PinFile != "":
			return errors.New("give the PKCS#11 PIN in TOKENVAULT_PKCS11_PIN or -pkcs11-pin-file, not both")
		case !pinEnv && c.pkcs11PinFile == "":
			return errors.New("pkcs11 needs the token's PIN in TOKENVAULT_PKCS11_PIN or -pkcs11-pin-file")
		}
	}
	if c.seal == sealKMSAEAD && c.kmsAEADKeyFile == "" {
		return errors.New("-seal kms-aead needs -kms-aead-key-file")
	}
	return nil
}

func validSeal(s string) bool {
	for _, k := range sealKinds {
		if s == k {
			return true
		}
	}
	return false
}

// keyWrapper returns the key wrapper of kind (not local) configured by c,
// with keyLabel as the PKCS#11 key label and aeadKeyFile as the AEAD
// key's file, and the function that closes it. It writes nothing; a wrong
// token or PIN fails here.
func keyWrapper(ctx context.Context, kind string, c config, getenv func(string) string, keyLabel, aeadKeyFile string) (tokenvault.KeyWrapper, func() error, error) {
	switch kind {
	case sealPKCS11:
		pin, err := pkcs11PIN(c, getenv)
		if err != nil {
			return nil, nil, err
		}
		return openPKCS11(c, pin, keyLabel)
	case sealKMSAEAD:
		b, err := os.ReadFile(aeadKeyFile)
		if err != nil {
			return nil, nil, err
		}
		key, err := decodeKey(strings.TrimSpace(string(b)), aeadKeyFile)
		if err != nil {
			return nil, nil, err
		}
		sum := sha256.Sum256(append([]byte("tokenvault kms-aead key id\x00"), key...))
		w := aead.NewWrapper()
		if _, err := w.SetConfig(ctx, wrapping.WithKeyId("aead-"+hex.EncodeToString(sum[:4])), aead.WithKey(key), aead.WithAeadType(wrapping.AeadTypeAesGcm)); err != nil {
			return nil, nil, fmt.Errorf("kms-aead: %w", err)
		}
		k, err := kms.New(ctx, w)
		if err != nil {
			return nil, nil, err
		}
		return k, func() error { return nil }, nil
	}
	return nil, nil, fmt.Errorf("no key wrapper of kind %q", kind)
}

// pkcs11PIN reads the token's user PIN from TOKENVAULT_PKCS11_PIN or the
// -pkcs11-pin-file (one line).
func pkcs11PIN(c config, getenv func(string) string) (string, error) {
	if pin := getenv("TOKENVAULT_PKCS11_PIN"); pin != "" {
		return pin, nil
	}
	b, err := os.ReadFile(c.pkcs11PinFile)
	if err != nil {
		return "", fmt.Errorf("-pkcs11-pin-file: %w", err)
	}
	pin := strings.TrimRight(string(b), "\r\n")
	if pin == "" {
		return "", fmt.Errorf("-pkcs11-pin-file %s is empty", c.pkcs11PinFile)
	}
	return pin, nil
}
