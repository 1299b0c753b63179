package tokenvault

import (
	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The stored form of the progress of a one-time scan of every tenant's
// tokens, sealed with the system keyring: the scan giving cards stored
// before cvc retention their schedule (legacyCVCScan, tokens_cvc.go) at
// sys/cvcscan, and the build of the token list indexes (listBuild,
// tokens_lists_build.go) at sys/lists. Both kinds share one layout and
// keep a format version each.
//
// Format version 1 (binary; see records.go and records_parts.go):
//
//	0x01           format version
//	uvarint flags  1 done
//	str   tenant   the last token record visited: its tenant
//	str   after    and its store key
//
// Version 0 is the JSON written before (scanProgressV0); it still reads,
// and the scan's next step writes version 1 (a finished list build is
// left as it is: it is read once per Open, and the re-seal pass does not
// walk sys/).
const (
	cvcScanFormat   = 1
	listBuildFormat = 1
)

const scanDone = 1

// scanProgress is where a scan of every tenant's tokens stands.
type scanProgress struct {
	// Tenant and After are the last token record visited.
	Tenant string
	After  string
	Done   bool
}

// legacyCVCScan is the progress of scheduleLegacyCVCs, at
// barrier.SysCVCScan.
type legacyCVCScan scanProgress

// listBuild is the progress of buildTokenLists, at barrier.SysLists.
type listBuild scanProgress

func (s *legacyCVCScan) AppendRecord(b []byte, _ barrier.Key) ([]byte, error) {
	return (*scanProgress)(s).append(b, cvcScanFormat), nil
}

func (s *legacyCVCScan) DecodeRecord(_ barrier.Key, b []byte) error {
	return (*scanProgress)(s).decode(b, cvcScanFormat, "cvc scan")
}

func (s *listBuild) AppendRecord(b []byte, _ barrier.Key) ([]byte, error) {
	return (*scanProgress)(s).append(b, listBuildFormat), nil
}

func (s *listBuild) DecodeRecord(_ barrier.Key, b []byte) error {
	return (*scanProgress)(s).decode(b, listBuildFormat, "list build")
}

// append appends s in format version format.
func (s *scanProgress) append(b []byte, format byte) []byte {
	var flags uint64
	if s.Done {
		flags |= scanDone
	}
	return unit.AppendStr(unit.AppendStr(appendUvarint(append(b, format), flags), s.Tenant), s.After)
}

// decode sets s from b, in format version format or the JSON of version 0;
// kind names the record in errors.
func (s *scanProgress) decode(b []byte, format byte, kind string) error {
	if unit.IsJSONV0(b) {
		var v scanProgressV0
		if err := unit.DecodeJSONV0(b, &v, kind); err != nil {
			return err
		}
		*s = scanProgress(v)
		return nil
	}
	d, err := unit.BinaryRecord(b, format, kind)
	if err != nil {
		return err
	}
	flags := d.Uvarint()
	*s = scanProgress{Tenant: d.Str(), After: d.Str(), Done: flags&scanDone != 0}
	d.CheckFlags(flags, scanDone<<1)
	if err := d.End(); err != nil {
		*s = scanProgress{}
		return err
	}
	return nil
}

// scanProgressV0 is a scan's progress as format version 0 stored it:
// read, never written (testdata/records/cvcscan-v0.json, lists-v0.json).
type scanProgressV0 struct {
	Tenant string `json:"tenant,omitempty"`
	After  string `json:"after,omitempty"`
	Done   bool   `json:"done,omitempty"`
}

// The version 0 types of the two kinds, as the record tests name them.
type (
	legacyCVCScanV0 = scanProgressV0
	listBuildV0     = scanProgressV0
)
