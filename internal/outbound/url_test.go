package outbound

import (
	"strings"
	"testing"
)

// TestURLProblems: a proxy's destination and a receiver's URL are held
// to their shape in every mode; http only to a loopback host where
// private destinations are allowed; a receiver's host must be public
// (however spelt) unless they are, and ASCII always.
func TestURLProblems(t *testing.T) {
	const (
		ok        = ""
		shape     = "must be an absolute https URL"
		creds     = "must not hold credentials (user@) or a fragment (#)"
		port      = "must have a port from 1 to 65535"
		plainHTTP = "must be https (http only for a loopback host, where the Vault allows private destinations)"
		private   = "must name a public host: not localhost, nor a loopback, private, link-local or reserved address"
		ascii     = "must name its host in ASCII: write an international domain name in its xn-- form; Unicode digits and dots are refused"
		long      = "must be at most 2048 characters"
	)
	for _, tc := range []struct {
		url                                        string
		destination, destinationLax, receiver, lax string
	}{
		{"https://hooks.example.com/in", ok, ok, ok, ok},
		{"ftp://hooks.example.com/in", shape, shape, shape, shape},
		{"/in", shape, shape, shape, shape},
		{"https://user:pw@hooks.example.com/in", creds, creds, creds, creds},
		{"https://hooks.example.com/in#x", creds, creds, creds, creds},
		{"https://hooks.example.com:0/in", port, port, port, port},
		{"http://hooks.example.com/in", plainHTTP, plainHTTP, plainHTTP, plainHTTP},
		{"http://localhost:8080/in", plainHTTP, ok, plainHTTP, ok},
		{"http://10.0.0.1/in", plainHTTP, plainHTTP, plainHTTP, plainHTTP},
		{"https://10.0.0.1/in", ok, ok, private, ok},
		{"https://[::ffff:127.0.0.1]/in", ok, ok, private, ok},
		{"https://localhost./in", ok, ok, private, ok},
		{"https://2130706433/in", ok, ok, private, ok},
		{"https://0x7f.1/in", ok, ok, private, ok},
		{"https://127.0.0.\u2460/in", ok, ok, ascii, ascii},
		{"https://hooks.example.com/" + strings.Repeat("a", 2048), ok, ok, long, long},
	} {
		for _, c := range []struct {
			name string
			got  string
			want string
		}{
			{"Policy{}.DestinationProblem", Policy{}.DestinationProblem(tc.url), tc.destination},
			{"Policy{AllowPrivate}.DestinationProblem", Policy{AllowPrivate: true}.DestinationProblem(tc.url), tc.destinationLax},
			{"Policy{}.ReceiverProblem", Policy{}.ReceiverProblem(tc.url), tc.receiver},
			{"Policy{AllowPrivate}.ReceiverProblem", Policy{AllowPrivate: true}.ReceiverProblem(tc.url), tc.lax},
		} {
			if c.got != c.want {
				t.Errorf("%s(%.60q) = %q, want %q", c.name, tc.url, c.got, c.want)
			}
		}
	}
}
