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
	"github.com/tokenvault/tokenvault/internal/paging"
	"github.com/tokenvault/tokenvault/internal/tokens"
	"github.com/tokenvault/tokenvault/internal/unit"
)

// Token lists that cost what they return.
//
// One list entry per token. Every token has exactly one entry in an
// ordered list index (internal/barrier): that of its shape, its type and
// its set of containers (tokens_lists_shapes.go), at
// idx/tl-s/<shape MAC><position> (the position is its creation time,
// then its id, packed: packPosition), and its shape keeps a count
// (count/tok-s/<hex of the MAC>). The entry and the count change in the
// commit that creates, updates (only when its shape or position
// changes), deletes or expires the token (putToken, writeToken,
// deleteToken), through AddCount: no other row, and no row that a commit
// of another token of the tenant writes unless it is of the same shape
// (the count, which the barrier keeps without contention). A commit that
// lists the first token of a shape also writes the shape's registry entry
// (and past the registry, the overflow marks of its containers); the
// first commit of a shape in a process reads that entry, and later ones
// read nothing shared (the Vault caches the shapes it knows).
//
// A list is merged at read. Every token, one type, one container (and
// what is below it, at any depth), a type in a container: the shapes
// whose every token matches the filter (matchesShape), merged by position
// (listWalk), and the exact total is the sum of their counts. A token is
// in one shape only, so a token in two containers under one filtered
// ancestor is listed and counted once. Before, a token had an entry in
// its type's index and one in each of its containers and their
// ancestors' (three entries and three counts for a default token); a
// store written then is rebuilt at Open (tokens_lists_build.go).
//
// Many shapes. A tenant's registry holds at most maxListShapes shapes;
// a token of a new shape past it is listed in its type's overflow list
// (no registry entry), and its containers and their ancestors are marked
// as holding overflow tokens (idx/tlo/, once per shape and process). So a
// page merges at most maxListShapes + 3 lists, whatever the tenant holds:
// a tenant with a container per customer (one shape each) lists every
// token, and each type, exactly and at that bound, and a container no
// overflow token is in (the customers registered first) from its shapes
// alone, exactly. A container that is marked also walks the overflow
// lists of its types, reading the records and filtering them (as any
// filter the lists cannot answer), so its pages can be shorter (a
// customer past the registry, among many others in the overflow list) and
// its total is a lower bound. (Why a cap on the registry rather than on
// what one page merges: a page of every token has no index to fall back
// on but the shapes' own lists, so the bound must hold for the tenant;
// and a fixed overflow per type keeps which list a token is in a fact of
// the store, the same at every instance: see tokens_lists_shapes.go.)
//
// What a page costs. A page of size n, at offset o (page=N: o = (N-1)*n;
// a cursor page: o = 0), examines at most o + n + listBudget index
// entries and reads the records they name, whatever the tenant holds: an
// entry is examined when it is walked past, shown or not. Besides, it
// scans the tenant's shape registry (at most maxListShapes keys, opening
// only the entries this process has not seen), reads the count of each
// merged list, and reads ahead in each merged list in chunks that double
// from 4: at most twice the entries it examines there and 4 more each
// (listWalk), so with k lists at most 2(o + n + listBudget) + 4k entries,
// k <= maxListShapes + 3. When the caller's access rules hide so many
// tokens that the budget runs out before the page is full, the page is
// shorter (possibly empty) and its after cursor continues from the last
// entry examined: a client follows after until it is empty, as always.
// Offset pages cost their offset, so page*size is bounded
// (maxListOffset); the cursor is the efficient path at any depth.
//
// Totals. total_items is the sum of the merged shapes' kept counts when
// the caller's permission reaches every token (granted directly, not only
// through rules), every merged list holds only matching tokens (no
// overflow list under a marked container), and no second filter applies
// to it; tokens past expires_at that the sweeper has not
// yet removed are counted. Otherwise total_items is a lower bound, never
// a scan and never a count of tokens the key may not read: the tokens
// shown up to the end of this page, plus one when after is set (so
// total_pages names one more page while more may follow). On a cursor
// page an exact total is the whole list's, not only what follows the
// cursor.
const (
	// listBudget is how many index entries a page examines beyond its
	// offset and its size.
	listBudget = 1000
)

// sealedCursorPrefix marks a cursor position sealed with the tenant's
// keys: one that stops on a token the caller was not shown, whose id and
// creation time it must not read.
const sealedCursorPrefix = "~"

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
func recPosition(rec *tokens.Record) string { return packPosition(rec.CreatedAt, rec.ID) }

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

// listToken writes rec's list entry and counts it (putToken).
func (t *txn) listToken(rec *tokens.Record) error { return t.relist(rec, 1) }

// unlistToken removes rec's list entry and its count, before a token is
// deleted.
func (t *txn) unlistToken(rec *tokens.Record) error { return t.relist(rec, -1) }

// moveListed moves a token's list entry and count from those of prev to
// those of rec, its next version (an update): nothing when its type,
// containers and position stay (most updates), so an update writes no
// list entry it would only remove and put back.
func (t *txn) moveListed(prev, rec *tokens.Record) error {
	a, b := shapeOfRecord(prev), shapeOfRecord(rec)
	if prev.TenantID == rec.TenantID && a.Type == b.Type && recPosition(prev) == recPosition(rec) &&
		slices.Equal(a.Containers, b.Containers) {
		return nil
	}
	if err := t.unlistToken(prev); err != nil {
		return err
	}
	return t.listToken(rec)
}

