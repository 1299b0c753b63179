//go:build cgo

package cli

import (
	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/keywrap/pkcs11"
)

// openPKCS11 logs in to the token c names and returns the key wrapper of
// the key labelled keyLabel. PKCS#11 modules are shared libraries: this
// needs cgo.
func openPKCS11(c config, pin, keyLabel string) (tokenvault.KeyWrapper, func() error, error) {
	w, err := pkcs11.Open(pkcs11.Config{Module: c.pkcs11Lib, TokenLabel: c.pkcs11TokenLabel, PIN: pin, KeyLabel: keyLabel})
	if err != nil {
		return nil, nil, err
	}
	return w, w.Close, nil
}
