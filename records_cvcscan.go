package tokenvault

import "github.com/tokenvault/tokenvault/internal/barrier"

// The stored form of the progress of the one scan giving cards stored
// before cvc retention their schedule (legacyCVCScan, tokens_cvc.go), at
// sys/cvcscan, sealed with the system keyring.
//
// Format version 1 (binary; see records.go and records_parts.go):
//
//	0x01           format version
//	uvarint flags  1 done
//	str   tenant   the last token record visited: its tenant
//	str   after    and its store key
//
// Version 0 is the JSON written before (legacyCVCScanV0); it still reads,
// and the scan's next step writes version 1.
const cvcScanFormat = 1

const scanDone = 1

// legacyCVCScan is the progress of scheduleLegacyCVCs, stored (sealed with
// the system keyring) at sysCVCScanKey.
type legacyCVCScan struct {
	// Tenant and After are the last token record visited.
	Tenant string
	After  string
	Done   bool
}

func (s *legacyCVCScan) appendRecord(b []byte, _ barrier.Key) ([]byte, error) {
	return appendScan(append(b, cvcScanFormat), s.Tenant, s.After, s.Done), nil
}

func (s *legacyCVCScan) decodeRecord(_ barrier.Key, b []byte) error {
	if isJSONV0(b) {
		var v legacyCVCScanV0
		if err := decodeJSONV0(b, &v, "cvc scan"); err != nil {
			return err
		}
		*s = legacyCVCScan(v)
		return nil
	}
	d, err := binaryRecord(b, cvcScanFormat, "cvc scan")
	if err != nil {
		return err
	}
	*s = legacyCVCScan{}
	s.Tenant, s.After, s.Done = d.scan()
	if err := d.end(); err != nil {
		*s = legacyCVCScan{}
		return err
	}
	return nil
}

// appendScan appends the progress of a scan of every tenant's tokens:
// flags (1 done), the tenant and the key last visited.
func appendScan(b []byte, tenant, after string, done bool) []byte {
	var flags uint64
	if done {
		flags |= scanDone
	}
	return appendStr(appendStr(appendUvarint(b, flags), tenant), after)
}

// scan reads what appendScan wrote.
func (r *recordReader) scan() (tenant, after string, done bool) {
	flags := r.uvarint()
	tenant, after = r.str(), r.str()
	r.checkFlags(flags, scanDone<<1)
	return tenant, after, flags&scanDone != 0
}

// legacyCVCScanV0 is a legacyCVCScan as format version 0 stored it: read,
// never written (testdata/records/cvcscan-v0.json).
type legacyCVCScanV0 struct {
	Tenant string `json:"tenant,omitempty"`
	After  string `json:"after,omitempty"`
	Done   bool   `json:"done,omitempty"`
}
