package auditlog_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tokenvault/tokenvault"
	"github.com/tokenvault/tokenvault/auditchain"
	"github.com/tokenvault/tokenvault/internal/vaulttest"
	"github.com/tokenvault/tokenvault/store"
	"github.com/tokenvault/tokenvault/store/bolt"
	"github.com/tokenvault/tokenvault/store/postgres"
)

// rawKV is write access to the store below a Vault, key by key: what an
// operator with the database (and without the vault's keys) has.
type rawKV interface {
	get(t *testing.T, key string) []byte
	put(t *testing.T, key string, value []byte)
	del(t *testing.T, key string)
	// keys lists the keys under prefix, in order.
	keys(t *testing.T, prefix string) []string
}

// storeKV is raw access through the store.Store the Vault was opened on
// (bbolt here): its transactions are below the vault's barrier.
type storeKV struct{ s store.Store }

func (k storeKV) get(t *testing.T, key string) []byte {
	t.Helper()
	var out []byte
	if err := k.s.View(context.Background(), func(tx store.Tx) error {
		v, err := tx.Get([]byte(key))
		out = slices.Clone(v)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func (k storeKV) put(t *testing.T, key string, value []byte) {
	t.Helper()
	if err := k.s.Update(context.Background(), func(tx store.Tx) error { return tx.Put([]byte(key), value) }); err != nil {
		t.Fatal(err)
	}
}

func (k storeKV) del(t *testing.T, key string) {
	t.Helper()
	if err := k.s.Update(context.Background(), func(tx store.Tx) error { return tx.Delete([]byte(key)) }); err != nil {
		t.Fatal(err)
	}
}

func (k storeKV) keys(t *testing.T, prefix string) []string {
	t.Helper()
	var out []string
	if err := k.s.View(context.Background(), func(tx store.Tx) error {
		return tx.Scan([]byte(prefix), nil, 0, func(key, _ []byte) error {
			out = append(out, string(key))
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// pgKV is raw SQL on the kv table of a PostgreSQL store's schema.
type pgKV struct {
	conn  *pgx.Conn
	table string
}

func (k pgKV) get(t *testing.T, key string) []byte {
	t.Helper()
	var v []byte
	err := k.conn.QueryRow(context.Background(), "SELECT value FROM "+k.table+" WHERE key = $1", []byte(key)).Scan(&v)
	if err != nil && err != pgx.ErrNoRows {
		t.Fatal(err)
	}
	return v
}

func (k pgKV) put(t *testing.T, key string, value []byte) {
	t.Helper()
	_, err := k.conn.Exec(context.Background(), "INSERT INTO "+k.table+" (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value", []byte(key), value)
	if err != nil {
		t.Fatal(err)
	}
}

func (k pgKV) del(t *testing.T, key string) {
	t.Helper()
	if _, err := k.conn.Exec(context.Background(), "DELETE FROM "+k.table+" WHERE key = $1", []byte(key)); err != nil {
		t.Fatal(err)
	}
}

func (k pgKV) keys(t *testing.T, prefix string) []string {
	t.Helper()
	rows, err := k.conn.Query(context.Background(), "SELECT key FROM "+k.table+" WHERE substring(key from 1 for $2) = $1 ORDER BY key", []byte(prefix), len(prefix))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// tamperStores are the stores the tamper tests alter: bbolt through the
// store object, PostgreSQL with SQL on its table.
var tamperStores = []struct {
	name string
	open func(t *testing.T) (store.Store, rawKV)
}{
	{"bolt", func(t *testing.T) (store.Store, rawKV) {
		s, err := bolt.Open(filepath.Join(t.TempDir(), "vault.db"), &bolt.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		return s, storeKV{s}
	}},
	{"postgres", func(t *testing.T) (store.Store, rawKV) {
		schema := vaulttest.FreshPGSchema(t)
		ctx := context.Background()
		s, err := postgres.Open(ctx, vaulttest.PGDSN, &postgres.Options{Schema: schema})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Migrate(ctx); err != nil {
			s.Close()
			t.Fatal(err)
		}
		conn, err := pgx.Connect(ctx, vaulttest.PGDSN)
		if err != nil {
			s.Close()
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close(context.Background()) })
		return s, pgKV{conn, pgx.Identifier{schema, "kv"}.Sanitize()}
	}},
}

// chainFixture is a Vault whose tenant has a chain of lines, and the
// chain's layout as the store holds it.
type chainFixture struct {
	e   *vaulttest.Env
	kv  rawKV
	tid string
	// suffix[seq] is line seq's key after log/ (<nanos>/<id>).
	suffix map[uint64]string
	head   uint64
}

func (f *chainFixture) lineKey(seq uint64) string   { return f.logKey(f.suffix[seq]) }
func (f *chainFixture) logKey(suffix string) string { return "tenant/" + f.tid + "/log/" + suffix }
func (f *chainFixture) indexPrefix() string         { return "tenant/" + f.tid + "/idx/chain-seq/" }
func (f *chainFixture) indexKey(seq uint64, suffix string) string {
	return fmt.Sprintf("%s%016x/%s", f.indexPrefix(), seq, suffix)
}
func (f *chainFixture) headKey() string { return "tenant/" + f.tid + "/chain/head" }
func (f *chainFixture) linkKey(suffix string) string {
	return "tenant/" + f.tid + "/chain_link/" + suffix
}
func (f *chainFixture) checkpointKey(seq uint64) string {
	return fmt.Sprintf("tenant/%s/chain_checkpoint/%016x", f.tid, seq)
}
func (f *chainFixture) id(seq uint64) string {
	return f.suffix[seq][strings.LastIndexByte(f.suffix[seq], '/')+1:]
}

// newChainFixture opens a Vault on a fresh store of kind sk and writes a
// chain: the tenant's creation, an application, then tokens created and
// read, each call a second after the last, so each line of a call has a
// time of its own in its key. Reads on bbolt are appended and chained by
// the linker, whose pass VerifyAuditChain runs first.
func newChainFixture(t *testing.T, open func(t *testing.T) (store.Store, rawKV), tokens int) *chainFixture {
	t.Helper()
	s, kv := open(t)
	e := vaulttest.NewEnvOn(t, s)
	ctx := context.Background()
	app := e.App(t, tokenvault.Private, tokenvault.PermTokenCreate, tokenvault.PermTokenRead)
	for i := range tokens {
		e.Clock.Advance(time.Second)
		tok, err := e.V.CreateToken(ctx, app.Key, tokenvault.TokenRequest{Type: "token", Data: "d" + strconv.Itoa(i)})
		if err != nil {
			t.Fatal(err)
		}
		e.Clock.Advance(time.Second)
		if _, err := e.V.GetToken(ctx, app.Key, tok.ID); err != nil {
			t.Fatal(err)
		}
	}
	f := &chainFixture{e: e, kv: kv, tid: e.Boot.Tenant.ID}
	f.layout(t)
	return f
}

// layout verifies the chain once (which chains the appended reads),
// signs its head, verifies it again (sound: OK, no problem) and reads
// its index.
func (f *chainFixture) layout(t *testing.T) {
	t.Helper()
	f.verify(t)
	if _, err := f.e.V.SignAuditChain(context.Background(), f.tid); err != nil {
		t.Fatal(err)
	}
	r := f.verify(t)
	if !r.OK || len(r.Problems) != 0 || r.SignedThrough != r.LastSeq || r.Checkpoints == 0 {
		t.Fatalf("the untouched chain: %+v", r)
	}
	f.suffix = map[uint64]string{}
	for _, k := range f.kv.keys(t, f.indexPrefix()) {
		rest := strings.TrimPrefix(k, f.indexPrefix())
		seq, err := strconv.ParseUint(rest[:16], 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		f.suffix[seq] = rest[17:]
	}
	f.head = uint64(len(f.suffix))
	if r.LastSeq != f.head || r.Lines != len(f.suffix) {
		t.Fatalf("report %+v for an index of %d lines", r, len(f.suffix))
	}
}

func (f *chainFixture) verify(t *testing.T) *auditchain.Report {
	t.Helper()
	r, err := f.e.V.VerifyAuditChain(context.Background(), f.tid)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// wantProblems fails unless r reports exactly the problems want (kind,
// seq, last seq and, where given, line id), besides an unsigned tail: a
// chain cut short of its checkpoint has its lines before the cut
// unsigned too, which the Verifier reports as well.
func wantProblems(t *testing.T, r *auditchain.Report, want ...auditchain.Problem) {
	t.Helper()
	var got []auditchain.Problem
	for _, p := range r.Problems {
		if p.Kind != auditchain.UnsignedTail {
			got = append(got, p)
		}
	}
	ok := len(got) == len(want) && r.OK == (len(r.Problems) == 0)
	for i := range want {
		if !ok {
			break
		}
		g, w := got[i], want[i]
		ok = g.Kind == w.Kind && g.Seq == w.Seq && g.LastSeq == w.LastSeq && (w.LineID == "" || g.LineID == w.LineID)
	}
	if !ok {
		t.Errorf("problems %v (ok %v), want %v", r.Problems, r.OK, want)
	}
}

// TestVerifyAuditChainTampered alters, deletes, reorders, inserts and
// truncates lines of a chain directly in the store (bbolt, PostgreSQL),
// each in a fresh store, and holds VerifyAuditChain to the exact
// sequence number of each.
func TestVerifyAuditChainTampered(t *testing.T) {
	const k = 7 // a token's creation line: the only line of its call
	for _, st := range tamperStores {
		t.Run(st.name, func(t *testing.T) {
			for _, tc := range []struct {
				name   string
				tamper func(t *testing.T, f *chainFixture) []auditchain.Problem
			}{
				{"untouched", func(t *testing.T, f *chainFixture) []auditchain.Problem { return nil }},
				{"alter a byte", func(t *testing.T, f *chainFixture) []auditchain.Problem {
					v := f.kv.get(t, f.lineKey(k))
					v[len(v)/2] ^= 1
					f.kv.put(t, f.lineKey(k), v)
					return []auditchain.Problem{{Kind: auditchain.Altered, Seq: k, LineID: f.id(k)}}
				}},
				{"replace by another line", func(t *testing.T, f *chainFixture) []auditchain.Problem {
					f.kv.put(t, f.lineKey(k), f.kv.get(t, f.lineKey(k+1)))
					return []auditchain.Problem{{Kind: auditchain.Altered, Seq: k, LineID: f.id(k)}}
				}},
				{"delete a line", func(t *testing.T, f *chainFixture) []auditchain.Problem {
					f.kv.del(t, f.lineKey(k))
					return []auditchain.Problem{{Kind: auditchain.Missing, Seq: k}}
				}},
				{"delete an index entry", func(t *testing.T, f *chainFixture) []auditchain.Problem {
					f.kv.del(t, f.indexKey(k, f.suffix[k]))
					return []auditchain.Problem{{Kind: auditchain.Missing, Seq: k, LineID: f.id(k)}}
				}},
				{"delete a range", func(t *testing.T, f *chainFixture) []auditchain.Problem {
					for s := uint64(k); s < k+4; s++ {
						f.kv.del(t, f.lineKey(s))
						f.kv.del(t, f.indexKey(s, f.suffix[s]))
					}
					return []auditchain.Problem{{Kind: auditchain.Missing, Seq: k, LastSeq: k + 3}}
				}},
				{"swap two index entries", func(t *testing.T, f *chainFixture) []auditchain.Problem {
					a, b := uint64(k), uint64(k+2)
					f.kv.del(t, f.indexKey(a, f.suffix[a]))
					f.kv.del(t, f.indexKey(b, f.suffix[b]))
					f.kv.put(t, f.indexKey(a, f.suffix[b]), []byte{})
					f.kv.put(t, f.indexKey(b, f.suffix[a]), []byte{})
					return []auditchain.Problem{
						{Kind: auditchain.Reordered, Seq: a, LineID: f.id(b)},
						{Kind: auditchain.Reordered, Seq: b, LineID: f.id(a)},
					}
				}},
				{"insert a copy", func(t *testing.T, f *chainFixture) []auditchain.Problem {
					// Under a new key right after line k's (same time, a
					// greater id): it follows line k in the log.
					suffix := f.suffix[k] + "~"
					f.kv.put(t, f.logKey(suffix), f.kv.get(t, f.lineKey(k)))
					return []auditchain.Problem{{Kind: auditchain.Inserted, Seq: k + 1, LineID: f.id(k) + "~"}}
				}},
				{"alter a link record", func(t *testing.T, f *chainFixture) []auditchain.Problem {
					v := f.kv.get(t, f.linkKey(f.suffix[k]))
					v[len(v)/2] ^= 1
					f.kv.put(t, f.linkKey(f.suffix[k]), v)
					return []auditchain.Problem{{Kind: auditchain.Altered, Seq: k, LineID: f.id(k)}}
				}},
				{"replace a link record by another", func(t *testing.T, f *chainFixture) []auditchain.Problem {
					f.kv.put(t, f.linkKey(f.suffix[k]), f.kv.get(t, f.linkKey(f.suffix[k+1])))
					return []auditchain.Problem{{Kind: auditchain.Altered, Seq: k, LineID: f.id(k)}}
				}},
				{"delete a link record", func(t *testing.T, f *chainFixture) []auditchain.Problem {
					f.kv.del(t, f.linkKey(f.suffix[k]))
					return []auditchain.Problem{{Kind: auditchain.Altered, Seq: k, LineID: f.id(k)}}
				}},
				{"insert a copy with its link record", func(t *testing.T, f *chainFixture) []auditchain.Problem {
					suffix := f.suffix[k] + "~"
					f.kv.put(t, f.logKey(suffix), f.kv.get(t, f.lineKey(k)))
					f.kv.put(t, f.linkKey(suffix), f.kv.get(t, f.linkKey(f.suffix[k])))
					return []auditchain.Problem{{Kind: auditchain.Inserted, Seq: k + 1, LineID: f.id(k) + "~"}}
				}},
				{"alter the head", func(t *testing.T, f *chainFixture) []auditchain.Problem {
					v := f.kv.get(t, f.headKey())
					v[len(v)-2] ^= 1
					f.kv.put(t, f.headKey(), v)
					return []auditchain.Problem{{Kind: auditchain.Altered, Seq: f.head}}
				}},
				{"delete the last checkpoint", func(t *testing.T, f *chainFixture) []auditchain.Problem {
					f.kv.del(t, f.checkpointKey(f.head))
					return []auditchain.Problem{{Kind: auditchain.BadCheckpoint, Seq: f.head}}
				}},
				{"alter the last checkpoint", func(t *testing.T, f *chainFixture) []auditchain.Problem {
					v := f.kv.get(t, f.checkpointKey(f.head))
					v[len(v)-1] ^= 1
					f.kv.put(t, f.checkpointKey(f.head), v)
					return []auditchain.Problem{{Kind: auditchain.BadCheckpoint, Seq: f.head}}
				}},
				{"truncate the tail, an older head put back", func(t *testing.T, f *chainFixture) []auditchain.Problem {
					// The head as it was at line k, then more lines, signed.
					old := f.kv.get(t, f.headKey())
					oldHead := f.head
					ctx := context.Background()
					if err := vaulttest.LogLines(ctx, f.e.V, f.tid, 5, 5); err != nil {
						t.Fatal(err)
					}
					f.layout(t)
					for s := oldHead + 1; s <= f.head; s++ {
						f.kv.del(t, f.lineKey(s))
						f.kv.del(t, f.indexKey(s, f.suffix[s]))
					}
					f.kv.put(t, f.headKey(), old)
					return []auditchain.Problem{{Kind: auditchain.Missing, Seq: oldHead + 1, LastSeq: f.head}}
				}},
				{"truncate the tail", func(t *testing.T, f *chainFixture) []auditchain.Problem {
					for s := f.head - 2; s <= f.head; s++ {
						f.kv.del(t, f.lineKey(s))
						f.kv.del(t, f.indexKey(s, f.suffix[s]))
					}
					return []auditchain.Problem{{Kind: auditchain.Missing, Seq: f.head - 2, LastSeq: f.head}}
				}},
			} {
				t.Run(tc.name, func(t *testing.T) {
					f := newChainFixture(t, st.open, 8)
					if f.head < k+5 {
						t.Fatalf("a chain of %d lines", f.head)
					}
					if n := len(f.kv.keys(t, f.logKey(f.suffix[k][:16]))); n != 1 {
						t.Fatalf("line %d shares its time with %d others", k, n-1)
					}
					want := tc.tamper(t, f)
					wantProblems(t, f.verify(t), want...)
				})
			}
		})
	}
}
