package cli

import (
	"context"
	"encoding/base64"
	"log/slog"

	"github.com/tokenvault/tokenvault"
)

// auditChainOptions are the checkpoint flags as the library takes them:
// the flags' 0 (off) is the library's negative, since its zero is the
// default.
func auditChainOptions(cfg config) tokenvault.AuditChainOptions {
	o := tokenvault.AuditChainOptions{CheckpointEvery: cfg.auditCheckpointEvery, CheckpointInterval: cfg.auditCheckpointInterval}
	if o.CheckpointEvery == 0 {
		o.CheckpointEvery = -1
	}
	if o.CheckpointInterval == 0 {
		o.CheckpointInterval = -1
	}
	return o
}

// logAuditKey logs, at start, the id and public key (base64) of the key
// that signs the audit chain's checkpoints, so that an auditor can pin it
// from the server's own output as well as from GET /audit/keys. Only the
// public key: the private key never leaves the Vault.
func logAuditKey(ctx context.Context, v *tokenvault.Vault, log *slog.Logger) error {
	keys, err := v.AuditKeys(ctx)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if k.RetiredAt == nil {
			log.Info("audit chain signing key", "key_id", k.ID, "algorithm", k.Algorithm,
				"public_key", base64.StdEncoding.EncodeToString(k.Key), "published_at", "/audit/keys", "retired_keys", len(keys)-1)
		}
	}
	return nil
}
