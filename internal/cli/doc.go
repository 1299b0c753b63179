// Package cli is the tokenvault command: serve, rotate-master-key, tenant,
// backup, restore and version, with their flags and environment variables.
// cmd/tokenvault is a thin main around Main; its package comment documents
// the commands.
//
// # Kinds of root of trust
//
// -seal (and rotate-master-key -to) selects what wraps every tenant's keys.
// The built-in kinds are local (a master key in <data>/master.key or
// TOKENVAULT_MASTER_KEY), pkcs11 (package keywrap/pkcs11) and kms-aead (a
// test of package keywrap/kms). A binary adds others with Register before
// Main: a Seal gives the kind's name, defines its flags (each with its
// environment variable, -<kind>-<setting> and TOKENVAULT_<KIND>_<SETTING>;
// secrets are environment variables only) and opens its key wrapper.
//
// The cloud KMS kinds (awskms, gcpckms, azurekeyvault, transit) are
// registered by package github.com/tokenvault/tokenvault/contrib/cloudkms,
// a module of its own, so that their client modules (the AWS, Google and
// Azure SDKs, Vault's API client, gRPC) stay out of this module's graph;
// its cmd/tokenvault is the tokenvault with them. This binary, asked for
// one, says so.
//
// The package is internal: its API serves this repository's binaries
// (contrib/cloudkms lies under the module's path, so it may import it) and
// makes no promise to others.
package cli
