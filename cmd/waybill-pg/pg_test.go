package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"sync"
	"testing"

	"github.com/waybill/waybill/store"
)

// The tests run on the PostgreSQL server of WAYBILL_TEST_PG_URL, by default the local one
// through its Unix socket, in a database postgres_waybill_test they create. Each test gets a
// fresh schema there (CREATE SCHEMA, then search_path), dropped when it ends. Without a server
// the tests skip, except under CI=true, where they fail.
const defaultTestURL = "postgres:///postgres_waybill_test?host=/var/run/postgresql"

var (
	pgOnce sync.Once
	pgURL  string
	pgErr  error
)

// testURL returns the test database's URL, creating the database if needed.
func testURL(t testing.TB) string {
	t.Helper()
	pgOnce.Do(func() {
		pgURL = os.Getenv("WAYBILL_TEST_PG_URL")
		if pgURL == "" {
			pgURL = defaultTestURL
		}
		pgErr = ensureDatabase(pgURL)
	})
	if pgErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI needs PostgreSQL at %s: %v", pgURL, pgErr)
		}
		t.Skipf("no PostgreSQL at %s (set WAYBILL_TEST_PG_URL): %v", pgURL, pgErr)
	}
	return pgURL
}

// ensureDatabase creates the URL's database, through the server's postgres database, unless
// it exists.
func ensureDatabase(dsn string) error {
	u, err := url.Parse(dsn)
	if err != nil {
		return err
	}
	name := u.Path[1:]
	admin := *u
	admin.Path = "/postgres"
	db, err := sql.Open("pgx", admin.String())
	if err != nil {
		return err
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM pg_database WHERE datname = $1`, name).Scan(&n); err != nil {
		return err
	}
	if n == 0 {
		if _, err := db.Exec(`CREATE DATABASE "` + name + `"`); err != nil {
			return err
		}
	}
	return nil
}

// freshSchema creates an empty schema for the test, dropped when it ends, and returns a URL
// whose connections use it.
func freshSchema(t testing.TB) string {
	t.Helper()
	base := testURL(t)
	b := make([]byte, 6)
	rand.Read(b)
	schema := "t_" + hex.EncodeToString(b)
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(`CREATE SCHEMA ` + schema); err != nil {
		admin.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		defer admin.Close()
		if _, err := admin.Exec(`DROP SCHEMA ` + schema + ` CASCADE`); err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	u, _ := url.Parse(base)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// openFresh opens a migrated database in a fresh schema with waybill-pg's own open, and closes
// it when the test ends.
func openFresh(t testing.TB) *store.DB {
	db, _ := openFreshPlain(t)
	return db
}

// openFreshPlain is openFresh that also opens a plain pool on the schema (storetest.Opener).
func openFreshPlain(t testing.TB) (*store.DB, *sql.DB) {
	t.Helper()
	u := freshSchema(t)
	db, err := open(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, plainPG(t, u)
}

// plainPG opens a plain pool on the database at url, for tests to read and damage rows
// through, and closes it when the test ends.
func plainPG(t testing.TB, url string) *sql.DB {
	raw, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	return raw
}
