package listing

import (
	"encoding/hex"
	"slices"
	"sync"

	"github.com/tokenvault/tokenvault/internal/barrier"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// List shapes: which one list index a token's entry goes to (the design
// is in doc.go).
//
// A token's shape is its type and its set of containers. Each shape the
// tenant has is named by a keyed HMAC of it (shapeMAC) and has a registry
// entry (barrier.TenantKeys.TokenShape, a tokens.ShapeRecord) written by the
// commit that lists its first token. The registry of a tenant holds at
// most maxListShapes shapes: a token of a shape the registry has no room
// for goes to its type's overflow list (overflowMAC), which no registry
// entry names, and marks its containers and their ancestors
// (overflowShape), so that only the container filters it may match walk
// the overflow lists. Which list a token is in follows from the store alone, at
// every instance: its shape's when the shape is registered, else (the
// registry was full when it was listed, and stays full: shapes are never
// removed while the tenant lives) its type's overflow list.
//
// Each Vault caches the shapes it learned (shapeCache, in its Lists): a
// commit whose token is of a shape the Vault knows reads and writes
// nothing shared; the first commit of a shape in a process reads its
// registry entry, and the first of a shape in the tenant writes it. Two
// instances creating the same new shape at once both write its entry: on
// PostgreSQL one of the two group commits fails to serialize, once, and
// runs again.
const (
	// maxListShapes bounds the shapes a tenant's registry holds, and so
	// the lists a page of every token merges (maxListShapes plus the
	// three overflow lists).
	maxListShapes = 256
	// shapeMACLength is how many bytes of a shape's keyed HMAC name it.
	shapeMACLength = 16
	// maxCachedOverflow bounds the unregistered shapes a Vault remembers
	// per process (beyond it, it forgets them all and reads again).
	maxCachedOverflow = 4096
)

// listShape is a resolved shape: the list index its tokens' entries go
// to and the count beside it.
type listShape struct {
	list  barrier.Prefix // the entries are this followed by the position
	count barrier.Key
}

// shapeOfRecord is the shape of rec: its type and its containers, sorted,
// each once.
func shapeOfRecord(rec *tokens.Record) tokens.ShapeRecord {
	cs := slices.Clone(rec.Containers)
	slices.Sort(cs)
	return tokens.ShapeRecord{Type: rec.Type, Containers: slices.Compact(cs)}
}

// shapeMAC names shape s in keys: shapeMACLength bytes of a keyed
// HMAC of its type and containers (a container holds no zero byte).
func shapeMAC(ks *barrier.Keys, s tokens.ShapeRecord) string {
	parts := [][]byte{[]byte("list-shape\x00"), []byte(s.Type)}
	for _, c := range s.Containers {
		parts = append(parts, []byte{0}, []byte(c))
	}
	return string(ks.MAC(parts...)[:shapeMACLength])
}

// overflowMAC names the overflow list of type typ: no shape's MAC (its
// HMAC input differs in its first part).
func overflowMAC(ks *barrier.Keys, typ string) string {
	return string(ks.MAC([]byte("list-overflow\x00"), []byte(typ))[:shapeMACLength])
}

// shapeLists is the list and count of the shape (or overflow list) named
// mac in tenant tid.
func shapeLists(tid, mac string) *listShape {
	return &listShape{
		list:  barrier.Tenant(tid).TokenShapeList(mac),
		count: barrier.Tenant(tid).TokenShapeCount(hex.EncodeToString([]byte(mac))),
	}
}

// shapeCache is what a Vault knows of its tenants' shape registries: the
// registered shapes (by tenant and MAC in hex; registered shapes are never
// removed while the tenant lives), the tenants whose registry is full,
// and some shapes known unregistered in a full registry. Everything in it
// was read from the store or committed to it. The zero value is empty.
type shapeCache struct {
	mu       sync.Mutex
	known    map[string]tokens.ShapeRecord // tid + "/" + hex MAC
	full     map[string]bool               // tid
	overflow map[string]bool               // tid + "/" + hex MAC
}

func (c *shapeCache) get(tid, hexMAC string) (tokens.ShapeRecord, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.known[tid+"/"+hexMAC]
	return s, ok
}

func (c *shapeCache) add(tid, hexMAC string, s tokens.ShapeRecord) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.known == nil {
		c.known = map[string]tokens.ShapeRecord{}
	}
	c.known[tid+"/"+hexMAC] = s
}

func (c *shapeCache) isFull(tid string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.full[tid]
}

func (c *shapeCache) setFull(tid string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.full == nil {
		c.full = map[string]bool{}
	}
	c.full[tid] = true
}

func (c *shapeCache) isOverflow(tid, hexMAC string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.overflow[tid+"/"+hexMAC]
}

func (c *shapeCache) addOverflow(tid, hexMAC string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.overflow == nil || len(c.overflow) >= maxCachedOverflow {
		c.overflow = map[string]bool{}
	}
	c.overflow[tid+"/"+hexMAC] = true
}

// forget empties the cache.
func (c *shapeCache) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.known, c.full, c.overflow = nil, nil, nil
}

// shapeMemos is what a transaction resolved of token shapes (shapeOf),
// by tenant and shape: a memo of its function, read and written while it
// runs.
var shapeMemos unit.Local[map[string]*listShape]

