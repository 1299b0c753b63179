package tokenvault

import (
	"net/url"
	"strings"
)

// The destination of a proxied call is the proxy's destination_url with
// the caller's path suffix appended and its query merged. The suffix
// arrives decoded, so it is escaped segment by segment: a "?", "#" or
// encoded "/" the caller sent stays inside its segment, and "." or ".."
// segments are refused, so the call never leaves the destination's path.

// checkProxyPath validates the path suffix of a proxy call: "" or
// starting with "/", without "." or ".." segments.
func checkProxyPath(p string) error {
	if p == "" {
		return nil
	}
	if !strings.HasPrefix(p, "/") {
		return invalidField("path", "must be empty or start with /")
	}
	for _, seg := range strings.Split(p[1:], "/") {
		if seg == "." || seg == ".." {
			return invalidField("path", `may not hold "." or ".." segments`)
		}
	}
	return nil
}

// proxyTarget builds the URL a proxy call goes to.
func proxyTarget(destination, suffix, rawQuery string) (*url.URL, error) {
	u, err := url.Parse(destination)
	if err != nil {
		return nil, errorf(Invalid, "the proxy's destination_url is not a URL") // checked on save; never quoted
	}
	if suffix != "" {
		segs := strings.Split(suffix[1:], "/")
		for i, s := range segs {
			segs[i] = url.PathEscape(s)
		}
		escaped := strings.TrimSuffix(u.EscapedPath(), "/") + "/" + strings.Join(segs, "/")
		decoded, err := url.PathUnescape(escaped)
		if err != nil {
			return nil, errorf(Invalid, "the request cannot be forwarded")
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
