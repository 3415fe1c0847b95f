package store_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"testing"

	sqlite3 "github.com/mattn/go-sqlite3"

	"github.com/waybill/waybill/store"
	"github.com/waybill/waybill/store/storetest"
)

// SQLite numbers $n placeholders by their first appearance in a query and PostgreSQL by n, so
// a query whose $2 comes before its $1 binds its arguments differently on the two engines.
// TestPlaceholdersInOrder runs the whole store suite through a driver that checks every query
// it is given, so a query built at run time is checked as it is really sent.

var placeholder = regexp.MustCompile(`\$([0-9]+)`)

// placeholdersInOrder reports what is wrong with query's placeholders: their first appearances
// must be $1, $2, … in that order, with none missing.
func placeholdersInOrder(query string) error {
	next := 1
	seen := map[int]bool{}
	for _, m := range placeholder.FindAllStringSubmatch(query, -1) {
		n, _ := strconv.Atoi(m[1])
		if seen[n] {
			continue
		}
		if n != next {
			return fmt.Errorf("$%d appears where $%d should first appear", n, next)
		}
		seen[n] = true
		next++
	}
	return nil
}

func TestPlaceholdersInOrderRule(t *testing.T) {
	for _, c := range []struct {
		query string
		ok    bool
	}{
		{`SELECT 1`, true},
		{`SELECT a FROM t WHERE b = $1 AND c = $2`, true},
		{`UPDATE t SET a = $1 WHERE id = $2 AND a <> $1`, true},
		{`SELECT a FROM t WHERE b = $2 AND c = $1`, false},
		{`SELECT a FROM t WHERE b = $1 AND c = $3`, false},
		{`SELECT a FROM t WHERE b = $10`, false},
	} {
		if err := placeholdersInOrder(c.query); (err == nil) != c.ok {
			t.Errorf("placeholdersInOrder(%q) = %v; want ok %v", c.query, err, c.ok)
		}
	}
}

// checked records the queries that broke the rule.
var checked struct {
	once sync.Once
	mu   sync.Mutex
	bad  map[string]string // query → what is wrong
	seen int               // queries checked
}

func check(query string) {
	err := placeholdersInOrder(query)
	checked.mu.Lock()
	defer checked.mu.Unlock()
	checked.seen++
	if err != nil {
		checked.bad[query] = err.Error()
	}
}

// orderedDriver is SQLite's driver with every query checked.
type orderedDriver struct{ sqlite3.SQLiteDriver }

func (d *orderedDriver) Open(dsn string) (driver.Conn, error) {
	c, err := d.SQLiteDriver.Open(dsn)
	if err != nil {
		return nil, err
	}
	return orderedConn{c.(*sqlite3.SQLiteConn)}, nil
}

// orderedConn checks each query before SQLite's connection runs it.
type orderedConn struct{ c *sqlite3.SQLiteConn }

func (o orderedConn) Prepare(q string) (driver.Stmt, error) { check(q); return o.c.Prepare(q) }
func (o orderedConn) Close() error                          { return o.c.Close() }
func (o orderedConn) Begin() (driver.Tx, error)             { return o.c.Begin() }
func (o orderedConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return o.c.BeginTx(ctx, opts)
}
func (o orderedConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	check(q)
	return o.c.PrepareContext(ctx, q)
}
func (o orderedConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	check(q)
	return o.c.ExecContext(ctx, q, args)
}
func (o orderedConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	check(q)
	return o.c.QueryContext(ctx, q, args)
}

func TestPlaceholdersInOrder(t *testing.T) {
	checked.once.Do(func() {
		checked.bad = map[string]string{}
		sql.Register("sqlite3-ordered", &orderedDriver{})
	})
	storetest.Run(t, func(t testing.TB) (*store.DB, *sql.DB) {
		path := filepath.Join(t.TempDir(), "test.db")
		dsn := "file:" + path + "?_journal_mode=WAL&_busy_timeout=10000&_foreign_keys=on&_txlock=immediate"
		db, err := store.Open(context.Background(), "sqlite3-ordered", dsn, store.SQLite, 1)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db, plainSQLite(t, path)
	})
	checked.mu.Lock()
	defer checked.mu.Unlock()
	if checked.seen < 1000 {
		t.Errorf("the suite sent %d queries through the checking driver; want it to send them all", checked.seen)
	}
	for q, why := range checked.bad {
		t.Errorf("%s:\n%s", why, q)
	}
}
