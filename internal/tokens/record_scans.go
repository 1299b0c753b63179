package tokens

import (
	"encoding/binary"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// The stored form of the progress of a one-time scan of every tenant's
// tokens, sealed with the system keyring: the scan giving cards stored
// before cvc retention their schedule (LegacyCVCScan, Service.ScheduleLegacyCVCs in
// cvc.go) at sys/cvcscan, and the build of the token list indexes
// (ListBuild, internal/tokens/listing's build) at sys/lists. Both kinds
// share one layout and keep a format version each.
//
// Format version 1 (binary; see docs/internals.md, "Stored records"):
//
//	0x01           format version
//	uvarint flags  1 done
//	str   tenant   the last token record visited: its tenant
//	str   after    and its store key
//
// Version 0 is the JSON written before (ScanProgressV0); it still reads,
// and the scan's next step writes version 1 (a finished list build is
// left as it is: it is read once per Open, and the re-seal pass does not
// walk sys/).
const (
	cvcScanFormat   = 1
	listBuildFormat = 1
)

const scanDone = 1

// ScanProgress is where a scan of every tenant's tokens stands.
type ScanProgress struct {
	// Tenant and After are the last token record visited.
	Tenant string
	After  string
	Done   bool
}

// LegacyCVCScan is the progress of the root's scheduleLegacyCVCs, at
// barrier.SysCVCScan.
type LegacyCVCScan ScanProgress

// ListBuild is the progress of listing.Lists.Build, at
// barrier.SysLists.
type ListBuild ScanProgress

func (s *LegacyCVCScan) AppendRecord(b []byte, _ barrier.Key) ([]byte, error) {
	return (*ScanProgress)(s).append(b, cvcScanFormat), nil
}

func (s *LegacyCVCScan) DecodeRecord(_ barrier.Key, b []byte) error {
	return (*ScanProgress)(s).decode(b, cvcScanFormat, "cvc scan")
}

func (s *ListBuild) AppendRecord(b []byte, _ barrier.Key) ([]byte, error) {
	return (*ScanProgress)(s).append(b, listBuildFormat), nil
}

func (s *ListBuild) DecodeRecord(_ barrier.Key, b []byte) error {
	return (*ScanProgress)(s).decode(b, listBuildFormat, "list build")
}

// append appends s in format version format.
func (s *ScanProgress) append(b []byte, format byte) []byte {
	var flags uint64
	if s.Done {
		flags |= scanDone
	}
	return unit.AppendStr(unit.AppendStr(binary.AppendUvarint(append(b, format), flags), s.Tenant), s.After)
}

// decode sets s from b, in format version format or the JSON of version 0;
// kind names the record in errors.
func (s *ScanProgress) decode(b []byte, format byte, kind string) error {
	if unit.IsJSONV0(b) {
		var v ScanProgressV0
		if err := unit.DecodeJSONV0(b, &v, kind); err != nil {
			return err
		}
		*s = ScanProgress(v)
		return nil
	}
	d, err := unit.BinaryRecord(b, format, kind)
	if err != nil {
		return err
	}
	flags := d.Uvarint()
	*s = ScanProgress{Tenant: d.Str(), After: d.Str(), Done: flags&scanDone != 0}
	d.CheckFlags(flags, scanDone<<1)
	if err := d.End(); err != nil {
		*s = ScanProgress{}
		return err
	}
	return nil
}

// ScanProgressV0 is a scan's progress as format version 0 stored it:
// read, never written (testdata/records/cvcscan-v0.json, lists-v0.json).
type ScanProgressV0 struct {
	Tenant string `json:"tenant,omitempty"`
	After  string `json:"after,omitempty"`
	Done   bool   `json:"done,omitempty"`
}

// The version 0 types of the two kinds, as the root's record tests name them.
type (
	LegacyCVCScanV0 = ScanProgressV0
	ListBuildV0     = ScanProgressV0
)
