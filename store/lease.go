package store

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
)

// A queue is a table whose due rows workers lease (imports, batch items, voids, label polls,
// webhook records), stated as data: every queue claims the same way (claim), one statement
// that picks the due rows in the queue's order and leases them.
type queue struct {
	table string
	key   []string // the columns that name one row
	// where selects the due rows, with placeholders $1… for args; order is the ORDER BY the
	// rows are picked in ("" for none).
	where string
	args  []any
	order string
	// set is the lease's assignments, with placeholders $1… of its own for setArgs.
	set       string
	setArgs   []any
	returning string // the columns of the leased rows to answer
}

// statement is the statement that leases up to limit rows of q on the dialect, and its
// arguments. A CTE picks the rows (on PostgreSQL it locks them and skips rows another claimer
// holds, so claimers in several processes never wait on or deadlock with each other; SQLite's
// single writer needs neither); the UPDATE then finds each by its key and repeats the
// condition, so that a row leased meanwhile stays out. (With the pick as a subquery of
// `id IN (…)` beside the repeated condition, SQLite walked every queued row through the status
// index for each claim, and PostgreSQL could plan the subquery to run again for each row.) The
// CTE names its columns apart from the table's, so the rest of the statement may name the
// table's unqualified.
func (q queue) statement(d Dialect, limit int) (string, []any) {
	args := append([]any{}, q.args...)
	picked, match := make([]string, len(q.key)), make([]string, len(q.key))
	for i, k := range q.key {
		picked[i] = "picked_" + strconv.Itoa(i)
		match[i] = q.table + "." + k + " = " + picked[i]
	}
	pick := "SELECT " + strings.Join(q.key, ", ") + " FROM " + q.table + " WHERE " + q.where
	if q.order != "" {
		pick += " ORDER BY " + q.order
	}
	pick += " LIMIT " + arg(&args, limit)
	if d == PostgreSQL {
		pick += " FOR UPDATE SKIP LOCKED"
	}
	set, _ := shift(q.set, len(args))
	args = append(args, q.setArgs...)
	return "WITH picked (" + strings.Join(picked, ", ") + ") AS (" + pick + ")" +
		" UPDATE " + q.table + " SET " + set +
		" FROM picked WHERE " + strings.Join(match, " AND ") + " AND (" + q.where + ")" +
		" RETURNING " + q.returning, args
}

// claim leases up to limit rows of q in tx and scans those it leased, in no set order.
func claim[T any, R rowScanner](ctx context.Context, db *DB, tx *sql.Tx, q queue, limit int, scan func(R) (T, error)) ([]T, error) {
	query, args := q.statement(db.dialect, limit)
	return collect(ctx, tx, query, args, scan)
}
