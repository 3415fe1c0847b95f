// Package migrate brings a database's schema and stored rows to the shape the store reads: the
// numbered SQL files of migrations/, applied in order, each in its own transaction with its Go
// step (steps), if it has one, after its SQL.
//
// Migrations are frozen. A migration applied to one database must do the same to every other,
// whenever it runs, so nothing here may change with the running service: the package imports
// only the standard library, never the code that renders, prices or packs at runtime (a test
// lists its dependencies). Where a step needs to read or write a stored shape, it keeps its own
// copy of that shape as it was when the step was written (frozen.go, packed.go, lz.go).
//
// The SQL is written for SQLite and PostgreSQL alike, as the store's is.
package migrate

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Dialect names the engine a database runs on: migrations differ only in locking and in the
// few changes SQLite's ALTER TABLE cannot make.
type Dialect int

const (
	SQLite Dialect = iota
	PostgreSQL
)

//go:embed migrations/*.sql
var files embed.FS

// lockKey is the first key of the PostgreSQL advisory lock migrations run under; the second is
// the schema's name, so databases in different schemas migrate independently.
const lockKey = 0x77617962 // "wayb"

// Apply applies, in order and each in its own transaction, the migrations that the
// schema_migrations table does not list yet, stamping each with now. It runs on one connection
// of db, holding (on PostgreSQL) a session advisory lock, so processes starting together on a
// fresh database migrate one after the other: the second finds every migration applied.
func Apply(ctx context.Context, db *sql.DB, d Dialect, now func() time.Time) error {
	return applyUpTo(ctx, db, d, now, -1)
}

// applyUpTo is Apply of the migrations up to version last (all of them when last is negative):
// a test brings a database to the schema a migration found, then applies the rest.
func applyUpTo(ctx context.Context, db *sql.DB, d Dialect, now func() time.Time, last int) (err error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer conn.Close()
	release, err := hold(ctx, conn, d)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer func() {
		if rerr := release(); err == nil && rerr != nil {
			err = fmt.Errorf("migrate: %w", rerr)
		}
	}()
	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	list, err := migrations()
	if err != nil {
		return err
	}
	m := migrator{conn: conn, dialect: d, now: now}
	for _, f := range list {
		if last >= 0 && f.version > last {
			break
		}
		if err := m.apply(ctx, f); err != nil {
			return fmt.Errorf("migrate %s: %w", f.name, err)
		}
	}
	return nil
}

// hold readies conn for migrating and returns what undoes it: on PostgreSQL the advisory lock,
// taken; on SQLite foreign keys off (outside any transaction), SQLite's way to change a table
// ALTER TABLE cannot (the table rebuilt, then checked before the commit: migrator.apply).
func hold(ctx context.Context, conn *sql.Conn, d Dialect) (release func() error, err error) {
	undo := `PRAGMA foreign_keys = ON`
	var args []any
	if d == PostgreSQL {
		args = []any{lockKey}
		if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1, hashtext(current_schema()))`, args...); err != nil {
			return nil, fmt.Errorf("lock: %w", err)
		}
		undo = `SELECT pg_advisory_unlock($1, hashtext(current_schema()))`
	} else if _, err := conn.ExecContext(ctx, `PRAGMA foreign_keys = OFF`); err != nil {
		return nil, err
	}
	return func() error {
		_, err := conn.ExecContext(context.WithoutCancel(ctx), undo, args...)
		return err
	}, nil
}

// file is one migration: its number, its file's name and its SQL.
type file struct {
	version int
	name    string
	body    string
}

// migrations are the embedded migrations in order.
func migrations() ([]file, error) {
	names, err := fs.Glob(files, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	out := make([]file, 0, len(names))
	for _, name := range names {
		base := strings.TrimPrefix(name, "migrations/")
		version, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil {
			return nil, fmt.Errorf("migrate: %s: name must start with a number", base)
		}
		body, err := files.ReadFile(name)
		if err != nil {
			return nil, err
		}
		out = append(out, file{version, base, string(body)})
	}
	return out, nil
}

// migrator applies migrations on one connection.
type migrator struct {
	conn    *sql.Conn
	dialect Dialect
	now     func() time.Time
}

// apply applies one migration in one transaction, unless it is applied already.
func (m migrator) apply(ctx context.Context, f file) error {
	tx, err := m.conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE version = $1`, f.version).Scan(&n); err != nil || n > 0 {
		return err
	}
	for _, stmt := range splitStatements(f.body) {
		if m.dialect == PostgreSQL {
			// A table SQLite keeps in its key's order; PostgreSQL's tables have no rowid.
			stmt = strings.TrimSuffix(stmt, " WITHOUT ROWID")
		}
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("%w\n%s", err, stmt)
		}
	}
	if step := steps[f.version]; step != nil {
		if err := step(ctx, tx, m.dialect); err != nil {
			return err
		}
	}
	if m.dialect == SQLite {
		if err := foreignKeyCheck(ctx, tx); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
		f.version, f.name, m.now().UnixMicro()); err != nil {
		return err
	}
	return tx.Commit()
}

// foreignKeyCheck fails when a row refers to no row, as SQLite's foreign keys, off while
// migrating, would have refused.
func foreignKeyCheck(ctx context.Context, tx *sql.Tx) error {
	var table string
	var rowid sql.NullInt64
	var parent string
	var fk int
	err := tx.QueryRowContext(ctx, `PRAGMA foreign_key_check`).Scan(&table, &rowid, &parent, &fk)
	if err == nil {
		return fmt.Errorf("a row of %s (rowid %d) refers to no row of %s", table, rowid.Int64, parent)
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	return nil
}

// splitStatements splits a migration on semicolons that end a line; migrations keep to that.
func splitStatements(sqlText string) []string {
	var out []string
	for _, s := range strings.Split(sqlText, ";\n") {
		var lines []string
		for _, l := range strings.Split(s, "\n") {
			if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "--") {
				lines = append(lines, l)
			}
		}
		if stmt := strings.TrimSuffix(strings.TrimSpace(strings.Join(lines, "\n")), ";"); stmt != "" {
			out = append(out, stmt)
		}
	}
	return out
}
