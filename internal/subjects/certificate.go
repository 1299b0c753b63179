package subjects

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// KindErasure is the record kind of the erasure certificates:
// tenant/<tid>/erasure/<lookup>/<certificate id>, lookup the subject's
// keyed hash (Lookup), so that a subject's certificates are found by it
// and the key names no subject.
const KindErasure = "erasure"

// CertificateKey is where certificate id of the subject lookup is kept.
func CertificateKey(tid, lookup, id string) barrier.Key {
	return CertificatesOf(tid, lookup).Key(id)
}

// CertificatesOf is the prefix of the subject's certificates, in id (so
// time) order.
func CertificatesOf(tid, lookup string) barrier.Prefix {
	return barrier.Tenant(tid).Records(KindErasure).Sub(lookup + "/")
}

// CertificateRecord is an erasure certificate as stored: a signed
// document, kept in the JSON it is served and verified in.
//
// Format version 1: the byte 0x01, then the certificate's JSON
// (auditchain.ErasureCertificate). testdata/records/erasure-v1.bin is one.
type CertificateRecord struct {
	Cert auditchain.ErasureCertificate
}

// certificateFormat is CertificateRecord's format version.
const certificateFormat = 1

func (r *CertificateRecord) AppendRecord(b []byte, _ barrier.Key) ([]byte, error) {
	j, err := json.Marshal(&r.Cert)
	if err != nil {
		return b, fmt.Errorf("%w: erasure certificate: %v", unit.ErrRecord, err)
	}
	return append(append(b, certificateFormat), j...), nil
}

func (r *CertificateRecord) DecodeRecord(_ barrier.Key, b []byte) error {
	d, err := unit.BinaryRecord(b, certificateFormat, "erasure certificate")
	if err != nil {
		return err
	}
	if len(b) < 1 {
		return d.End()
	}
	*r = CertificateRecord{}
	if err := json.Unmarshal(b[1:], &r.Cert); err != nil {
		return fmt.Errorf("%w: erasure certificate: %v", unit.ErrRecord, err)
	}
	return nil
}

// LatestCertificate is the subject's last erasure certificate, nil when
// it was never erased.
func LatestCertificate(t *unit.Tx, tid, lookup string) (*auditchain.ErasureCertificate, error) {
	var last barrier.Key
	found := false
	err := t.ScanKeys(CertificatesOf(tid, lookup), func(k barrier.Key, _ string) error {
		last, found = k, true
		return nil
	})
	if err != nil || !found {
		return nil, err
	}
	var rec CertificateRecord
	ok, err := t.GetRecord(last, &rec)
	if err != nil || !ok {
		return nil, err
	}
	return &rec.Cert, nil
}

// StoredCertificate is a certificate with the subject lookup it is
// filed under.
type StoredCertificate struct {
	Lookup string
	Cert   auditchain.ErasureCertificate
}

// Certificates returns every erasure certificate of tenant tid.
func Certificates(t *unit.Tx, tid string) ([]StoredCertificate, error) {
	prefix := barrier.Tenant(tid).Records(KindErasure)
	kvs, err := t.ScanValues(prefix)
	if err != nil {
		return nil, err
	}
	out := make([]StoredCertificate, 0, len(kvs))
	for _, kv := range kvs {
		var rec CertificateRecord
		if err := t.OpenRecord(kv.Key, kv.Raw, &rec); err != nil {
			return nil, err
		}
		lookup, _, _ := strings.Cut(strings.TrimPrefix(kv.Key.String(), prefix.String()), "/")
		out = append(out, StoredCertificate{Lookup: lookup, Cert: rec.Cert})
	}
	return out, nil
}
