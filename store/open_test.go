package store

import (
	"context"
	"path/filepath"
	"testing"

	_ "github.com/mattn/go-sqlite3"
)

// openTest opens a fresh SQLite database for a test of package store's internals. Tests of
// the store's behaviour belong in store/storetest, which runs them on PostgreSQL too.
func openTest(t testing.TB) *DB {
	t.Helper()
	db, err := OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "test.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestOpenTest keeps openTest compiled and used.
func TestOpenTest(t *testing.T) {
	if err := openTest(t).Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
}
