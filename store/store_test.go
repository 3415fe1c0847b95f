package store_test

import (
	"context"
	"database/sql"
	"flag"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/waybill/waybill/store"
	"github.com/waybill/waybill/store/storetest"
)

var _ = flag.Bool("update", false, "rewrite golden files (used by httpapi)")

// TestStore runs the store suite on SQLite, each test on a fresh file.
func TestStore(t *testing.T) {
	storetest.Run(t, func(t testing.TB) (*store.DB, *sql.DB) {
		path := filepath.Join(t.TempDir(), "test.db")
		db, err := store.OpenSQLite(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db, plainSQLite(t, path)
	})
}

// plainSQLite opens a plain pool on the SQLite database at path, for tests to read and damage
// rows through, and closes it when the test ends.
func plainSQLite(t testing.TB, path string) *sql.DB {
	raw, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=10000&_foreign_keys=on")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	return raw
}

// twoHandles opens two handles on one SQLite file, as two processes.
func twoHandles(t *testing.T) (here, there *store.DB) {
	path := filepath.Join(t.TempDir(), "test.db")
	var dbs [2]*store.DB
	for i := range dbs {
		db, err := store.OpenSQLite(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		dbs[i] = db
	}
	return dbs[0], dbs[1]
}

func TestTokenRevokedElsewhere(t *testing.T) {
	here, there := twoHandles(t)
	storetest.TokenRevokedElsewhere(t, here, there)
}

func TestPurchaseAcrossHandles(t *testing.T) {
	here, there := twoHandles(t)
	storetest.PurchaseAcrossHandles(t, here, there)
}

func TestSerialsAcrossHandles(t *testing.T) {
	here, there := twoHandles(t)
	storetest.SerialsAcrossHandles(t, here, there)
}

// TestLegibleRecords runs migration 028 on rows as the code before it stored them.
func TestLegibleRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "test.db")
	open := func() (*store.DB, *sql.DB) {
		db, err := store.OpenSQLite(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db, plainSQLite(t, path)
	}
	storetest.LegibleRecords(t, open)
}

// TestTodaysShapes runs migration 039 on rows stored in the shapes it rewrites.
func TestTodaysShapes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "test.db")
	storetest.TodaysShapes(t, func() (*store.DB, *sql.DB) {
		db, err := store.OpenSQLite(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db, plainSQLite(t, path)
	})
}

// TestMigrateTwice: a second open applies no migration again.
func TestMigrateTwice(t *testing.T) {
	path := filepath.Join(t.TempDir(), "twice.db")
	storetest.MigrateTwice(t, func() (*store.DB, *sql.DB) {
		db, err := store.OpenSQLite(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db, plainSQLite(t, path)
	})
}

// TestNewUUIDv7 checks the layout: 8-4-4-4-12 lowercase hex, version 7, RFC variant, and the
// leading 48 bits the Unix time in milliseconds.
func TestNewUUIDv7(t *testing.T) {
	before := time.Now().UnixMilli()
	id := store.NewUUIDv7()
	after := time.Now().UnixMilli()
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(id) {
		t.Fatalf("store.NewUUIDv7() = %q", id)
	}
	ms, _ := strconv.ParseInt(strings.ReplaceAll(id[:13], "-", ""), 16, 64)
	if ms < before || ms > after {
		t.Errorf("time %d outside [%d, %d]", ms, before, after)
	}
	if store.NewUUIDv7() == id {
		t.Error("two ids alike")
	}
}
