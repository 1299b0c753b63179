package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
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
	sealSplit   = "split"    // a key split k of n among custodians (split.go), <data>/split.json
)

var sealKinds = []string{sealLocal, sealPKCS11, sealKMSAEAD, sealSplit}

// cloudSeals are the kinds of contrib/cloudkms's tokenvault: a binary
// without them names it when asked for one.
var cloudSeals = []string{"awskms", "gcpckms", "azurekeyvault", "transit"}

// A Seal is a kind of root of trust that a tokenvault binary registers
// (Register) beside the built-in ones (local, pkcs11, kms-aead): the value
// of -seal and of rotate-master-key -to that selects it, its flags, and
// how its key wrapper is made from them. contrib/cloudkms registers the
// cloud KMS kinds this way.
type Seal struct {
	// Kind is the value of -seal, such as "awskms".
	Kind string
	// Usage says in a few words what holds the key, for -seal's help.
	Usage string
	// Flags defines the kind's flags on fs, each bound (FlagSet.Bind) to
	// its environment variable, and returns the settings they write into.
	// Follow the one pattern of the others: -<kind>-<setting> and
	// TOKENVAULT_<KIND>_<SETTING>.
	Flags func(fs *FlagSet) Settings
	// EnvOnly lists the kind's settings that are environment variables
	// only (secrets never are flags: command lines are public), for -h.
	EnvOnly []EnvVar
}

// EnvVar is a setting that is an environment variable and no flag.
type EnvVar struct{ Name, Usage string }

// Settings are what a Seal's flags and environment say.
type Settings interface {
	// Check reports a missing or contradictory setting, naming its flag
	// or variable. It is called before anything is opened, when the
	// kind is -seal's or rotate-master-key -to's, and must not print
	// secrets.
	Check(getenv func(string) string) error
	// Open makes the key wrapper, and the function that releases it. It
	// writes nothing; a key it cannot reach fails here or at the first
	// Unwrap. Its errors must not contain secrets.
	Open(ctx context.Context, getenv func(string) string) (tokenvault.KeyWrapper, func() error, error)
}

// registered are the kinds Register added, in order.
var registered []Seal

// Register adds a kind of root of trust to the commands' -seal and
// rotate-master-key -to, with its flags. Call it before Main, from an init
// function or main. It panics if the kind is empty or taken.
func Register(s Seal) {
	if s.Kind == "" || s.Flags == nil || validSeal(s.Kind) {
		panic("cli: Register of an empty, incomplete or duplicate seal kind " + strconv.Quote(s.Kind))
	}
	registered = append(registered, s)
}

// registeredSeal returns the registered kind named kind.
func registeredSeal(kind string) (Seal, bool) {
	for _, s := range registered {
		if s.Kind == kind {
			return s, true
		}
	}
	return Seal{}, false
}

// allSealKinds lists the built-in kinds, then the registered ones.
func allSealKinds() []string {
	kinds := slices.Clone(sealKinds)
	for _, s := range registered {
		kinds = append(kinds, s.Kind)
	}
	return kinds
}

// registeredUsage is the part of -seal's help about the registered kinds.
func registeredUsage() string {
	if len(registered) == 0 {
		return "\n(" + strings.Join(cloudSeals, ", ") + ": in the tokenvault of contrib/cloudkms)"
	}
	var b strings.Builder
	for _, s := range registered {
		fmt.Fprintf(&b, ",\n%s (%s)", s.Kind, s.Usage)
	}
	return b.String()
}

// unknownSeal is the error of a kind this binary does not have, from flag
// (-seal or -to).
func unknownSeal(flag, kind string) error {
	if slices.Contains(cloudSeals, kind) {
		return fmt.Errorf("%s %s: this tokenvault has no cloud KMS kinds (%s): their client modules are kept out of the main module; "+
			"build the tokenvault of contrib/cloudkms, which has them: cd contrib/cloudkms && go build -o tokenvault ./cmd/tokenvault",
			flag, kind, strings.Join(cloudSeals, ", "))
	}
	return fmt.Errorf("%s must be one of %s, not %q", flag, strings.Join(allSealKinds(), ", "), kind)
}

// checkSeal checks the -seal settings of c.
func checkSeal(c config, getenv func(string) string) error {
	if !validSeal(c.seal) {
		return unknownSeal("-seal", c.seal)
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
	// The flags of a registered kind that is neither -seal's nor -to's
	// would be ignored: say so rather than start on another key.
	if c.flags != nil {
		var stray error
		c.flags.Visit(func(f *flag.Flag) {
			for kind, names := range c.sealFlagNames {
				if stray == nil && kind != c.seal && kind != c.rotateTo && slices.Contains(names, f.Name) {
					stray = fmt.Errorf("-%s is a setting of -seal %s, and -seal is %s", f.Name, kind, c.seal)
				}
			}
		})
		if stray != nil {
			return stray
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
	if s, ok := c.sealSettings[c.seal]; ok {
		if err := s.Check(getenv); err != nil {
			return fmt.Errorf("-seal %s: %w", c.seal, err)
		}
	}
	if s, ok := c.sealSettings[c.rotateTo]; ok && c.rotateTo != c.seal {
		if err := s.Check(getenv); err != nil {
			return fmt.Errorf("-to %s: %w", c.rotateTo, err)
		}
	}
	return nil
}

func validSeal(s string) bool {
	return slices.Contains(allSealKinds(), s)
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
	if s, ok := c.sealSettings[kind]; ok {
		return s.Open(ctx, getenv)
	}
	if kind == sealSplit {
		return nil, nil, errors.New("this command cannot gather a split root key: move the store to another root of trust first (rotate-master-key -seal split -to local, with k custodians' -split-share and -split-identity)")
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
