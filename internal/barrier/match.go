package barrier

import (
	"strings"
	"time"
)

// Matching keys without building them. A record codec stores the index
// entries a record keeps of its own (a token's Indexes) in a short form
// when they are the ones its constructors would build: these say whether
// they are, without allocating (but for the time keys), so that encoding a
// record costs no string per entry. Each is the inverse of a constructor.

// IsRecord reports whether k is tk.Record(kind, id).
func (tk TenantKeys) IsRecord(k Key, kind, id string) bool {
	return k.tenant == tk.id && hasParts(k.s, "tenant/", tk.id, "/", kind, "/", id)
}

// IsFingerprintEntry reports whether k is tk.FingerprintIndex(fp).Key(id).
func (tk TenantKeys) IsFingerprintEntry(k, fp, id string) bool {
	return hasParts(k, "tenant/", tk.id, "/idx/fp/", fp, "/", id)
}

// IsExpiry reports whether k is tk.Expiry(at, kind, id).
func (tk TenantKeys) IsExpiry(k string, at time.Time, kind, id string) bool {
	return strings.HasPrefix(k, ExpirySchedule.s) && hasParts(k, ExpirySchedule.s, TimeKey(at), "/", tk.id, "/", kind, "/", id)
}

// IsCVCDue reports whether k is tk.CVCDue(at, id).
func (tk TenantKeys) IsCVCDue(k string, at time.Time, id string) bool {
	return strings.HasPrefix(k, CVCSchedule.s) && hasParts(k, CVCSchedule.s, TimeKey(at), "/", tk.id, "/", id)
}

// IndexEntryOf splits k, an entry of one of tk's indexes for id
// (tk.Index(name).Key(value + "/" + id)), into the index's name and the
// value; false when k is no such entry.
func (tk TenantKeys) IndexEntryOf(k, id string) (name, value string, ok bool) {
	n := len("tenant/") + len(tk.id) + len("/idx/")
	if len(k) <= n+len(id)+1 || !hasParts(k[:n], "tenant/", tk.id, "/idx/") || !hasParts(k[len(k)-len(id)-1:], "/", id) {
		return "", "", false
	}
	name, value, ok = strings.Cut(k[n:len(k)-len(id)-1], "/")
	return name, value, ok && name != ""
}

// hasParts reports whether s is the concatenation of parts, without
// building it.
func hasParts(s string, parts ...string) bool {
	for _, p := range parts {
		if len(s) < len(p) || s[:len(p)] != p {
			return false
		}
		s = s[len(p):]
	}
	return s == ""
}