// shapeOf resolves the list of rec: its shape's, registering the shape
// when it is new and the registry has room (create), else its type's
// overflow list. A transaction remembers what it resolved (a batch
// mostly has one shape).
func (l *Lists) shapeOf(t *unit.Tx, ks *barrier.Keys, rec *tokens.Record, create bool) (*listShape, error) {
	s := shapeOfRecord(rec)
	mac := shapeMAC(ks, s)
	tid := rec.TenantID
	memo := tid + "/" + mac
	memos := shapeMemos.Of(t)
	if ls := (*memos)[memo]; ls != nil {
		return ls, nil
	}
	ls, err := l.resolveShape(t, ks, tid, mac, s, create)
	if err != nil {
		return nil, err
	}
	if *memos == nil {
		*memos = map[string]*listShape{}
	}
	(*memos)[memo] = ls
	return ls, nil
}

func (l *Lists) resolveShape(t *unit.Tx, ks *barrier.Keys, tid, mac string, s tokens.ShapeRecord, create bool) (*listShape, error) {
	cache := &l.shapes
	hexMAC := hex.EncodeToString([]byte(mac))
	if _, ok := cache.get(tid, hexMAC); ok {
		return shapeLists(tid, mac), nil
	}
	overflow := shapeLists(tid, overflowMAC(ks, s.Type))
	if cache.isOverflow(tid, hexMAC) {
		return overflow, nil
	}
	key := barrier.Tenant(tid).TokenShape(hexMAC)
	var stored tokens.ShapeRecord
	ok, err := t.GetRecord(key, &stored)
	if err != nil {
		return nil, err
	}
	if ok {
		t.AfterCommit(func() { cache.add(tid, hexMAC, s) })
		return shapeLists(tid, mac), nil
	}
	fullMemo := "full\x00" + tid // a registry this transaction found full
	memos := shapeMemos.Of(t)
	if cache.isFull(tid) || (*memos)[fullMemo] != nil {
		return l.overflowShape(t, ks, tid, hexMAC, s, overflow)
	}
	n := 0
	err = t.Scan(barrier.Tenant(tid).TokenShapes(), "", maxListShapes, func(barrier.Key, string) error {
		n++
		return nil
	})
	if err != nil {
		return nil, err
	}
	if n >= maxListShapes {
		if *memos == nil {
			*memos = map[string]*listShape{}
		}
		(*memos)[fullMemo] = overflow
		t.AfterCommit(func() { cache.setFull(tid) })
		return l.overflowShape(t, ks, tid, hexMAC, s, overflow)
	}
	if !create {
		// A listed token's shape is registered or overflows a full
		// registry; neither holds here only for a token never listed.
		return overflow, nil
	}
	if err := t.PutRecord(key, &s); err != nil {
		return nil, err
	}
	t.AfterCommit(func() { cache.add(tid, hexMAC, s) })
	return shapeLists(tid, mac), nil
}

// overflowShape lists shape s (named hexMAC) in its type's overflow list:
// it marks each of its containers and their ancestors as holding overflow
// tokens (overflowMark), so that a container filter walks the overflow
// lists only where they may hold its tokens. The Vault remembers the
// shape once the transaction commits (it may have filled the registry
// itself), and marks it no more.
func (l *Lists) overflowShape(t *unit.Tx, ks *barrier.Keys, tid, hexMAC string, s tokens.ShapeRecord, overflow *listShape) (*listShape, error) {
	for _, c := range ancestors(s.Containers) {
		if err := t.PutIndex(overflowMark(ks, tid, c)); err != nil {
			return nil, err
		}
	}
	t.AfterCommit(func() { l.shapes.addOverflow(tid, hexMAC) })
	return overflow, nil
}

// overflowMark is the mark of container c holding overflow tokens.
func overflowMark(ks *barrier.Keys, tid, c string) barrier.Key {
	mac := ks.MAC([]byte("list-overflow-container\x00"), []byte(c))[:shapeMACLength]
	return barrier.Tenant(tid).TokenOverflowMark(hex.EncodeToString(mac))
}

// ancestors are containers and each of their ancestors but "/", each once.
func ancestors(containers []string) []string {
	var out []string
	for _, c := range containers {
		for i := 1; i < len(c); i++ {
			if c[i] == '/' && !slices.Contains(out, c[:i+1]) {
				out = append(out, c[:i+1])
			}
		}
	}
	return out
}

// tenantShapes returns the registered shapes of tenant tid, by their MAC
// (raw bytes): the registry's keys, and each entry this Vault has not seen
// yet (then cached).
func (l *Lists) tenantShapes(t *unit.Tx, tid string) (map[string]tokens.ShapeRecord, error) {
	cache := &l.shapes
	shapes := map[string]tokens.ShapeRecord{}
	var unknown []string
	err := t.ScanKeys(barrier.Tenant(tid).TokenShapes(), func(_ barrier.Key, hexMAC string) error {
		if s, ok := cache.get(tid, hexMAC); ok {
			shapes[hexMAC] = s
		} else {
			unknown = append(unknown, hexMAC)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, hexMAC := range unknown {
		var s tokens.ShapeRecord
		ok, err := t.GetRecord(barrier.Tenant(tid).TokenShape(hexMAC), &s)
		if err != nil {
			return nil, err
		}
		if ok {
			shapes[hexMAC] = s
			cache.add(tid, hexMAC, s)
		}
	}
	out := make(map[string]tokens.ShapeRecord, len(shapes))
	for hexMAC, s := range shapes {
		mac, err := hex.DecodeString(hexMAC)
		if err != nil || len(mac) != shapeMACLength {
			continue // not a registry key this code wrote
		}
		out[string(mac)] = s
	}
	return out, nil
}
