// Package cloudkms adds the cloud KMS kinds of root of trust to the
// tokenvault command: -seal awskms, gcpckms, azurekeyvault and transit
// (HashiCorp Vault's or OpenBao's transit engine), and rotate-master-key
// -to each of them. Each is a go-kms-wrapping/v2 wrapper module,
// configured by the kind's flags, adapted by package keywrap/kms.
//
// It is a module of its own (github.com/tokenvault/tokenvault/contrib/cloudkms)
// because those wrapper modules bring some fifty others (the AWS, Google
// and Azure SDKs, Vault's API client, gRPC, genproto) that the main module
// and every program embedding the library would otherwise carry. Its
// command, cmd/tokenvault, is the tokenvault of the main module with these
// kinds registered:
//
//	cd contrib/cloudkms && go build -o tokenvault ./cmd/tokenvault
//	./tokenvault -seal transit -transit-address https://vault:8200 -transit-key-name tokenvault
//
// Importing the package registers the kinds (cli.Register), as its command
// does.
//
// # Flags
//
// Every flag has its environment variable (-awskms-key-id and
// TOKENVAULT_AWSKMS_KEY_ID, ...); a flag given wins. Secrets are
// environment variables only. Each setting is passed to the wrapper under
// the wrapper's own configuration key (Settings.ConfigMap), and the
// wrappers' own environment variables (VAULT_AWSKMS_SEAL_KEY_ID,
// AZURE_CLIENT_SECRET, ...) are ignored (disallow_env_vars), so that what
// -h lists is what configures them. (The Vault API client beneath the
// transit wrapper still reads a few VAULT_* variables of its own:
// VAULT_TOKEN when TOKENVAULT_TRANSIT_TOKEN is not set, VAULT_NAMESPACE,
// VAULT_CACERT and the other TLS and proxy ones; -seal transit refuses to
// start with VAULT_SKIP_VERIFY.) Credentials that the clouds' SDKs find
// themselves (AWS's credential chain, Google's Application Default
// Credentials, Azure's managed identity) are used when no setting names
// them.
//
//	awskms          -awskms-key-id (required; id, ARN or alias), -awskms-region,
//	                -awskms-endpoint; credentials from the AWS chain
//	                (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE,
//	                web identity, the instance's or task's role)
//	gcpckms         -gcpckms-project, -gcpckms-region (default global),
//	                -gcpckms-key-ring, -gcpckms-crypto-key (required),
//	                -gcpckms-credentials-file (default: Application Default
//	                Credentials)
//	azurekeyvault   -azurekeyvault-vault-name, -azurekeyvault-key-name
//	                (required), -azurekeyvault-tenant-id,
//	                -azurekeyvault-client-id, TOKENVAULT_AZUREKEYVAULT_CLIENT_SECRET
//	                (a service principal; none: managed identity),
//	                -azurekeyvault-environment, -azurekeyvault-resource
//	transit         -transit-address, -transit-key-name (required),
//	                -transit-mount-path (default transit), -transit-namespace,
//	                -transit-tls-ca-cert, -transit-tls-client-cert,
//	                -transit-tls-client-key, -transit-tls-server-name,
//	                TOKENVAULT_TRANSIT_TOKEN
//
// None of these services can be reached from the tests: transit is tested
// against a fake of its HTTP API, awskms against a fake of the KMS JSON
// API at -awskms-endpoint; gcpckms and azurekeyvault are tested up to their
// configuration (flags, environment, missing settings).
package cloudkms

import (
	"context"
	"errors"
	"fmt"
	"strings"

	wrapping "github.com/hashicorp/go-kms-wrapping/v2"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/internal/cli"
	"github.com/tokenvault/tokenvault/keywrap/kms"
)

func init() {
	for _, k := range kinds {
		cli.Register(k.seal())
	}
}

// kinds are the kinds this package registers, in the order -h lists them.
var kinds = []*kind{awsKMS, gcpCKMS, azureKeyVault, transitKind}

// A kind is a go-kms-wrapping wrapper with its settings.
type kind struct {
	name       string // the value of -seal, and the flags' prefix
	usage      string
	settings   []setting
	secrets    []secret
	newWrapper func() wrapping.Wrapper
	// config is added to every configuration (disallow_env_vars, for the
	// wrappers that read it from the map).
	config map[string]string
	// ignoresAAD: the wrapper drops wrapping.WithAad, so it is put in an
	// envelope (envelope.go) that binds the store key.
	ignoresAAD bool
	// derive adds settings made of others to the configuration (nil:
	// none).
	derive func(s *Settings, m map[string]string)
	// check is a check of the kind's own beyond required settings (nil:
	// none).
	check func(s *Settings, getenv func(string) string) error
}

// A setting is one flag of a kind, and the wrapper's configuration key it
// sets.
type setting struct {
	flag     string // after "-<kind>-", such as key-id
	key      string // the wrapper's configuration key, such as kms_key_id
	def      string
	required bool
	usage    string
}

