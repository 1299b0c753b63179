package tokenvault

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/tokenvault/tokenvault/internal/barrier"
)

// Token lists that cost what they return.
//
// Every token has entries in ordered list indexes (internal/barrier): tl-t
// the tokens of one type by their position (creation time, then id,
// packed: packPosition), and tl-c the tokens in a container or below it,
// for the token's containers and their ancestors down to listDepth
// segments. The list of every token merges the three types' indexes (one
// entry fewer a token than an index of its own). The entries and the
// counts beside them (count/tok-t/<type>, count/tok-c/<hmac>; the
// tenant's total is the types' sum) are written and removed in the commit
// that creates, updates, deletes or expires the token (putToken,
// writeToken, deleteToken), so a page walks its index (or the three) from
// its cursor and reads the records it shows, and a total is one read (or
// three).
//
// What a page costs. A page of size n, at offset o (page=N: o = (N-1)*n;
// a cursor page: o = 0), examines at most o + n + listBudget index
// entries and reads the records they name, whatever the tenant holds: an
// entry is examined when it is walked past, shown or not. The list of
// every token reads ahead in each of the three types' indexes in chunks
// that double from 4: at most twice the entries it examines there and 4
// more (listWalk). When the caller's access rules hide so many tokens
// that the budget runs out before the page is full, the page is shorter
// (possibly empty) and its after cursor continues from the last entry
// examined: a client follows after until it is empty, as always. Offset pages cost their offset, so page*size is
// bounded (maxListOffset); the cursor is the efficient path at any depth.
//
// Totals. total_items is the kept count of the list (the tenant's tokens,
// the sum of the types' counts; of the type; or in the container) when the caller's permission reaches
// every token (granted directly, not only through rules), the list has a
// kept count, and no second filter applies to it; tokens past expires_at
// that the sweeper has not yet removed are counted. Otherwise total_items
// is a lower bound, never a scan and never a count of tokens the key may
// not read: the tokens shown up to the end of this page, plus one when
// after is set (so total_pages names one more page while more may
// follow). On a cursor page an exact total is the whole list's, not only
// what follows the cursor.
const (
	// listDepth is how many segments of a container are indexed: a
	// filter on a deeper container walks the index of its ancestor at
	// this depth and filters the records it reads.
	listDepth = 8
	// listBudget is how many index entries a page examines beyond its
	// offset and its size.
	listBudget = 1000
	// maxListOffset bounds the offset of a walked list's page: (page-1)*size.
	maxListOffset = 10000
	// containerMACLength is how many bytes of a container's keyed HMAC
	// name its list index (and, in hex, its count).
	containerMACLength = 16
)

// sealedCursorPrefix marks a cursor position sealed with the tenant's
// keys: one that stops on a token the caller was not shown, whose id and
// creation time it must not read.
const sealedCursorPrefix = "~"

// containerMAC names a container in the list index keys: a keyed HMAC,
// so that the store's keys do not spell the tenant's containers;
// containerMACLength bytes of it (its hex names the container's count).
func containerMAC(ks *barrier.Keys, c string) string {
	return string(ks.MAC([]byte("container\x00"), []byte(c))[:containerMACLength])
}

// listAncestor is the container whose list index answers a filter on c:
// c itself, or its ancestor at listDepth segments when c is deeper; ok is
// false for "/" (every token).
func listAncestor(c string) (anc string, exact, ok bool) {
	if c == "/" || c == "" {
		return "", true, false
	}
	segs := strings.Split(strings.Trim(c, "/"), "/")
	if len(segs) <= listDepth {
		return c, true, true
	}
	return "/" + strings.Join(segs[:listDepth], "/") + "/", false, true
}

