package cli

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault"
)

// testSettings is a registered kind for tests: kms-aead with its key file
// in -test-aead-key-file.
type testSettings struct{ keyFile string }

func (s *testSettings) Check(func(string) string) error {
	if s.keyFile == "" {
		return errors.New("-test-aead-key-file must be set")
	}
	return nil
}

func (s *testSettings) Open(ctx context.Context, getenv func(string) string) (tokenvault.KeyWrapper, func() error, error) {
	return keyWrapper(ctx, sealKMSAEAD, config{}, getenv, "", s.keyFile)
}

// registerTestKind registers the kind test-aead until the test ends.
func registerTestKind(t *testing.T) {
	t.Helper()
	saved := slices.Clone(registered)
	t.Cleanup(func() { registered = saved })
	Register(Seal{Kind: "test-aead", Usage: "a test", EnvOnly: []EnvVar{{"TOKENVAULT_TEST_AEAD_SECRET", "unused"}},
		Flags: func(fs *FlagSet) Settings {
			s := &testSettings{}
			fs.StringVar(&s.keyFile, "test-aead-key-file", "", "key `file`")
			fs.Bind("test-aead-key-file", "TOKENVAULT_TEST_AEAD_KEY_FILE")
			return s
		}})
}

// TestRegisteredKind: a kind added with Register is a -seal and -to kind
// like the built-in ones: -h lists its flags and variables, its Check
// runs, its flags without it are refused, the server serves a store it
// wraps, and rotate-master-key moves a store to it.
func TestRegisteredKind(t *testing.T) {
	registerTestKind(t)
	func() {
		defer func() {
			if recover() == nil {
				t.Error("a second Register of test-aead did not panic")
			}
		}()
		Register(Seal{Kind: "test-aead", Flags: func(*FlagSet) Settings { return nil }})
	}()

	code, out, _ := runCLI(t, nil, "-h")
	for _, want := range []string{"test-aead (a test)", "  -test-aead-key-file file", "environment: TOKENVAULT_TEST_AEAD_KEY_FILE", "TOKENVAULT_TEST_AEAD_SECRET"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("tokenvault -h = %d, does not hold %q", code, want)
		}
	}
	dir := t.TempDir()
	if code, _, errOut := runCLI(t, nil, "-data", dir, "-seal", "test-aead"); code != 1 || !strings.Contains(errOut, "-test-aead-key-file must be set") {
		t.Errorf("-seal test-aead without its key = %d %q", code, errOut)
	}
	if code, _, errOut := runCLI(t, map[string]string{"TOKENVAULT_TEST_AEAD_KEY_FILE": "/k"}, "-data", dir); code != 1 || !strings.Contains(errOut, "-test-aead-key-file is a setting of -seal test-aead") {
		t.Errorf("TOKENVAULT_TEST_AEAD_KEY_FILE with -seal local = %d %q", code, errOut)
	}

	addr, _, stop := start(t, dir, nil)
	app := createRevealApp(t, addr, readManagementKey(t, dir))
	id, status, answer, err, _ := tokenize(http.DefaultClient, addr, app, bytes.NewReader(tokenizeBody("registered value")), -1)
	if err != nil || status != http.StatusCreated {
		t.Fatalf("tokenize: %d %s %v", status, answer, err)
	}
	stop()
	keyFile := filepath.Join(t.TempDir(), "aead.key")
	writeKey(t, keyFile)
	if code, _, errOut := runCLI(t, nil, "rotate-master-key", "-data", dir, "-to", "test-aead", "-test-aead-key-file", keyFile); code != 0 {
		t.Fatalf("rotate-master-key -to test-aead = %d %s", code, errOut)
	}
	if code, _, errOut := runCLI(t, nil, "rotate-master-key", "-data", dir, "-seal", "test-aead", "-test-aead-key-file", keyFile); code != 1 || !strings.Contains(errOut, "rotate the key in the KMS") {
		t.Errorf("rotate-master-key -seal test-aead (to itself) = %d %q", code, errOut)
	}
	readToken(t, dir, map[string]string{"TOKENVAULT_SEAL": "test-aead", "TOKENVAULT_TEST_AEAD_KEY_FILE": keyFile}, nil, app, id, "registered value")
}
