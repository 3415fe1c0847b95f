package store

import "context"

// AllAccounts returns every account, oldest first (the command line's account list).
func (db *DB) AllAccounts(ctx context.Context) ([]Account, error) {
	return db.accountsWhere(ctx, `SELECT `+accountColumns+` FROM accounts ORDER BY created_at, id`)
}

// AccountsNamed returns the accounts with the name, oldest first: names need not be unique.
func (db *DB) AccountsNamed(ctx context.Context, name string) ([]Account, error) {
	return db.accountsWhere(ctx, `SELECT `+accountColumns+` FROM accounts WHERE name = $1 ORDER BY created_at, id`, name)
}

func (db *DB) accountsWhere(ctx context.Context, query string, args ...any) ([]Account, error) {
	return collect(ctx, db.r, query, args, scanAccount)
}
