package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/auditexport"
)

// auditSinks builds the audit sinks the flags configure (none: nil), and
// a function closing them, to call after the Vault is closed. Their names
// are the constants file, syslog and http: the names of their queues in
// the store and of their lag metrics.
func auditSinks(cfg config, getenv func(string) string) (sinks []tokenvault.AuditSink, closeSinks func(), err error) {
	var closers []func() error
	closeSinks = func() {
		for _, c := range closers {
			c()
		}
	}
	if cfg.auditFile != "" {
		f, err := auditexport.NewFile(cfg.auditFile, auditexport.FileOptions{MaxBytes: cfg.auditFileMaxBytes, Keep: cfg.auditFileKeep})
		if err != nil {
			return nil, nil, err
		}
		sinks, closers = append(sinks, f), append(closers, f.Close)
	}
	if cfg.auditSyslog != "" {
		s, err := auditexport.NewSyslog(cfg.auditSyslog, auditexport.SyslogOptions{})
		if err != nil {
			closeSinks()
			return nil, nil, fmt.Errorf("-audit-syslog: %w", err)
		}
		sinks, closers = append(sinks, s), append(closers, s.Close)
	}
	if cfg.auditHTTPURL != "" {
		secret, err := auditHTTPSecret(cfg, getenv)
		if err == nil {
			var h *auditexport.HTTP
			if h, err = auditexport.NewHTTP(cfg.auditHTTPURL, secret, auditexport.HTTPOptions{}); err == nil {
				sinks = append(sinks, h)
			}
		}
		if err != nil {
			closeSinks()
			return nil, nil, fmt.Errorf("-audit-http-url: %w", err)
		}
	} else if cfg.auditHTTPSecretFile != "" {
		closeSinks()
		return nil, nil, errors.New("-audit-http-secret-file needs -audit-http-url")
	}
	return sinks, closeSinks, nil
}

// auditHTTPSecret reads the HTTP sink's signing secret from
// -audit-http-secret-file or TOKENVAULT_AUDIT_HTTP_SECRET (never a flag:
// a command line is readable by every user of the machine).
func auditHTTPSecret(cfg config, getenv func(string) string) ([]byte, error) {
	secret := getenv("TOKENVAULT_AUDIT_HTTP_SECRET")
	if cfg.auditHTTPSecretFile != "" {
		if secret != "" {
			return nil, errors.New("give the secret in -audit-http-secret-file or TOKENVAULT_AUDIT_HTTP_SECRET, not both")
		}
		b, err := os.ReadFile(cfg.auditHTTPSecretFile)
		if err != nil {
			return nil, err
		}
		secret = strings.TrimRight(string(b), "\r\n")
	}
	if secret == "" {
		return nil, errors.New("the signing secret is missing: -audit-http-secret-file or TOKENVAULT_AUDIT_HTTP_SECRET")
	}
	return []byte(secret), nil
}
