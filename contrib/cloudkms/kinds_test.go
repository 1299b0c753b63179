package cloudkms

import (
	"flag"
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tokenvault/tokenvault/internal/cli"
)

// TestSettingsReachTheWrapperConfig: each kind's flags, and their
// environment variables, end up under the wrapper module's own
// configuration keys; a flag given wins over its variable; the wrappers'
// own variables are turned off where the map says so.
func TestSettingsReachTheWrapperConfig(t *testing.T) {
	for _, tc := range []struct {
		kind *kind
		args []string
		env  map[string]string
		want map[string]string
	}{
		{awsKMS, []string{"-awskms-key-id", "alias/tokenvault", "-awskms-endpoint", "https://kms.vpce.example"},
			map[string]string{"TOKENVAULT_AWSKMS_KEY_ID": "ignored: the flag wins", "TOKENVAULT_AWSKMS_REGION": "eu-west-1"},
			map[string]string{"kms_key_id": "alias/tokenvault", "region": "eu-west-1", "endpoint": "https://kms.vpce.example", "disallow_env_vars": "true"}},
		{gcpCKMS, []string{"-gcpckms-project", "p", "-gcpckms-key-ring", "ring"},
			map[string]string{"TOKENVAULT_GCPCKMS_CRYPTO_KEY": "ck", "TOKENVAULT_GCPCKMS_CREDENTIALS_FILE": "/etc/sa.json"},
			map[string]string{"project": "p", "region": "global", "key_ring": "ring", "crypto_key": "ck", "credentials": "/etc/sa.json"}},
		{azureKeyVault, []string{"-azurekeyvault-vault-name", "v", "-azurekeyvault-key-name", "k", "-azurekeyvault-tenant-id", "t"},
			map[string]string{"TOKENVAULT_AZUREKEYVAULT_CLIENT_ID": "c", "TOKENVAULT_AZUREKEYVAULT_CLIENT_SECRET": "azure-secret", "TOKENVAULT_AZUREKEYVAULT_ENVIRONMENT": "AzureUSGovernmentCloud"},
			map[string]string{"vault_name": "v", "key_name": "k", "tenant_id": "t", "client_id": "c", "client_secret": "azure-secret", "environment": "AzureUSGovernmentCloud", "disallow_env_vars": "true"}},
		{transitKind, []string{"-transit-address", "https://vault:8200", "-transit-mount-path", "kms"},
			map[string]string{"TOKENVAULT_TRANSIT_KEY_NAME": "tv", "TOKENVAULT_TRANSIT_TOKEN": "hvs.x", "TOKENVAULT_TRANSIT_NAMESPACE": "ns", "TOKENVAULT_TRANSIT_TLS_CA_CERT": "/ca.pem"},
			map[string]string{"address": "https://vault:8200", "mount_path": "kms", "key_name": "tv", "namespace": "ns", "tls_ca_cert": "/ca.pem", "token": "hvs.x", "key_id_prefix": "tv:"}},
	} {
		t.Run(tc.kind.name, func(t *testing.T) {
			fs := cli.NewFlagSet("test", "")
			s := tc.kind.flags(fs)
			if err := fs.ParseEnv(tc.args, envFunc(tc.env)); err != nil {
				t.Fatal(err)
			}
			if err := s.Check(envFunc(tc.env)); err != nil {
				t.Fatalf("Check = %v", err)
			}
			if got := s.ConfigMap(envFunc(tc.env)); !maps.Equal(got, tc.want) {
				t.Errorf("ConfigMap(%v, %v) = %v, want %v", tc.args, tc.env, got, tc.want)
			}
			fs.VisitAll(func(f *flag.Flag) {
				if !strings.HasPrefix(f.Name, tc.kind.name+"-") {
					t.Errorf("flag -%s does not start with -%s-", f.Name, tc.kind.name)
				}
			})
		})
	}
}

