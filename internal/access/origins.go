package access

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/tokenvault/tokenvault/internal/unit"
)

// MaxAllowedOrigins bounds a public application's allowed_origins: the
// list goes into a header of every hosted element frame.
const MaxAllowedOrigins = 20

var (
	originHost = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]*[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$`)
	originIPv6 = regexp.MustCompile(`^\[[0-9a-f:.]+\]$`)
)

// NormalizeOrigins checks the allowed_origins of an application of type
// typ and returns them normalized (lower case, without a default port),
// adding what is wrong to fe under allowed_origins[i]: only a public
// application may have any, at most MaxAllowedOrigins, each an origin as
// a browser sends it (http or https, a host, an optional port; no path,
// query, user or wildcard), none twice. Nil or empty gives nil.
//
// The result is safe to write into a Content-Security-Policy header: an
// origin holds no space, comma, semicolon or quote.
func NormalizeOrigins(typ ApplicationType, origins []string, fe unit.FieldErrors) []string {
	if len(origins) == 0 {
		return nil
	}
	if typ != Public {
		fe.Add("allowed_origins", "only public applications have allowed origins (a %s application's key is never in a browser)", typ)
		return nil
	}
	if len(origins) > MaxAllowedOrigins {
		fe.Add("allowed_origins", "must hold at most %d origins", MaxAllowedOrigins)
		return nil
	}
	out := make([]string, 0, len(origins))
	seen := map[string]bool{}
	for i, o := range origins {
		path := fmt.Sprintf("allowed_origins[%d]", i)
		n, err := NormalizeOrigin(o)
		switch {
		case err != nil:
			fe.Add(path, "%v", err)
		case seen[n]:
			fe.Add(path, "duplicate origin %q", n)
		default:
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// NormalizeOrigin returns o as a browser names an origin
// (scheme://host[:port], lower case, no default port), or an error saying
// what is wrong with it.
func NormalizeOrigin(o string) (string, error) {
	const shape = "must be an origin: http:// or https://, a host and an optional port, nothing after (https://shop.example)"
	if len(o) > 300 || unit.HasControl(o) || strings.ContainsAny(o, " *\\") {
		return "", fmt.Errorf("%s", shape)
	}
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Opaque != "" || u.User != nil ||
		u.Path != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(o, "#") || u.Host == "" {
		return "", fmt.Errorf("%s", shape)
	}
	host := strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if !originHost.MatchString(host) && !originIPv6.MatchString(host) {
		return "", fmt.Errorf("%s; its host must be ASCII (punycode for international names)", shape)
	}
	scheme := strings.ToLower(u.Scheme)
	out := scheme + "://" + host
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 || strings.HasPrefix(p, "0") {
			return "", fmt.Errorf("%s; its port must be 1 to 65535", shape)
		}
		if !(scheme == "http" && n == 80) && !(scheme == "https" && n == 443) {
			out += ":" + p
		}
	} else if strings.HasSuffix(u.Host, ":") {
		return "", fmt.Errorf("%s", shape)
	}
	return out, nil
}
