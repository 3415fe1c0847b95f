package store

import (
	"context"
	"database/sql"
	"regexp"
	"strconv"
	"strings"
)

// The store's SQL names its arguments $1, $2, …, and each statement must use them in that
// order of first appearance: SQLite numbers $N parameters by where they first appear, not by
// N, while PostgreSQL goes by N. A statement written out in full keeps to that by hand; one
// built at run time numbers its placeholders with arg (placeholders, for a list) as it writes
// its text from left to right, and shift renumbers a piece written with its own $1….

// arg appends v to args and returns the placeholder that names it.
func arg(args *[]any, v any) string {
	*args = append(*args, v)
	return "$" + strconv.Itoa(len(*args))
}

// placeholders appends values to args and returns the "$i, $j, …" that name them, for an IN
// list or a VALUES row.
func placeholders[T any](args *[]any, values []T) string {
	marks := make([]string, len(values))
	for i, v := range values {
		marks[i] = arg(args, v)
	}
	return strings.Join(marks, ", ")
}

// placeholder is a $N placeholder; the store's SQL holds no other $.
var placeholder = regexp.MustCompile(`\$[0-9]+`)

// shift renumbers the placeholders of query, a piece of SQL written with its own $1…, to
// follow n arguments already placed, and returns the highest placeholder it then holds (n if
// none).
func shift(query string, n int) (string, int) {
	high := n
	query = placeholder.ReplaceAllStringFunc(query, func(p string) string {
		i, _ := strconv.Atoi(p[1:])
		high = max(high, n+i)
		return "$" + strconv.Itoa(n+i)
	})
	return query, high
}

// collect runs stmt and scans every row it returns. scan takes the rows as *sql.Rows or as a
// rowScanner, so a scanner shared with single-row reads (*sql.Row) serves as it is.
func collect[T any, R rowScanner](ctx context.Context, db querier, stmt string, args []any, scan func(R) (T, error)) ([]T, error) {
	rows, err := db.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	row := any(rows).(R)
	var out []T
	for rows.Next() {
		v, err := scan(row)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// scanString scans a row of one text column.
func scanString(rows *sql.Rows) (string, error) {
	var s string
	err := rows.Scan(&s)
	return s, err
}
