package tokenvault

import "context"

// pruneLogs removes the audit log lines older than Options.Retention.Logs
// from every tenant, and returns how many it removed
// (auditlog.Retention.Prune, which says how; the sweeper runs it).
func (v *Vault) pruneLogs(ctx context.Context) (int, error) { return v.retention.Prune(ctx) }