func (t *txn) relist(rec *tokens.Record, delta int64) error {
	ks, err := t.TenantKeys(rec.TenantID, false)
	if err != nil {
		return err
	}
	shape, err := t.shapeOf(ks, rec, delta > 0)
	if err != nil {
		return err
	}
	key := shape.list.Key(recPosition(rec))
	if delta > 0 {
		err = t.PutIndex(key)
	} else {
		err = t.Delete(key)
	}
	if err != nil {
		return err
	}
	t.AddCount(shape.count, delta)
	return nil
}

// walkable reports whether q is answered by walking a list index: it
// has no filter answered by an index of exact values (ids, fingerprint,
// metadata, search), which queryTokens reads instead.
func (q tokenQuery) walkable() bool {
	return q.ids == nil && q.fingerprint == "" && len(q.metadata) == 0 && len(q.search) == 0
}

// listIndexes chooses the lists a walk of q merges: the shapes whose
// every token matches q's type and container, and the overflow lists of
// q's types (for a container, only when it is marked as holding overflow
// tokens); total is the sum of their kept counts, q's exact total unless
// it merges an overflow list that may hold tokens q does not match.
func (t *txn) listIndexes(ks *barrier.Keys, tid string, q tokenQuery) (idxs []barrier.Prefix, total int, exact bool, err error) {
	shapes, err := t.tenantShapes(tid)
	if err != nil {
		return nil, 0, false, err
	}
	exact = true
	for _, mac := range slices.Sorted(maps.Keys(shapes)) {
		if !q.matchesShape(shapes[mac]) {
			continue
		}
		ls := shapeLists(tid, mac)
		n, err := t.ReadCount(ls.count)
		if err != nil {
			return nil, 0, false, err
		}
		// Walked whatever its count says: a count is never what
		// decides whether a token is shown.
		idxs, total = append(idxs, ls.list), total+n
	}
	filtered := q.container != "" && q.container != "/"
	if filtered {
		// The overflow lists hold no token of the container unless a
		// token of an overflow shape marked it.
		marked, err := t.Has(overflowMark(ks, tid, q.container))
		if err != nil || !marked {
			return idxs, total, exact, err
		}
	}
	for _, typ := range tokenTypes {
		if q.typ != "" && typ != q.typ {
			continue
		}
		ls := shapeLists(tid, overflowMAC(ks, typ))
		n, err := t.ReadCount(ls.count)
		if err != nil {
			return nil, 0, false, err
		}
		idxs = append(idxs, ls.list)
		if filtered {
			exact = false
		} else {
			total += n
		}
	}
	return idxs, total, exact, nil
}

// pageTokens answers a walkable query (ListTokens, SearchTokens): the
// tokens matching q that p may use with perm, in list order, one page of
// them, at the cost described at the top of this file.
func (t *txn) pageTokens(p *principal, perm string, q tokenQuery, pg paging.Pager) (*Page[Token], error) {
	tid := p.TenantID
	ks, err := t.TenantKeys(tid, false)
	if err != nil {
		return nil, err
	}
	skip, _, err := pg.Offset("tokens")
	if err != nil {
		return nil, err
	}
	start, err := openCursor(ks, tid, pg.Start)
	if err != nil {
		return nil, err
	}
	after := ""
	if start != "" {
		var ok bool
		if after, ok = packCursor(start); !ok {
			return nil, unit.InvalidField("start", "is not a cursor returned by this list (pagination.after)")
		}
	}
	idxs, total, exact, err := t.listIndexes(ks, tid, q)
	if err != nil {
		return nil, err
	}
	exact = exact && p.ReachesAll(perm)

	budget := skip + pg.Size + listBudget
	walk := t.newListWalk(idxs, after)
	var data []Token
	var last string    // the position of the last entry examined
	lastShown := false // whether it was shown
	skipped := 0       // visible tokens passed by before the page
	for len(data) < pg.Size && budget > 0 {
		pos, ok, err := walk.next(min(budget, max(pg.Size-len(data), 16)))
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
			page.Pagination.After = paging.EncodeCursor(cursorPosition(last))
		} else {
			page.Pagination.After = paging.EncodeCursor(sealCursor(ks, tid, cursorPosition(last)))
		}
	}
	pageNumber := pg.Page
	if pg.Start != "" {
		pageNumber = 1
	}
	if !exact {
		total = skipped + len(data)
		if page.Pagination.After != "" {
			total++
		}
	}
	after2 := page.Pagination.After
	page.Pagination = paging.Pages(total, pageNumber, pg.Size)
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
func shapeListed(p *principal, perm string, q tokenQuery, rec *tokens.Record) *Token {
	transform, ok := p.Decide(perm, scopeOf(rec))
	if !ok {
		return nil
	}
	clear := p.MayReadClear(scopeOf(rec))
	if q.fingerprint != "" && !clear {
		// Equality with the data is told only to a key that sees it
		// (mayReadClear): a masking reader would test guesses.
		return nil
	}
	tok := tokenOf(rec, transform)
	if !clear {
		tok.Fingerprint = ""
	}
	if perm != PermTokenRead && !p.MayRead(scopeOf(rec)) {
		// Found by search alone (see "Keys learn only what they may
		// read"): a fingerprint or metadata term would test a value
		// against what the key may not read, so it matches only where
		// it may; the stored content is withheld.
		if q.readsContent() {
			return nil
		}
		searchView(tok)
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
	bad := unit.InvalidField("start", "is not a cursor returned by this list (pagination.after)")
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
