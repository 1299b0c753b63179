package cli

import (
	"fmt"
	"io"
	"os"
)

// The first start's management key is written to <data>/management.key
// (0600) and nowhere else that outlives the terminal: the log (stdout) is
// collected, shipped and kept, often as JSON lines a plain-text banner
// would break, and a container's stderr is collected as well. So the
// banner goes to stderr, and holds the key itself only when stderr is a
// terminal a person reads; otherwise it says where the key is.

// keyBanner tells the person starting the server where the management key
// of the tenant it just created is, on w (stderr).
func keyBanner(w io.Writer, tenantID, keyFile, key string) {
	if isTerminal(w) {
		fmt.Fprintf(w, "\nCreated tenant %s with a management application.\nIts API key (shown this once, on this terminal only; saved to %s, never logged):\n\n    %s\n\n", tenantID, keyFile, key)
		return
	}
	fmt.Fprintf(w, "\nCreated tenant %s with a management application.\nIts API key is in %s (0600); it is not printed, since this output is not a terminal.\n\n", tenantID, keyFile)
}

// isTerminal reports whether w is a character device (a terminal), not a
// file or a pipe to a log collector.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// managementKeyAttrs are the listening line's words about the management
// key: the key file when it is in the data directory, or that it is not
// (a restored or copied data directory, another instance of a PostgreSQL
// store): the tenants' keys are in the store, hashed, and only their
// holders have them.
func managementKeyAttrs(keyFile, base string) []any {
	if _, err := os.Stat(keyFile); err != nil {
		return []any{"management_key", "no management.key in this data directory (restored, copied, or another instance's): use a key a tenant holds, or create a tenant with: tokenvault tenant create NAME"}
	}
	return []any{"key_file", keyFile, "try", fmt.Sprintf("curl -H \"SVC-API-KEY: $(cat %s)\" %s/applications", keyFile, base)}
}
