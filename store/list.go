package store

import (
	"context"
	"database/sql"
	"fmt"
)

// maxCount is how many matching rows a list counts before it reports its totals as unknown.
const maxCount = 10000

// Page selects one page of an offset-paginated list; Number counts from 1.
type Page struct{ Number, Size int }

// Keyset selects one page of a cursor-paginated list ordered by (created_at, id).
type Keyset struct {
	Size int
	// Key is the cursor's row; nil starts at the beginning (or, with Before, the end).
	Key *Key
	// Before pages backwards from Key (last/before); otherwise forwards (first/after).
	Before bool
	// Asc orders oldest first; the default is newest first.
	Asc bool
}

// Key is a row's position in a keyset-ordered list.
type Key struct {
	CreatedAt int64
	ID        string
}

// List is one page of a list with what the list envelope reports about it.
type List[T any] struct {
	Items   []T
	HasNext bool
	HasPrev bool
	// Total is the number of matching rows, or -1 when there are too many to count cheaply.
	Total int
	// Keys are the keyset positions of Items (keyset lists only).
	Keys []Key
}

// Query describes a list: its columns, the FROM clause with its WHERE (using $1…$N for
// Args), and the row scanner. The table named in FROM must have created_at and id columns.
type listQuery[T any] struct {
	Columns string
	From    string // always with a WHERE, e.g. "shipments WHERE account_id = $1"
	Args    []any
	Scan    func(*sql.Rows) (T, error)
}

// offsetList runs q for one page ordered by orderBy.
func offsetList[T any](ctx context.Context, db *sql.DB, q listQuery[T], orderBy string, p Page) (List[T], error) {
	args := append([]any{}, q.Args...)
	stmt := fmt.Sprintf("SELECT %s FROM %s ORDER BY %s LIMIT %s OFFSET %s", q.Columns, q.From, orderBy,
		arg(&args, p.Size+1), arg(&args, (p.Number-1)*p.Size))
	items, err := collect(ctx, db, stmt, args, q.Scan)
	if err != nil {
		return List[T]{}, err
	}
	l := List[T]{Items: items, Total: -1}
	if len(items) > p.Size {
		l.Items, l.HasNext = items[:p.Size], true
	}
	var count int
	countStmt := fmt.Sprintf("SELECT COUNT(*) FROM (SELECT 1 FROM %s LIMIT %d) c", q.From, maxCount+1)
	if err := db.QueryRowContext(ctx, countStmt, q.Args...).Scan(&count); err != nil {
		return List[T]{}, err
	}
	if count <= maxCount {
		l.Total = count
	}
	l.HasPrev = p.Number > 1 && count > 0
	if l.Items == nil {
		l.Items = []T{}
	}
	return l, nil
}

// keysetList runs q for one keyset page; key returns a scanned row's position. Its cost does not
// depend on how deep the page is: it seeks on (created_at, id), which the list's index backs.
func keysetList[T any](ctx context.Context, db *sql.DB, q listQuery[T], k Keyset, key func(T) Key) (List[T], error) {
	// Walking backwards means reading in the opposite order and reversing the page.
	asc := k.Asc != k.Before
	order, cmp := "DESC", "<"
	if asc {
		order, cmp = "ASC", ">"
	}
	args := append([]any{}, q.Args...)
	where, cursor := q.From, ""
	if k.Key != nil {
		// A row-value comparison, which both engines turn into one index range; PostgreSQL
		// cannot do so with the equivalent OR, and filtered every row before the cursor.
		cursor = "(" + placeholders(&args, []any{k.Key.CreatedAt, k.Key.ID}) + ")"
		where += " AND (created_at, id) " + cmp + " " + cursor
	}
	stmt := fmt.Sprintf("SELECT %s FROM %s ORDER BY created_at %s, id %s LIMIT %d", q.Columns, where, order, order, k.Size+1)
	items, err := collect(ctx, db, stmt, args, q.Scan)
	if err != nil {
		return List[T]{}, err
	}
	more := len(items) > k.Size
	if more {
		items = items[:k.Size]
	}
	if k.Before {
		for i, j := 0, len(items)-1; i < j; i, j = i+1, j-1 {
			items[i], items[j] = items[j], items[i]
		}
	}
	l := List[T]{Items: items, Total: -1}
	for _, it := range items {
		l.Keys = append(l.Keys, key(it))
	}
	// Whether rows exist on the cursor's other side: one indexed probe.
	behind := false
	if k.Key != nil {
		back := ">"
		if asc {
			back = "<"
		}
		probe := fmt.Sprintf("SELECT COUNT(*) FROM (SELECT 1 FROM %s AND (created_at, id) %s= %s LIMIT 1) c", q.From, back, cursor)
		var c int
		if err := db.QueryRowContext(ctx, probe, args...).Scan(&c); err != nil {
			return List[T]{}, err
		}
		behind = c > 0
	}
	l.HasNext, l.HasPrev = more, behind
	if k.Before {
		l.HasNext, l.HasPrev = behind, more
	}
	if l.Items == nil {
		l.Items = []T{}
	}
	return l, nil
}
