// Package listing is the token lists, searches and access history of the
// tokens feature: which list index a token's entry is in and its kept
// count (Lists.List, Unlist, Move, called by the commit that writes or
// deletes a token), the pages of the lists (Page) and of the queries an
// index of exact values answers (Find, shaping each token with Show), the
// search query language (ParseQuery, Query), the one-time build of the
// lists of a store written by an earlier version (Lists.Build), and who
// saw a token (Lists.AccessLines, SubjectTokens, AccessPage). Lists.Counts
// sums the kept counts of a tenant's shapes into its tokens by type and
// by container, reading no token.
//
// It owns the list indexes (idx/tl-s/), their counts (count/tok-s/), the
// shape registry (token_shape/) and the overflow marks (idx/tlo/) of every
// tenant, and the cursors of token lists. It does not own the token
// records (internal/tokens), how a token is shown to a caller (the page's
// show function), how a token is read (Lists.Load), the exact-value
// indexes (metadata, search, fingerprints: Lists.MetadataIDs and
// FingerprintIDs) or the audit log it reads the access history from
// (Lists.EntityLines): Open wires those in. It never imports the root
// package.
//
// # Token lists that cost what they return
//
// One list entry per token. Every token has exactly one entry in an
// ordered list index (internal/barrier): that of its shape, its type and
// its set of containers (shapes.go), at idx/tl-s/<shape MAC><position>
// (the position is its creation time, then its id, packed: packPosition),
// and its shape keeps a count (count/tok-s/<hex of the MAC>). The entry
// and the count change in the commit that creates, updates (only when its
// shape or position changes), deletes or expires the token (List, Move,
// Unlist), through AddCount: no other row, and no row that a commit of
// another token of the tenant writes unless it is of the same shape (the
// count, which the barrier keeps without contention). A commit that lists
// the first token of a shape also writes the shape's registry entry (and
// past the registry, the overflow marks of its containers); the first
// commit of a shape in a process reads that entry, and later ones read
// nothing shared (Lists caches the shapes it knows).
//
// A list is merged at read. Every token, one type, one container (and
// what is below it, at any depth), a type in a container: the shapes
// whose every token matches the filter (matchesShape), merged by position
// (listWalk), and the exact total is the sum of their counts. A token is
// in one shape only, so a token in two containers under one filtered
// ancestor is listed and counted once. Before, a token had an entry in
// its type's index and one in each of its containers and their
// ancestors' (three entries and three counts for a default token); a
// store written then is rebuilt at Open (Build).
//
// # Many shapes
//
// A tenant's registry holds at most maxListShapes shapes; a token of a
// new shape past it is listed in its type's overflow list (no registry
// entry), and its containers and their ancestors are marked as holding
// overflow tokens (idx/tlo/, once per shape and process). So a page
// merges at most maxListShapes + 3 lists, whatever the tenant holds: a
// tenant with a container per customer (one shape each) lists every
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
// the store, the same at every instance: see shapes.go.)
//
// # What a page costs
//
// A page of size n, at offset o (page=N: o = (N-1)*n; a cursor page:
// o = 0), examines at most o + n + paging.ListBudget index entries and
// reads the records they name, whatever the tenant holds: an entry is
// examined when it is walked past, shown or not. Besides, it scans the
// tenant's shape registry (at most maxListShapes keys, opening only the
// entries this process has not seen), reads the count of each merged
// list, and reads ahead in each merged list in chunks that double from 4:
// at most twice the entries it examines there and 4 more each (listWalk),
// so with k lists at most 2(o + n + ListBudget) + 4k entries,
// k <= maxListShapes + 3. When the caller's access rules hide so many
// tokens that the budget runs out before the page is full, the page is
// shorter (possibly empty) and its after cursor continues from the last
// entry examined: a client follows after until it is empty, as always.
// Offset pages cost their offset, so page*size is bounded
// (paging.MaxListOffset); the cursor is the efficient path at any depth.
//
// # Totals
//
// total_items is the sum of the merged shapes' kept counts when the
// caller's permission reaches every token (granted directly, not only
// through rules), every merged list holds only matching tokens (no
// overflow list under a marked container), and no second filter applies
// to it; tokens past expires_at that the sweeper has not yet removed are
// counted. Otherwise total_items is a lower bound, never a scan and never
// a count of tokens the key may not read: the tokens shown up to the end
// of this page, plus one when after is set (so total_pages names one more
// page while more may follow). On a cursor page an exact total is the
// whole list's, not only what follows the cursor.
//
// A cursor that stops on a token the caller was not shown is sealed with
// the tenant's keys (sealCursor), so that it tells nothing of that token.
package listing
