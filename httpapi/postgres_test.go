package httpapi

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	sqlite3 "github.com/mattn/go-sqlite3"

	"github.com/waybill/waybill/store"
)

// TestSQLRunsOnPostgreSQL checks that the store's SQL is portable (DESIGN §1): it replays the
// golden files (every endpoint) on SQLite through a driver that records every distinct
// statement, then has a real PostgreSQL server run the recorded migrations and PREPARE each
// query (parse, resolve names, infer parameter types).
//
// WAYBILL_TEST_PSQL_DB names a database that psql may reset (.ci/run creates one). Without it
// the test skips, except under CI, where it must run.
func TestSQLRunsOnPostgreSQL(t *testing.T) {
	dbName := os.Getenv("WAYBILL_TEST_PSQL_DB")
	psql, err := exec.LookPath("psql")
	if dbName == "" || err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI needs psql (%v) and WAYBILL_TEST_PSQL_DB (%q)", err, dbName)
		}
		t.Skip("set WAYBILL_TEST_PSQL_DB to a PostgreSQL database psql may reset")
	}

	rec := &recorder{seen: map[string]bool{}}
	files, err := filepath.Glob("../testdata/*/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("golden files: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(filepath.Dir(file))+"/"+filepath.Base(file), ".txtar"), func(t *testing.T) {
			runGolden(t, newEnvWith(t, openRecording(t, rec)), file)
		})
	}

	var script bytes.Buffer
	script.WriteString("\\set ON_ERROR_STOP 1\nDROP SCHEMA IF EXISTS public CASCADE;\nCREATE SCHEMA public;\n")
	schema, stmts := rec.statements()
	for _, s := range schema {
		script.WriteString(s + ";\n")
	}
	script.WriteString("\\set ON_ERROR_STOP 0\n")
	for i, s := range stmts {
		fmt.Fprintf(&script, "\\echo @@%d\nPREPARE p%d AS %s;\n", i, i, s)
	}
	cmd := exec.Command(psql, "-X", "-q", "-d", dbName, "-f", "-")
	cmd.Stdin = &script
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("psql: %v\n%s", err, out.String())
	}
	current := -1
	failed := 0
	for _, line := range strings.Split(out.String(), "\n") {
		if n, ok := strings.CutPrefix(line, "@@"); ok {
			fmt.Sscan(n, &current)
			continue
		}
		if strings.Contains(line, "ERROR:") {
			failed++
			if current < 0 {
				t.Fatalf("schema: %s", line)
			}
			t.Errorf("PostgreSQL refuses:\n%s\n%s", stmts[current], line)
		}
	}
	t.Logf("%d distinct statements prepared on PostgreSQL, %d refused", len(stmts), failed)
	if len(stmts) < 50 {
		t.Errorf("recorded only %d statements; the recorder missed the store's queries", len(stmts))
	}
}

// openRecording opens a fresh SQLite database whose statements rec records. It goes through
// store.Open, the path for any *sql.DB, with one connection for reads and writes alike.
func openRecording(t *testing.T, rec *recorder) *store.DB {
	t.Helper()
	dsn := "file:" + filepath.Join(t.TempDir(), "rec.db") + "?_busy_timeout=10000&_foreign_keys=on&_txlock=immediate"
	sqldb := sql.OpenDB(recordingConnector{dsn: dsn, rec: rec})
	sqldb.SetMaxOpenConns(1)
	db, err := store.Open(context.Background(), sqldb)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// recorder keeps each distinct statement once, in order, the schema's apart from the queries.
type recorder struct {
	mu            sync.Mutex
	seen          map[string]bool
	schema, query []string
}

var ddl = regexp.MustCompile(`(?i)^\s*(CREATE|ALTER|DROP|PRAGMA)\b`)

func (r *recorder) add(q string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen[q] {
		return
	}
	r.seen[q] = true
	if ddl.MatchString(q) {
		r.schema = append(r.schema, q)
	} else {
		r.query = append(r.query, q)
	}
}

func (r *recorder) statements() (schema, query []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.schema), slices.Clone(r.query)
}

type recordingConnector struct {
	dsn string
	rec *recorder
}

func (c recordingConnector) Connect(context.Context) (driver.Conn, error) {
	conn, err := c.Driver().Open(c.dsn)
	if err != nil {
		return nil, err
	}
	return recordingConn{conn, c.rec}, nil
}

func (c recordingConnector) Driver() driver.Driver { return &sqlite3.SQLiteDriver{} }

// recordingConn exposes only Prepare and BeginTx of the driver's connection, so that
// database/sql sends every statement through Prepare, where it is recorded.
type recordingConn struct {
	driver.Conn
	rec *recorder
}

func (c recordingConn) Prepare(q string) (driver.Stmt, error) {
	c.rec.add(q)
	return c.Conn.Prepare(q)
}

func (c recordingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
}