// TestMissingSettingsNameTheirFlags: a kind without a required setting, or
// with settings that do not go together, fails to start with an error that
// names the flags and variables, and never the secrets it was given.
func TestMissingSettingsNameTheirFlags(t *testing.T) {
	const secret = "s3cr3t-never-printed"
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		want []string
	}{
		{"awskms without a key", []string{"-seal", "awskms", "-awskms-region", "eu-west-1"}, nil,
			[]string{"-awskms-key-id", "TOKENVAULT_AWSKMS_KEY_ID"}},
		{"gcpckms without its key", []string{"-seal", "gcpckms", "-gcpckms-project", "p"}, nil,
			[]string{"-gcpckms-key-ring", "TOKENVAULT_GCPCKMS_KEY_RING", "-gcpckms-crypto-key", "TOKENVAULT_GCPCKMS_CRYPTO_KEY"}},
		{"gcpckms without a region", []string{"-seal", "gcpckms", "-gcpckms-project", "p", "-gcpckms-key-ring", "r", "-gcpckms-crypto-key", "k", "-gcpckms-region", ""}, nil,
			[]string{"-gcpckms-region"}},
		{"azurekeyvault without a vault", []string{"-seal", "azurekeyvault", "-azurekeyvault-key-name", "k"}, nil,
			[]string{"-azurekeyvault-vault-name", "TOKENVAULT_AZUREKEYVAULT_VAULT_NAME"}},
		{"azurekeyvault secret without a tenant", []string{"-seal", "azurekeyvault", "-azurekeyvault-vault-name", "v", "-azurekeyvault-key-name", "k", "-azurekeyvault-client-id", "c"},
			map[string]string{"TOKENVAULT_AZUREKEYVAULT_CLIENT_SECRET": secret},
			[]string{"-azurekeyvault-tenant-id", "TOKENVAULT_AZUREKEYVAULT_CLIENT_SECRET"}},
		{"transit without an address", []string{"-seal", "transit", "-transit-key-name", "k"}, map[string]string{"TOKENVAULT_TRANSIT_TOKEN": secret},
			[]string{"-transit-address", "TOKENVAULT_TRANSIT_ADDRESS"}},
		{"transit client certificate without its key", []string{"-seal", "transit", "-transit-address", "https://v", "-transit-key-name", "k", "-transit-tls-client-cert", "/c.pem"}, nil,
			[]string{"-transit-tls-client-key"}},
		{"transit with VAULT_SKIP_VERIFY", []string{"-seal", "transit", "-transit-address", "https://v", "-transit-key-name", "k"},
			map[string]string{"VAULT_SKIP_VERIFY": "true", "TOKENVAULT_TRANSIT_TOKEN": secret}, []string{"VAULT_SKIP_VERIFY"}},
		{"transit flags with -seal local", []string{"-transit-key-name", "k"}, nil,
			[]string{"-transit-key-name", "-seal transit"}},
		{"a master key with a KMS", []string{"-seal", "transit", "-transit-address", "https://v", "-transit-key-name", "k"},
			map[string]string{"TOKENVAULT_MASTER_KEY": strings.Repeat("ab", 32)}, []string{"TOKENVAULT_MASTER_KEY"}},
		{"rotate to transit without a key", []string{"rotate-master-key", "-to", "transit", "-transit-address", "https://v"}, nil,
			[]string{"-to transit", "-transit-key-name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{}, tc.args...)
			args = append(args, "-data", t.TempDir())
			if tc.args[0] != "rotate-master-key" {
				args = append([]string{"serve", "-addr", "127.0.0.1:0"}, args...)
			}
			code, out, errOut := runCLI(tc.env, args...)
			if code == 0 {
				t.Fatalf("tokenvault %v succeeded", args)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("tokenvault %v: %q does not name %s", args, errOut, w)
				}
			}
			if strings.Contains(errOut+out, secret) {
				t.Errorf("tokenvault %v printed the secret: %s%s", args, out, errOut)
			}
		})
	}
}

