//go:build !cgo

package cli

import (
	"errors"

	"github.com/tokenvault/tokenvault"
)

// openPKCS11 fails: PKCS#11 modules are shared libraries, loaded through
// cgo, and this binary was built without it (CGO_ENABLED=0).
func openPKCS11(config, string, string) (tokenvault.KeyWrapper, func() error, error) {
	return nil, nil, errors.New("this tokenvault was built without cgo (CGO_ENABLED=0), and PKCS#11 needs it: build it with cgo for -seal pkcs11")
}
