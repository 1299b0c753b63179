package outbound

import (
	"net/url"
	"strings"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// The destination of a proxied call is the proxy's destination_url with
// the caller's path suffix appended and its query merged. The suffix is
// escaped segment by segment, so a "?" or "#" stays inside its segment;
// its segments are those of the escaped form the caller sent (its raw
// path) when there is one, so an encoded "/" stays inside its segment
// too. "." or ".." segments of the decoded suffix are refused, an encoded
// "/" counting as a separator there, so the call never leaves the
// destination's path, even at a destination that decodes "%2F".

// CheckProxyPath validates the path suffix of a proxy call: "" or
// starting with "/", without "." or ".." segments. It returns an Invalid
// unit error on the field "path", which quotes nothing of the path.
func CheckProxyPath(p string) error {
	if p == "" {
		return nil
	}
	if !strings.HasPrefix(p, "/") {
		return unit.InvalidField("path", "must be empty or start with /")
	}
	for _, seg := range strings.Split(p[1:], "/") {
		if seg == "." || seg == ".." {
			return unit.InvalidField("path", `may not hold "." or ".." segments`)
		}
	}
	return nil
}

// EscapePath is path as it goes on the wire, as url.URL's EscapedPath:
// rawPath when that is an escaping of path, and otherwise path with each
// segment escaped. path must be "" or start with "/".
func EscapePath(path, rawPath string) string {
	if decoded, err := url.PathUnescape(rawPath); err == nil && strings.HasPrefix(rawPath, "/") && decoded == path {
		return rawPath
	}
	segs := strings.Split(path, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// ProxyTarget builds the URL a proxy call goes to: destination with the
// suffix (the call's EscapePath) appended segment by segment and rawQuery
// merged after its own query, without fragment. It returns an Invalid
// unit error that quotes nothing of the destination, which may hold a
// credential.
func ProxyTarget(destination, suffix, rawQuery string) (*url.URL, error) {
	u, err := url.Parse(destination)
	if err != nil {
		return nil, unit.Errorf(unit.Invalid, "the proxy's destination_url is not a URL") // checked on save; never quoted
	}
	if suffix != "" {
		segs := strings.Split(suffix[1:], "/")
		for i, s := range segs {
			// Decoded and escaped again: every spelling goes out alike.
			dec, err := url.PathUnescape(s)
			if err != nil {
				return nil, unit.Errorf(unit.Invalid, "the request cannot be forwarded")
			}
			segs[i] = url.PathEscape(dec)
		}
		escaped := strings.TrimSuffix(u.EscapedPath(), "/") + "/" + strings.Join(segs, "/")
		decoded, err := url.PathUnescape(escaped)
		if err != nil {
			return nil, unit.Errorf(unit.Invalid, "the request cannot be forwarded")
		}
		u.Path, u.RawPath = decoded, escaped
	}
	switch {
	case rawQuery == "":
	case u.RawQuery == "":
		u.RawQuery = rawQuery
	default:
		u.RawQuery += "&" + rawQuery
	}
	u.Fragment, u.RawFragment = "", ""
	return u, nil
}
