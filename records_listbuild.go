package tokenvault

import "github.com/tokenvault/tokenvault/internal/barrier"

// The stored form of the progress of the one-time build of the token list
// indexes (listBuild, tokens_lists_build.go), at sys/lists, sealed with the
// system keyring.
//
// Format version 1 (binary; see records.go and records_cvcscan.go):
//
//	0x01           format version
//	uvarint flags  1 done
//	str   tenant   the last token record listed: its tenant
//	str   after    and its store key
//
// Version 0 is the JSON written before (listBuildV0); it still reads, and
// the build's next step writes version 1 (a built store is left as it
// is: it is read once per Open, and the re-seal pass does not walk sys/).
const listBuildFormat = 1

// listBuild is the progress of buildTokenLists, stored (sealed with the
// system keyring) at sysListsKey.
type listBuild struct {
	// Tenant and After are the last token record listed.
	Tenant string
	After  string
	Done   bool
}

func (s *listBuild) appendRecord(b []byte, _ barrier.Key) ([]byte, error) {
	return appendScan(append(b, listBuildFormat), s.Tenant, s.After, s.Done), nil
}

func (s *listBuild) decodeRecord(_ barrier.Key, b []byte) error {
	if isJSONV0(b) {
		var v listBuildV0
		if err := decodeJSONV0(b, &v, "list build"); err != nil {
			return err
		}
		*s = listBuild(v)
		return nil
	}
	d, err := binaryRecord(b, listBuildFormat, "list build")
	if err != nil {
		return err
	}
	*s = listBuild{}
	s.Tenant, s.After, s.Done = d.scan()
	if err := d.end(); err != nil {
		*s = listBuild{}
		return err
	}
	return nil
}

// listBuildV0 is a listBuild as format version 0 stored it: read, never
// written (testdata/records/lists-v0.json).
type listBuildV0 struct {
	Tenant string `json:"tenant,omitempty"`
	After  string `json:"after,omitempty"`
	Done   bool   `json:"done,omitempty"`
}
