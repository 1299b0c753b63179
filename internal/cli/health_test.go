package cli

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestHealthAndReadiness(t *testing.T) {
	addr, _, stop := start(t, t.TempDir(), nil)
	defer stop()
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, body := get(t, "http://"+addr+path, ""); code != 200 || strings.TrimSpace(body) != "ok" {
			t.Errorf("GET %s = %d %q", path, code, body)
		}
	}
	if code, _ := get(t, "http://"+addr+"/applications", ""); code != 401 {
		t.Errorf("the API behind the probes = %d, want 401 without a key", code)
	}
}

// selfSigned writes a certificate and key for 127.0.0.1 and returns their
// paths and a pool trusting the certificate.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "tokenvault-test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}

func TestTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir)
	addr, out, stop := start(t, filepath.Join(dir, "data"), map[string]string{"TOKENVAULT_TLS_CERT": certFile, "TOKENVAULT_TLS_KEY": keyFile})
	defer stop()
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	res, err := c.Get("https://" + addr + "/healthz")
	if err != nil {
		t.Fatalf("HTTPS: %v", err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || strings.TrimSpace(string(b)) != "ok" || res.TLS == nil {
		t.Errorf("GET /healthz over TLS = %d %q", res.StatusCode, b)
	}
	if !strings.Contains(out.String(), "https://") {
		t.Errorf("the log does not say https:\n%s", out)
	}
	err = run(context.Background(), []string{"-tls-cert", certFile}, func(string) string { return "" }, io.Discard, io.Discard, nil)
	if err == nil || !strings.Contains(err.Error(), "go together") {
		t.Errorf("-tls-cert alone = %v", err)
	}
}
