package store

import "context"

// cliAccountColumns are the columns scanAccountRows reads, in order.
const cliAccountColumns = `id, name, brand, organization_id, ingest_secret, created_at`

// AllAccounts returns every account, oldest first (the command line's account list).
func (db *DB) AllAccounts(ctx context.Context) ([]Account, error) {
	return db.scanAccountRows(ctx, `SELECT `+cliAccountColumns+` FROM accounts ORDER BY created_at, id`)
}

// AccountsNamed returns the accounts with the name, oldest first: names need not be unique.
func (db *DB) AccountsNamed(ctx context.Context, name string) ([]Account, error) {
	return db.scanAccountRows(ctx, `SELECT `+cliAccountColumns+` FROM accounts WHERE name = $1 ORDER BY created_at, id`, name)
}

func (db *DB) scanAccountRows(ctx context.Context, query string, args ...any) ([]Account, error) {
	rows, err := db.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Account
	for rows.Next() {
		var a Account
		var created int64
		if err := rows.Scan(&a.ID, &a.Name, &a.Brand, &a.OrganizationID, &a.IngestSecret, &created); err != nil {
			return nil, err
		}
		a.CreatedAt = stamp(created)
		out = append(out, a)
	}
	return out, rows.Err()
}