// listContainers are the containers a token is listed under: each of its
// containers and their ancestors, down to listDepth segments, "/" left
// out (it holds every token), each once, sorted.
func listContainers(containers []string) []string {
	set := map[string]bool{}
	for _, c := range containers {
		segs := strings.Split(strings.Trim(c, "/"), "/")
		for i := 1; i <= min(len(segs), listDepth); i++ {
			if segs[i-1] == "" {
				break
			}
			set["/"+strings.Join(segs[:i], "/")+"/"] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// A position in the list indexes is packed: the creation time as 8
// bytes of big-endian Unix nanoseconds (so byte order is time order, as
// timeKey's), then the id: a canonical UUID (every generated id) as a
// zero byte and its 16 bytes, any other id as it is (a custom id holds
// no control character, so never begins with a zero byte). 25 bytes for
// a generated id instead of the 53 of its text; within one nanosecond,
// generated ids come before custom ones. Cursors keep the text form,
// <16 hex digits>/<id> (cursorPosition), so cursors handed out before
// positions were packed still open.
func packPosition(at time.Time, id string) string {
	b := make([]byte, 8, 8+17)
	binary.BigEndian.PutUint64(b, uint64(barrier.UnixNanos(at)))
	if u, ok := barrier.ParseUUID(id); ok {
		b = append(b, 0)
		b = append(b, u[:]...)
	} else {
		b = append(b, id...)
	}
	return string(b)
}

// recPosition is the packed position of a record in the token lists.
func recPosition(rec *tokenRecord) string { return packPosition(rec.CreatedAt, rec.ID) }

// positionID is the id a packed position names; false when pos is not
// one.
func positionID(pos string) (string, bool) {
	if len(pos) <= 8 {
		return "", false
	}
	id := pos[8:]
	if id[0] != 0 {
		return id, true
	}
	if len(id) != 17 {
		return "", false
	}
	return uuid.UUID([]byte(id[1:])).String(), true
}

// cursorPosition is the text form of a packed position, which cursors
// carry: <16 hex digits>/<id>, as tokenPosition renders a token's.
func cursorPosition(pos string) string {
	id, _ := positionID(pos)
	return hex.EncodeToString([]byte(pos[:8])) + "/" + id
}

// packCursor is the packed position a cursor's text names; false when it
// names none.
func packCursor(c string) (string, bool) {
	if len(c) < 18 || c[16] != '/' {
		return "", false
	}
	var b [8]byte
	if _, err := hex.Decode(b[:], []byte(c[:16])); err != nil || hex.EncodeToString(b[:]) != c[:16] {
		return "", false
	}
	id := c[17:]
	if u, ok := barrier.ParseUUID(id); ok {
		return string(b[:]) + "\x00" + string(u[:]), true
	}
	return string(b[:]) + id, true
}

// listShape is what the list index entries and counts of a token depend
// on besides its position: its tenant, type and containers. A
// transaction builds it once for every token of that shape (a batch
// mostly has one).
type listShape struct {
	indexes []barrier.Prefix // the entries are these followed by the position
	counts  []barrier.Key
}

// shapeName names the list shape of rec.
func shapeName(rec *tokenRecord) string {
	return rec.TenantID + "\x00" + rec.Type + "\x00" + strings.Join(rec.Containers, "\x00")
}

// shapeOf returns the list shape of rec, from t's cache.
func (t *txn) shapeOf(ks *barrier.Keys, rec *tokenRecord) *listShape {
	name := shapeName(rec)
	if s := t.listShapes[name]; s != nil {
		return s
	}
	tid := rec.TenantID
	s := &listShape{
		indexes: []barrier.Prefix{barrier.Tenant(tid).TokenTypeList(rec.Type)},
		counts:  []barrier.Key{barrier.Tenant(tid).TokenTypeCount(rec.Type)},
	}
	for _, c := range listContainers(rec.Containers) {
		mac := containerMAC(ks, c)
		s.indexes = append(s.indexes, barrier.Tenant(tid).TokenContainerList(mac))
		s.counts = append(s.counts, barrier.Tenant(tid).TokenContainerCount(hex.EncodeToString([]byte(mac))))
	}
	if t.listShapes == nil {
		t.listShapes = map[string]*listShape{}
	}
	t.listShapes[name] = s
	return s
}

// listToken writes rec's list index entries and counts it (putToken).
func (t *txn) listToken(rec *tokenRecord) error { return t.relist(rec, 1) }

// unlistToken removes rec's list index entries and its counts, before a
// token is deleted.
func (t *txn) unlistToken(rec *tokenRecord) error { return t.relist(rec, -1) }

// moveListed moves a token's list entries and counts from those of prev
// to those of rec, its next version (an update): nothing when its type
// and list containers stay (most updates), so an update writes no list
// entry it would only remove and put back.
func (t *txn) moveListed(prev, rec *tokenRecord) error {
	if prev.TenantID == rec.TenantID && prev.Type == rec.Type && recPosition(prev) == recPosition(rec) &&
		slices.Equal(listContainers(prev.Containers), listContainers(rec.Containers)) {
		return nil
	}
	if err := t.unlistToken(prev); err != nil {
		return err
	}
	return t.listToken(rec)
}

func (t *txn) relist(rec *tokenRecord, delta int64) error {
	ks, err := t.TenantKeys(rec.TenantID, false)
	if err != nil {
		return err
	}
	shape, pos := t.shapeOf(ks, rec), recPosition(rec)
	for _, idx := range shape.indexes {
		if delta > 0 {
			err = t.PutIndex(idx.Key(pos))
		} else {
			err = t.Delete(idx.Key(pos))
		}
		if err != nil {
			return err
		}
	}
	for _, k := range shape.counts {
		t.AddCount(k, delta)
	}
	return nil
}

// reachesAll reports whether p's perm reaches every token, whatever its
// containers and id: granted to it and to every ceiling directly, or by a
// rule on "/" (or, for a session, a rule without container or
// conditions).
func (p *principal) reachesAll(perm string) bool {
	if !grantsEverywhere(p.permissions, p.rules, perm) {
		return false
	}
	for _, c := range p.ceilings {
		if !grantsEverywhere(c.Permissions, c.Rules, perm) {
			return false
		}
	}
	return true
}

func grantsEverywhere(perms []string, rules []AccessRule, perm string) bool {
	if slices.Contains(perms, perm) {
		return true
	}
	return slices.ContainsFunc(rules, func(r AccessRule) bool {
		everywhere := r.Container == "/" || r.Container == "" && len(r.Conditions) == 0
		return everywhere && slices.Contains(r.Permissions, perm)
	})
}

// walkable reports whether q is answered by walking a list index: it
// has no filter answered by an index of exact values (ids, fingerprint,
// metadata, search), which queryTokens reads instead.
func (q tokenQuery) walkable() bool {
	return q.ids == nil && q.fingerprint == "" && len(q.metadata) == 0 && len(q.search) == 0
}

// listIndexes chooses the index a walk of q reads (the three types'
// for every token), and its kept count when that count is q's exact
// total.
func (t *txn) listIndexes(ks *barrier.Keys, tid string, q tokenQuery) (idxs []barrier.Prefix, total int, exact bool, err error) {
	anc, deepExact, byContainer := listAncestor(q.container)
	switch {
	case !byContainer && q.typ == "":
		for _, typ := range tokenTypes {
			n, err := t.ReadCount(barrier.Tenant(tid).TokenTypeCount(typ))
			if err != nil {
				return nil, 0, false, err
			}
			idxs, total = append(idxs, barrier.Tenant(tid).TokenTypeList(typ)), total+n
		}
		return idxs, total, true, nil
	case !byContainer:
		n, err := t.ReadCount(barrier.Tenant(tid).TokenTypeCount(q.typ))
		return []barrier.Prefix{barrier.Tenant(tid).TokenTypeList(q.typ)}, n, true, err
	}
	mac := containerMAC(ks, anc)
	nc, err := t.ReadCount(barrier.Tenant(tid).TokenContainerCount(hex.EncodeToString([]byte(mac))))
	if err != nil || q.typ == "" {
		return []barrier.Prefix{barrier.Tenant(tid).TokenContainerList(mac)}, nc, deepExact, err
	}
	nt, err := t.ReadCount(barrier.Tenant(tid).TokenTypeCount(q.typ))
	if nt < nc {
		return []barrier.Prefix{barrier.Tenant(tid).TokenTypeList(q.typ)}, nt, false, err
	}
	return []barrier.Prefix{barrier.Tenant(tid).TokenContainerList(mac)}, nc, false, err
}

// pageTokens answers a walkable query (ListTokens, SearchTokens): the
// tokens matching q that p may use with perm, in list order, one page of
// them, at the cost described at the top of this file.
func (t *txn) pageTokens(p *principal, perm string, q tokenQuery, pg pager) (*Page[Token], error) {
	tid := p.tenantID
	ks, err := t.TenantKeys(tid, false)
	if err != nil {
		return nil, err
	}
	skip, _, err := pg.offset("tokens")
	if err != nil {
		return nil, err
	}
	start, err := openCursor(ks, tid, pg.start)
	if err != nil {
		return nil, err
	}
	after := ""
	if start != "" {
		var ok bool
		if after, ok = packCursor(start); !ok {
			return nil, invalidField("start", "is not a cursor returned by this list (pagination.after)")
		}
	}
	idxs, total, exact, err := t.listIndexes(ks, tid, q)
	if err != nil {
		return nil, err
	}
	exact = exact && p.reachesAll(perm)

	budget := skip + pg.size + listBudget
	walk := t.newListWalk(idxs, after)
	var data []Token
	var last string    // the position of the last entry examined
	lastShown := false // whether it was shown
	skipped := 0       // visible tokens passed by before the page
	for len(data) < pg.size && budget > 0 {
		pos, ok, err := walk.next(min(budget, max(pg.size-len(data), 16)))
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		budget--
		last, lastShown = pos, false
		tok, err := t.listedToken(p, perm, q, tid, pos)
		if err != nil {
			return nil, err
		}
		if tok == nil {
			continue
		}
		if skipped < skip {
			skipped++
			continue
		}
		data = append(data, *tok)
		lastShown = true
	}
	more, err := walk.more()
	if err != nil {
		return nil, err
	}

	page := &Page[Token]{Data: data}
	if data == nil {
		page.Data = []Token{}
	}
	if more && last != "" {
		if lastShown {
			page.Pagination.After = encodeCursor(cursorPosition(last))
		} else {
			page.Pagination.After = encodeCursor(sealCursor(ks, tid, cursorPosition(last)))
		}
	}
	pageNumber := pg.page
	if pg.start != "" {
		pageNumber = 1
	}
	if !exact {
		total = skipped + len(data)
		if page.Pagination.After != "" {
			total++
		}
	}
	after2 := page.Pagination.After
	page.Pagination = pagination(total, pageNumber, pg.size)
	page.Pagination.After = after2
	return page, nil
}

// listedToken is the token at packed position pos of a list index shaped
// for p and perm, or nil when the list does not show it to p: gone (an
// entry a concurrent delete removed is not seen by this transaction, but
// a record may be missing in a store built before the index), expired,
// filtered out by q, or out of p's reach.
func (t *txn) listedToken(p *principal, perm string, q tokenQuery, tid, pos string) (*Token, error) {
	id, ok := positionID(pos)
	if !ok {
		return nil, nil
	}
	rec, err := t.loadToken(tid, id, false)
	if err != nil || rec == nil || recPosition(rec) != pos || !q.matches(rec) {
		return nil, err
	}
	return shapeListed(p, perm, q, rec), nil
}

// shapeListed shapes a token of a list or search for p, or returns nil
// when p may not use it with perm (pageTokens and queryTokens).
func shapeListed(p *principal, perm string, q tokenQuery, rec *tokenRecord) *Token {
	transform, ok := p.decide(perm, rec.scope())
	if !ok {
		return nil
	}
	clear := p.mayReadClear(rec)
	if q.fingerprint != "" && !clear {
		// Equality with the data is told only to a key that sees it
		// (mayReadClear): a masking reader would test guesses.
		return nil
	}
	tok := rec.api(transform)
	if !clear {
		tok.Fingerprint = ""
	}
	if perm != PermTokenRead && !p.mayRead(rec) {
		// Found by search alone (see "Keys learn only what they may
		// read"): a fingerprint or metadata term would test a value
		// against what the key may not read, so it matches only where
		// it may; the stored content is withheld.
		if q.readsContent() {
			return nil
		}
		tok.searchView()
	}
	return tok
}

// sealCursor seals a position the caller may not read (that of a token
// it was not shown) into a cursor position only this tenant's keys open.
func sealCursor(ks *barrier.Keys, tid, pos string) string {
	ct := ks.Ring().Seal([]byte(barrier.Tenant(tid).CursorSeal().String()), []byte(pos))
	return sealedCursorPrefix + base64.RawURLEncoding.EncodeToString(ct)
}

// openCursor returns the position a decoded cursor names: itself, or
// what a sealed one holds. A sealed cursor that does not open (another
// tenant's, or altered) is Invalid, naming start.
func openCursor(ks *barrier.Keys, tid, pos string) (string, error) {
	rest, sealed := strings.CutPrefix(pos, sealedCursorPrefix)
	if !sealed {
		return pos, nil
	}
	bad := invalidField("start", "is not a cursor returned by this list (pagination.after)")
	ct, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		return "", bad
	}
	pt, err := ks.Ring().Open([]byte(barrier.Tenant(tid).CursorSeal().String()), ct)
	if err != nil || len(pt) == 0 {
		return "", bad
	}
	return string(pt), nil
}
