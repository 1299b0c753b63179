package cloudkms

import (
	"errors"
	"strings"

	wrapping "github.com/hashicorp/go-kms-wrapping/v2"
	"github.com/hashicorp/go-kms-wrapping/wrappers/awskms/v2"
	"github.com/hashicorp/go-kms-wrapping/wrappers/azurekeyvault/v2"
	"github.com/hashicorp/go-kms-wrapping/wrappers/gcpckms/v2"
	"github.com/hashicorp/go-kms-wrapping/wrappers/transit/v2"
)

// The settings of each kind, under the configuration keys of its wrapper
// module (each module's options.go).

var awsKMS = &kind{
	name:  "awskms",
	usage: "a key in AWS KMS, -awskms-*",
	settings: []setting{
		{flag: "key-id", key: "kms_key_id", required: true, usage: "AWS KMS key `id`, ARN, or alias (alias/...) that wraps the tenants' keys"},
		{flag: "region", key: "region", usage: "AWS `region` of the key; default the SDK's (AWS_REGION, the profile, the instance's)"},
		{flag: "endpoint", key: "endpoint", usage: "KMS endpoint `URL` instead of the region's, such as a VPC endpoint"},
	},
	config:     map[string]string{"disallow_env_vars": "true"},
	newWrapper: func() wrapping.Wrapper { return awskms.NewWrapper() },
}

var gcpCKMS = &kind{
	name:  "gcpckms",
	usage: "a key in Google Cloud KMS, -gcpckms-*",
	settings: []setting{
		{flag: "project", key: "project", required: true, usage: "Google Cloud `project` of the key ring"},
		{flag: "region", key: "region", def: "global", required: true, usage: "`location` of the key ring, such as global or europe-west1"},
		{flag: "key-ring", key: "key_ring", required: true, usage: "`name` of the key ring"},
		{flag: "crypto-key", key: "crypto_key", required: true, usage: "`name` of the crypto key (purpose: symmetric encryption)"},
		{flag: "credentials-file", key: "credentials", usage: "service account key `file` (JSON); default Application Default Credentials\n(GOOGLE_APPLICATION_CREDENTIALS, the instance's service account)"},
	},
	newWrapper: func() wrapping.Wrapper { return gcpckms.NewWrapper() },
}

var azureKeyVault = &kind{
	name:  "azurekeyvault",
	usage: "a key in Azure Key Vault, -azurekeyvault-*",
	settings: []setting{
		{flag: "vault-name", key: "vault_name", required: true, usage: "`name` of the key vault"},
		{flag: "key-name", key: "key_name", required: true, usage: "`name` of the key (RSA) in the vault"},
		{flag: "tenant-id", key: "tenant_id", usage: "Microsoft Entra tenant `id` of the service principal; without it, managed identity"},
		{flag: "client-id", key: "client_id", usage: "client `id` of the service principal (its secret: TOKENVAULT_AZUREKEYVAULT_CLIENT_SECRET),\nor of a user-assigned managed identity"},
		{flag: "environment", key: "environment", usage: "Azure cloud `name`, such as AzurePublicCloud (the default) or AzureUSGovernmentCloud"},
		{flag: "resource", key: "resource", usage: "Key Vault DNS `suffix`; default the environment's (vault.azure.net)"},
	},
	secrets: []secret{
		{env: "TOKENVAULT_AZUREKEYVAULT_CLIENT_SECRET", key: "client_secret", usage: "the client secret of -azurekeyvault-client-id, for -seal azurekeyvault (a secret: no flag)"},
	},
	config:     map[string]string{"disallow_env_vars": "true"},
	newWrapper: func() wrapping.Wrapper { return azurekeyvault.NewWrapper() },
	check: func(s *Settings, getenv func(string) string) error {
		// A service principal is a tenant, a client and a secret; any
		// of them without the others would be silently unused.
		secret := getenv("TOKENVAULT_AZUREKEYVAULT_CLIENT_SECRET") != ""
		if (secret || s.value("tenant-id") != "") && (!secret || s.value("tenant-id") == "" || s.value("client-id") == "") {
			return errors.New("a service principal needs -azurekeyvault-tenant-id, -azurekeyvault-client-id and TOKENVAULT_AZUREKEYVAULT_CLIENT_SECRET " +
				"(without the tenant and the secret: managed identity, -azurekeyvault-client-id for a user-assigned one)")
		}
		return nil
	},
}

var transitKind = &kind{
	name:  "transit",
	usage: "a key of HashiCorp Vault's or OpenBao's transit engine, -transit-*",
	settings: []setting{
		{flag: "address", key: "address", required: true, usage: "`URL` of the Vault or OpenBao server, such as https://vault.example.com:8200"},
		{flag: "mount-path", key: "mount_path", def: "transit", usage: "`path` the transit engine is mounted at"},
		{flag: "key-name", key: "key_name", required: true, usage: "`name` of the transit key (aes256-gcm96); rotate it in transit, its old versions keep decrypting"},
		{flag: "namespace", key: "namespace", usage: "Vault Enterprise or OpenBao `namespace`"},
		{flag: "tls-ca-cert", key: "tls_ca_cert", usage: "CA certificate `file` (PEM) that signs the server's certificate; default the system's roots"},
		{flag: "tls-client-cert", key: "tls_client_cert", usage: "client certificate `file` (PEM), for servers that ask for one"},
		{flag: "tls-client-key", key: "tls_client_key", usage: "private key `file` (PEM) of -transit-tls-client-cert"},
		{flag: "tls-server-name", key: "tls_server_name", usage: "`name` the server's certificate is checked against, if not -transit-address's host"},
	},
	secrets: []secret{
		{env: "TOKENVAULT_TRANSIT_TOKEN", key: "token", usage: "the Vault or OpenBao token that may encrypt and decrypt with -transit-key-name, for -seal transit (a secret: no flag)"},
	},
	newWrapper: func() wrapping.Wrapper { return transit.NewWrapper() },
	ignoresAAD: true,
	// The key id recorded beside each wrapped keyring: the key's name
	// and version (tokenvault:v2), not the version alone.
	derive: func(s *Settings, m map[string]string) { m["key_id_prefix"] = s.value("key-name") + ":" },
	check: func(s *Settings, getenv func(string) string) error {
		// The Vault API client beneath the wrapper reads its VAULT_*
		// variables whatever disallow_env_vars says; this one would turn
		// off the check of transit's certificate unnoticed.
		if v := strings.ToLower(strings.TrimSpace(getenv("VAULT_SKIP_VERIFY"))); v != "" && v != "0" && v != "false" {
			return errors.New("VAULT_SKIP_VERIFY is set: the transit client would not check the server's certificate; unset it (-transit-tls-ca-cert names a private CA)")
		}
		if (s.value("tls-client-cert") == "") != (s.value("tls-client-key") == "") {
			return errors.New("-transit-tls-client-cert and -transit-tls-client-key go together")
		}
		return nil
	},
}