// A secret is a setting that is an environment variable only.
type secret struct {
	env   string
	key   string
	usage string
}

// envName is the environment variable of the flag -<kind>-<flag>.
func (k *kind) envName(flag string) string {
	return "TOKENVAULT_" + strings.ToUpper(strings.ReplaceAll(k.name+"_"+flag, "-", "_"))
}

func (k *kind) seal() cli.Seal {
	s := cli.Seal{Kind: k.name, Usage: k.usage, Flags: func(fs *cli.FlagSet) cli.Settings { return k.flags(fs) }}
	for _, sec := range k.secrets {
		s.EnvOnly = append(s.EnvOnly, cli.EnvVar{Name: sec.env, Usage: sec.usage})
	}
	return s
}

// flags defines the kind's flags on fs and returns the settings they write
// into.
func (k *kind) flags(fs *cli.FlagSet) *Settings {
	s := &Settings{kind: k, values: map[string]*string{}}
	for _, st := range k.settings {
		v := new(string)
		name := k.name + "-" + st.flag
		usage := st.usage
		if st.required {
			usage += " (required for -seal " + k.name + ")"
		}
		fs.StringVar(v, name, st.def, usage)
		fs.Bind(name, k.envName(st.flag))
		s.values[st.flag] = v
	}
	return s
}

// Settings are the values of one kind's flags: its cli.Settings.
type Settings struct {
	kind   *kind
	values map[string]*string // flag (after the prefix) -> value
}

// Check reports every required setting that is missing, by flag and
// environment variable, and the kind's own contradictions.
func (s *Settings) Check(getenv func(string) string) error {
	var missing []string
	for _, st := range s.kind.settings {
		if st.required && strings.TrimSpace(*s.values[st.flag]) == "" {
			missing = append(missing, fmt.Sprintf("-%s-%s (%s)", s.kind.name, st.flag, s.kind.envName(st.flag)))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s must be set", strings.Join(missing, " and "))
	}
	if s.kind.check != nil {
		return s.kind.check(s, getenv)
	}
	return nil
}

// value is the setting of -<kind>-<flag>.
func (s *Settings) value(flag string) string { return strings.TrimSpace(*s.values[flag]) }

// ConfigMap is the wrapper's configuration, under its own keys
// (go-kms-wrapping's WithConfigMap): the settings given, and the secrets
// getenv holds. It holds secrets: never print it.
func (s *Settings) ConfigMap(getenv func(string) string) map[string]string {
	m := map[string]string{}
	for k, v := range s.kind.config {
		m[k] = v
	}
	for _, st := range s.kind.settings {
		if v := s.value(st.flag); v != "" {
			m[st.key] = v
		}
	}
	for _, sec := range s.kind.secrets {
		if v := getenv(sec.env); v != "" {
			m[sec.key] = v
		}
	}
	if s.kind.derive != nil {
		s.kind.derive(s, m)
	}
	return m
}

// Open configures the kind's wrapper (which may reach the service: the
// cloud wrappers look the key up) and returns its KeyWrapper. Secrets are
// removed from its errors.
func (s *Settings) Open(ctx context.Context, getenv func(string) string) (tokenvault.KeyWrapper, func() error, error) {
	w := s.kind.newWrapper()
	m := s.ConfigMap(getenv)
	if _, err := w.SetConfig(ctx, wrapping.WithConfigMap(m), wrapping.WithDisallowEnvVars(true)); err != nil {
		finalize(ctx, w)
		return nil, nil, s.redact(getenv, err)
	}
	if s.kind.ignoresAAD {
		w = envelope{w}
	}
	release := func() error { return finalize(context.Background(), w) }
	kw, err := kms.New(ctx, w)
	if err != nil {
		release()
		return nil, nil, err
	}
	return redacting{kw, s, getenv}, release, nil
}

// redact returns err with every secret of the kind replaced.
func (s *Settings) redact(getenv func(string) string, err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	redacted := false
	for _, sec := range s.kind.secrets {
		if v := getenv(sec.env); v != "" && strings.Contains(msg, v) {
			msg = strings.ReplaceAll(msg, v, "["+sec.env+"]")
			redacted = true
		}
	}
	if !redacted {
		return err
	}
	return errors.New(msg)
}

// redacting is a KeyWrapper whose errors never hold the kind's secrets,
// whatever the wrapper's client puts in them.
type redacting struct {
	tokenvault.KeyWrapper
	s      *Settings
	getenv func(string) string
}

func (r redacting) Wrap(ctx context.Context, plaintext, aad []byte) (tokenvault.WrappedKey, error) {
	w, err := r.KeyWrapper.Wrap(ctx, plaintext, aad)
	return w, r.s.redact(r.getenv, err)
}

func (r redacting) Unwrap(ctx context.Context, w tokenvault.WrappedKey, aad []byte) ([]byte, error) {
	b, err := r.KeyWrapper.Unwrap(ctx, w, aad)
	return b, r.s.redact(r.getenv, err)
}
