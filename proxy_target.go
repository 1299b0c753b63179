package tokenvault

import (
	"net/url"
	"strings"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// The destination of a proxied call is the proxy's destination_url with
// the caller's path suffix appended and its query merged. The suffix is
// escaped segment by segment, so a "?" or "#" stays inside its segment;
// its segments are those of the escaped form the caller sent (RawPath)
// when there is one, so an encoded "/" stays inside its segment too.
// "." or ".." segments of the decoded suffix are refused, an encoded "/"
// counting as a separator there, so the call never leaves the
// destination's path, even at a destination that decodes "%2F".

// checkProxyPath validates the path suffix of a proxy call: "" or
// starting with "/", without "." or ".." segments.
func checkProxyPath(p string) error {
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

// EscapedPath is Path as it goes on the wire, as url.URL's EscapedPath:
// RawPath when that is an escaping of Path, and otherwise Path with each
// segment escaped. Path must be "" or start with "/".
func (c ProxyCall) EscapedPath() string {
	if decoded, err := url.PathUnescape(c.RawPath); err == nil && strings.HasPrefix(c.RawPath, "/") && decoded == c.Path {
		return c.RawPath
	}
	segs := strings.Split(c.Path, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// proxyTarget builds the URL a proxy call goes to; suffix is the call's
// EscapedPath.
func proxyTarget(destination, suffix, rawQuery string) (*url.URL, error) {
	u, err := url.Parse(destination)
	if err != nil {
		return nil, unit.Errorf(Invalid, "the proxy's destination_url is not a URL") // checked on save; never quoted
	}
	if suffix != "" {
		segs := strings.Split(suffix[1:], "/")
		for i, s := range segs {
			// Decoded and escaped again: every spelling goes out alike.
			dec, err := url.PathUnescape(s)
			if err != nil {
				return nil, unit.Errorf(Invalid, "the request cannot be forwarded")
			}
			segs[i] = url.PathEscape(dec)
		}
		escaped := strings.TrimSuffix(u.EscapedPath(), "/") + "/" + strings.Join(segs, "/")
		decoded, err := url.PathUnescape(escaped)
		if err != nil {
			return nil, unit.Errorf(Invalid, "the request cannot be forwarded")
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
