package store_test

import (
	"context"
	"flag"
	"path/filepath"
	"testing"

	_ "github.com/mattn/go-sqlite3"

	"github.com/waybill/waybill/store"
	"github.com/waybill/waybill/store/storetest"
)

var _ = flag.Bool("update", false, "rewrite golden files (used by httpapi)")

// TestStore runs the store suite on SQLite, each test on a fresh file.
func TestStore(t *testing.T) {
	storetest.Run(t, func(t testing.TB) *store.DB {
		db, err := store.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "test.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	})
}

func TestMigrateTwice(t *testing.T) {
	path := filepath.Join(t.TempDir(), "twice.db")
	for i := 0; i < 2; i++ {
		db, err := store.OpenSQLite(context.Background(), path)
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		db.Close()
	}
}
