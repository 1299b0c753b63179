package cloudkms

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// fakeTransit is Vault's transit engine, as far as the transit wrapper
// uses it: PUT (or POST) /v1/<mount>/encrypt/<key> with a base64
// plaintext answers a "vault:v<N>:<base64>" ciphertext, /decrypt/<key>
// the reverse; a request without the token is denied. Each key has
// versions (rotate adds one) and encrypts with the newest.
type fakeTransit struct {
	*httptest.Server
	token, mount, namespace string

	mu       sync.Mutex
	keys     map[string][]cipher.AEAD // key name -> versions (v1 first)
	requests atomic.Int64
	denied   atomic.Int64
	// echo makes denials quote the token they got, as a careless proxy
	// might: the server must still never print it.
	echo atomic.Bool
}

func newFakeTransit(t *testing.T, token, mount string) *fakeTransit {
	t.Helper()
	f := &fakeTransit{token: token, mount: mount, keys: map[string][]cipher.AEAD{}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

// rotate adds a version to key (creating the key).
func (f *fakeTransit) rotate(key string) {
	k := make([]byte, 32)
	rand.Read(k)
	b, _ := aes.NewCipher(k)
	g, _ := cipher.NewGCM(b)
	f.mu.Lock()
	f.keys[key] = append(f.keys[key], g)
	f.mu.Unlock()
}

func vaultError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string][]string{"errors": {msg}})
}

func (f *fakeTransit) serve(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	if r.Method != http.MethodPut && r.Method != http.MethodPost {
		vaultError(w, http.StatusMethodNotAllowed, "unsupported operation")
		return
	}
	if r.Header.Get("X-Vault-Token") != f.token || r.Header.Get("X-Vault-Namespace") != f.namespace {
		f.denied.Add(1)
		msg := "permission denied"
		if f.echo.Load() {
			msg += " for token " + r.Header.Get("X-Vault-Token")
		}
		vaultError(w, http.StatusForbidden, msg)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/v1/"+f.mount+"/")
	op, name, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 {
		vaultError(w, http.StatusNotFound, "no handler for route "+r.URL.Path)
		return
	}
	var in struct{ Plaintext, Ciphertext string }
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		vaultError(w, http.StatusBadRequest, err.Error())
		return
	}
	f.mu.Lock()
	versions := f.keys[name]
	f.mu.Unlock()
	if len(versions) == 0 {
		vaultError(w, http.StatusBadRequest, "encryption key not found")
		return
	}
	var data map[string]string
	switch op {
	case "encrypt":
		pt, err := base64.StdEncoding.DecodeString(in.Plaintext)
		if err != nil {
			vaultError(w, http.StatusBadRequest, "failed to base64-decode plaintext")
			return
		}
		g := versions[len(versions)-1]
		nonce := make([]byte, g.NonceSize())
		rand.Read(nonce)
		ct := g.Seal(nonce, nonce, pt, nil)
		data = map[string]string{"ciphertext": fmt.Sprintf("vault:v%d:%s", len(versions), base64.StdEncoding.EncodeToString(ct))}
	case "decrypt":
		parts := strings.Split(in.Ciphertext, ":")
		v, err := strconv.Atoi(strings.TrimPrefix(parts[min(1, len(parts)-1)], "v"))
		if len(parts) != 3 || parts[0] != "vault" || err != nil || v < 1 || v > len(versions) {
			vaultError(w, http.StatusBadRequest, "invalid ciphertext")
			return
		}
		ct, err := base64.StdEncoding.DecodeString(parts[2])
		g := versions[v-1]
		if err != nil || len(ct) < g.NonceSize() {
			vaultError(w, http.StatusBadRequest, "invalid ciphertext")
			return
		}
		pt, err := g.Open(nil, ct[:g.NonceSize()], ct[g.NonceSize():], nil)
		if err != nil {
			vaultError(w, http.StatusBadRequest, "cipher: message authentication failed")
			return
		}
		data = map[string]string{"plaintext": base64.StdEncoding.EncodeToString(pt)}
	default:
		vaultError(w, http.StatusNotFound, "no handler for route "+r.URL.Path)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"data": data})
}

// fakeAWSKMS is AWS KMS's JSON API (X-Amz-Target TrentService.*), as far
// as the awskms wrapper uses it: DescribeKey, Encrypt, Decrypt of one
// symmetric key, whose ARN it answers for its id or ARN.
type fakeAWSKMS struct {
	*httptest.Server
	keyID, arn string
	aead       cipher.AEAD
	requests   atomic.Int64
	signed     atomic.Int64 // requests with a SigV4 Authorization header
}

func newFakeAWSKMS(t *testing.T, keyID string) *fakeAWSKMS {
	t.Helper()
	k := make([]byte, 32)
	rand.Read(k)
	b, _ := aes.NewCipher(k)
	g, _ := cipher.NewGCM(b)
	f := &fakeAWSKMS{keyID: keyID, arn: "arn:aws:kms:eu-west-1:111122223333:key/" + keyID, aead: g}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func awsError(w http.ResponseWriter, typ, msg string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.WriteHeader(http.StatusBadRequest)
	json.NewEncoder(w).Encode(map[string]string{"__type": typ, "message": msg})
}

func (f *fakeAWSKMS) serve(w http.ResponseWriter, r *http.Request) {
	f.requests.Add(1)
	if strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 ") {
		f.signed.Add(1)
	}
	var in struct {
		KeyId          string
		Plaintext      []byte // base64 in JSON, as the API
		CiphertextBlob []byte
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		awsError(w, "SerializationException", err.Error())
		return
	}
	var out any
	switch r.Header.Get("X-Amz-Target") {
	case "TrentService.DescribeKey":
		if in.KeyId != f.keyID && in.KeyId != f.arn {
			awsError(w, "NotFoundException", "Key '"+in.KeyId+"' does not exist")
			return
		}
		out = map[string]any{"KeyMetadata": map[string]any{"KeyId": f.keyID, "Arn": f.arn, "Enabled": true}}
	case "TrentService.Encrypt":
		if in.KeyId != f.keyID && in.KeyId != f.arn {
			awsError(w, "NotFoundException", "Key '"+in.KeyId+"' does not exist")
			return
		}
		nonce := make([]byte, f.aead.NonceSize())
		rand.Read(nonce)
		out = map[string]any{"KeyId": f.arn, "CiphertextBlob": f.aead.Seal(nonce, nonce, in.Plaintext, []byte(f.arn))}
	case "TrentService.Decrypt":
		ct := in.CiphertextBlob
		if len(ct) < f.aead.NonceSize() {
			awsError(w, "InvalidCiphertextException", "")
			return
		}
		pt, err := f.aead.Open(nil, ct[:f.aead.NonceSize()], ct[f.aead.NonceSize():], []byte(f.arn))
		if err != nil {
			awsError(w, "InvalidCiphertextException", "")
			return
		}
		out = map[string]any{"KeyId": f.arn, "Plaintext": pt}
	default:
		awsError(w, "UnknownOperationException", "")
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	json.NewEncoder(w).Encode(out)
}