// TestHelpListsEveryKindsFlagsWithTheirVariables: -h of this tokenvault
// lists every flag with its environment variable, the cloud kinds'
// among them, and their secrets as environment variables only; -seal's
// help and rotate-master-key -h and restore -h name the kinds.
func TestHelpListsEveryKindsFlagsWithTheirVariables(t *testing.T) {
	code, out, _ := runCLI(nil, "-h")
	if code != 0 {
		t.Fatalf("tokenvault -h = %d", code)
	}
	for _, k := range kinds {
		fs := cli.NewFlagSet("test", "")
		k.flags(fs)
		fs.VisitAll(func(f *flag.Flag) {
			env := k.envName(strings.TrimPrefix(f.Name, k.name+"-"))
			if !strings.Contains(out, "  -"+f.Name+" ") || !strings.Contains(out, "environment: "+env) {
				t.Errorf("tokenvault -h does not list -%s with %s", f.Name, env)
			}
		})
		for _, sec := range k.secrets {
			if !strings.Contains(out[strings.Index(out, "Environment only:"):], sec.env) {
				t.Errorf("tokenvault -h does not list %s among the environment-only settings", sec.env)
			}
			if strings.Contains(out, "-"+strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(sec.env, "TOKENVAULT_"), "_", "-"))+" ") {
				t.Errorf("%s is a flag too: secrets are environment variables only", sec.env)
			}
		}
		if !strings.Contains(out, k.name+" (") {
			t.Errorf("-seal's help does not name %s", k.name)
		}
	}
	for _, cmd := range []string{"rotate-master-key", "restore"} {
		code, out, _ := runCLI(nil, cmd, "-h")
		if code != 0 || !strings.Contains(out, "-transit-key-name") || !strings.Contains(out, "TOKENVAULT_TRANSIT_TOKEN") || !strings.Contains(out, "awskms") {
			t.Errorf("tokenvault %s -h = %d, does not list the cloud kinds' flags:\n%s", cmd, code, out)
		}
	}
}

// TestAWSKMSAgainstAFakeEndpoint: -seal awskms with -awskms-endpoint at a
// fake of the KMS JSON API: a new store bootstraps and serves a token after
// a restart, the requests are signed with the credentials of the AWS
// chain (here AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY), and a key KMS
// does not know stops the start. It cannot test AWS's own behaviour.
func TestAWSKMSAgainstAFakeEndpoint(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIAFAKEFAKEFAKEFAKE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "fake-secret-access-key")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	// The wrapper's own variables would override the flags: they are
	// turned off (disallow_env_vars).
	t.Setenv("AWSKMS_WRAPPER_KEY_ID", "not-this-key")
	t.Setenv("AWS_KMS_ENDPOINT", "http://127.0.0.1:1")
	f := newFakeAWSKMS(t, "1234abcd-12ab-34cd-56ef-1234567890ab")
	dir := t.TempDir()
	flags := []string{"-seal", "awskms", "-awskms-key-id", f.keyID, "-awskms-region", "eu-west-1", "-awskms-endpoint", f.URL}
	addr, _, stop := serve(t, dir, nil, flags...)
	app, id := tokenizeOne(t, addr, dir, "aws value")
	stop()
	if exists(filepath.Join(dir, "master.key")) {
		t.Error("-seal awskms wrote master.key")
	}
	if f.requests.Load() == 0 || f.signed.Load() != f.requests.Load() {
		t.Errorf("%d requests to KMS, %d signed: want some, all signed", f.requests.Load(), f.signed.Load())
	}
	readBack(t, dir, nil, flags, app, id, "aws value")

	before := snapshot(t, dir)
	code, _, errOut := runCLI(nil, "serve", "-addr", "127.0.0.1:0", "-data", dir, "-seal", "awskms", "-awskms-key-id", "alias/missing", "-awskms-region", "eu-west-1", "-awskms-endpoint", f.URL)
	if code != 1 || !strings.Contains(errOut, "-seal awskms") {
		t.Errorf("serve with a key KMS does not know = %d %q, want 1 naming -seal awskms", code, errOut)
	}
	if !sameFiles(before, snapshot(t, dir)) {
		t.Error("a refused start changed the data directory")
	}
}
