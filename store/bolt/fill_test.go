package bolt

import (
	"fmt"
	"strings"
	"testing"

	"go.etcd.io/bbolt"

	"github.com/tokenvault/tokenvault/store"
)

// TestAppendsFillPages: keys appended one Update at a time at the ends of
// several interleaved ranges (as the Vault writes records, log lines and
// their indexes under time-ordered ids) leave leaf pages mostly full: 74%
// here. With bbolt's default split at half a page they were 43% full.
func TestAppendsFillPages(t *testing.T) {
	s := openTemp(t, &Options{NoSync: true})
	defer s.Close()
	value := strings.Repeat("v", 400)
	for i := range 3000 {
		err := s.Update(t.Context(), func(tx store.Tx) error {
			for _, r := range []string{"a/log/", "a/record/", "a/zindex/"} {
				if err := tx.Put([]byte(fmt.Sprintf("%s%08d", r, i)), []byte(value)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var st bbolt.BucketStats
	s.db.View(func(btx *bbolt.Tx) error {
		st = btx.Bucket(bucketName).Stats()
		return nil
	})
	fill := float64(st.LeafInuse) / float64(st.LeafAlloc)
	t.Logf("%d keys on %d leaf pages: %.0f%% full", st.KeyN, st.LeafPageN, 100*fill)
	if fill < 0.65 {
		t.Errorf("leaf pages are %.0f%% full, want at least 65%%", 100*fill)
	}
}
