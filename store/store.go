// Package store persists waybill's data through database/sql.
//
// The SQL is written once for SQLite (the embedded default) and PostgreSQL: $N placeholders
// numbered in order of first appearance, RETURNING, ON CONFLICT, TEXT/BIGINT/BOOLEAN columns and
// no engine-specific functions. Timestamps are BIGINT microseconds since the epoch.
//
// The package never imports a driver: the binary and the tests register github.com/mattn/go-sqlite3.
package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/store/internal/groupcommit"
)

// ErrNotFound reports a missing row, or a row that belongs to another account: the domain's
// shipping.ErrNotFound, so that the domain's rules know it (shipping.Refused).
var ErrNotFound = shipping.ErrNotFound

// DB is waybill's database. Writes go through one connection (SQLite has a single writer and
// every write transaction begins IMMEDIATE); reads use a separate pool.
type DB struct {
	w, r    *sql.DB
	dialect Dialect
	// group is SQLite's committer (nil on PostgreSQL, whose writers run side by side).
	group *groupcommit.Committer
	file  *fileWatch // the SQLite file; nil on other databases
	prep  prepared   // hot read statements, prepared once

	tokens      ttlCache[Principal] // by token hash; the revoke path invalidates
	revocations revocationMark      // the revocations the token cache has seen
	brands      ttlCache[string]    // account brands by account id
	serials     serialBlocks        // tracking serials reserved ahead
	holds       holds               // the shipments and orders this process is buying labels for

	// Now, NewID and Rand are the store's only sources of time, identity and randomness, so
	// tests can make them deterministic.
	Now   func() time.Time
	NewID func() string
	Rand  io.Reader
}

// Dialect names the engine behind a DB. The SQL is the same on both; only locking differs:
// PostgreSQL serves many writers (and processes) at once, so migrations take an advisory lock
// and workers claim rows with FOR UPDATE SKIP LOCKED, where SQLite's single writer already
// serializes.
type Dialect int

const (
	SQLite Dialect = iota
	PostgreSQL
)

//go:embed migrations/*.sql
var migrations embed.FS

// OpenSQLite opens (creating if needed) the SQLite database at path and applies the
// migrations. The caller must have registered the "sqlite3" driver (github.com/mattn/go-sqlite3).
func OpenSQLite(ctx context.Context, path string) (*DB, error) {
	// synchronous=FULL syncs the WAL at every commit, so a committed import, label or charge
	// survives a power loss too, not only a process crash (NORMAL would lose the last commits).
	// _stmt_cache_size keeps each connection's recently used statements prepared.
	params := "_journal_mode=WAL&_busy_timeout=10000&_foreign_keys=on&_synchronous=FULL&_stmt_cache_size=64"
	dsn := "file:" + url.PathEscape(path) + "?" + params
	w, err := sql.Open("sqlite3", dsn+"&_txlock=immediate")
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	// Group commit runs each caller in a savepoint, whose statement journal would otherwise be
	// a temporary file created and removed per savepoint. The writer's one connection is kept.
	if _, err := w.ExecContext(ctx, "PRAGMA temp_store = MEMORY"); err != nil {
		w.Close()
		return nil, err
	}
	r, err := sql.Open("sqlite3", dsn)
	if err != nil {
		w.Close()
		return nil, err
	}
	// Idle readers are kept (as many as may be open), so a burst does not reopen connections
	// and re-prepare statements.
	r.SetMaxOpenConns(8)
	r.SetMaxIdleConns(8)
	db := newDB(w, r, SQLite)
	db.group = groupcommit.New(w)
	if err := db.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	if err := db.fillOutlines(ctx); err != nil {
		db.Close()
		return nil, err
	}
	db.file = watchFile(path)
	return db, nil
}

// Open opens the database of the given dialect (PostgreSQL, say) at dataSourceName through the
// registered database/sql driver (pgx's "pgx", say), with one pool of at most maxConns
// connections for reads and writes, and applies the migrations. Any number of processes may
// open one PostgreSQL database at once: the migrations run once, under a lock.
func Open(ctx context.Context, driver, dataSourceName string, dialect Dialect, maxConns int) (*DB, error) {
	sqldb, err := sql.Open(driver, dataSourceName)
	if err != nil {
		return nil, err
	}
	sqldb.SetMaxOpenConns(maxConns)
	sqldb.SetMaxIdleConns(maxConns) // as many as may be open: a burst reuses connections and their prepared statements
	sqldb.SetConnMaxLifetime(30 * time.Minute)
	sqldb.SetConnMaxIdleTime(5 * time.Minute)
	db := newDB(sqldb, sqldb, dialect)
	err = sqldb.PingContext(ctx)
	if err == nil {
		err = db.migrate(ctx)
	}
	if err == nil {
		err = db.fillOutlines(ctx)
	}
	if err != nil {
		sqldb.Close()
		return nil, err
	}
	return db, nil
}

func newDB(w, r *sql.DB, dialect Dialect) *DB {
	return &DB{w: w, r: r, dialect: dialect, Now: time.Now, NewID: NewUUIDv7, Rand: rand.Reader}
}

// Dialect reports the engine behind db.
func (db *DB) Dialect() Dialect { return db.dialect }

// skipLocked ends a worker's claim subquery: on PostgreSQL, rows another transaction holds are
// skipped rather than waited for (so concurrent claimers never queue behind or deadlock on each
// other); SQLite's single writer needs nothing.
func (db *DB) skipLocked() string {
	if db.dialect == PostgreSQL {
		return " FOR UPDATE SKIP LOCKED"
	}
	return ""
}

// lock takes the row locks of the rows a SELECT matches, for the rest of the transaction, on
// PostgreSQL; SQLite's transactions run one at a time and need none. Transactions that change
// the same rows take these locks first, in one order, so that they wait for each other instead
// of deadlocking, and none reads a row another is about to change. The lock is the one an
// UPDATE takes (FOR NO KEY UPDATE): it does not wait for transactions that only insert rows
// referring to the locked one (a buy emitting a webhook record for a subscription).
func (db *DB) lock(ctx context.Context, tx *sql.Tx, query string, args ...any) error {
	if db.dialect != PostgreSQL {
		return nil
	}
	rows, err := tx.QueryContext(ctx, query+" FOR NO KEY UPDATE", args...)
	if err != nil {
		return err
	}
	return rows.Close()
}

// forUpdate ends a SELECT that claims the rows it reads for the rest of the transaction: on
// PostgreSQL it locks them (a concurrent claimer waits, then reads them as the first left
// them); SQLite's transactions run one at a time and need nothing.
func (db *DB) forUpdate() string {
	if db.dialect == PostgreSQL {
		return " FOR UPDATE"
	}
	return ""
}

// bytewise is an ORDER BY term that orders a text column by its bytes on both databases:
// SQLite's default, whereas PostgreSQL follows the database's locale unless told otherwise.
func (db *DB) bytewise(column string) string {
	if db.dialect == PostgreSQL {
		return column + ` COLLATE "C"`
	}
	return column
}

// Close closes both pools.
func (db *DB) Close() error {
	db.closePrepared()
	if db.group != nil {
		db.group.Close()
	}
	err := db.w.Close()
	if db.r != db.w {
		err = errors.Join(err, db.r.Close())
	}
	return err
}

// Ping reports whether the database answers, and still is the one opened (ErrUnavailable).
func (db *DB) Ping(ctx context.Context) error {
	if err := db.checkFile(); err != nil {
		return err
	}
	var one int
	return db.r.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}

// inTx runs fn in one write transaction, committing when fn returns nil, and returns only after
// the commit that holds fn's writes. On SQLite, concurrent callers share one transaction (see
// groupcommit); fn's ctx is the caller's without its cancellation, so a caller that goes away
// never breaks a transaction it shares with others. On PostgreSQL every call is its own
// transaction. fn must not call inTx. inTx refuses to start (ErrUnavailable) once the database
// file has vanished.
func (db *DB) inTx(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	if err := db.checkFile(); err != nil {
		return err
	}
	if db.group != nil {
		return db.group.Run(ctx, fn)
	}
	return groupcommit.RunTx(ctx, db.w, fn)
}

// writer is what write's statements run on: a transaction, or the PostgreSQL pool.
type writer interface {
	querier
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// write runs fn, whose statements need no transaction around them (one statement, say), and
// returns after they are all durable. On SQLite they run in inTx (group commit); on PostgreSQL
// each is a transaction of its own, so a one-statement write is one round trip instead of
// three (BEGIN, the statement, COMMIT).
func (db *DB) write(ctx context.Context, fn func(ctx context.Context, w writer) error) error {
	if db.dialect == PostgreSQL {
		return fn(ctx, db.w)
	}
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error { return fn(ctx, tx) })
}

// sqlStmt is one SQL statement and its arguments.
type sqlStmt struct {
	query string
	args  []any
}

// execAll runs the statements in order.
func execAll(ctx context.Context, w writer, stmts []sqlStmt) error {
	for _, s := range stmts {
		if _, err := w.ExecContext(ctx, s.query, s.args...); err != nil {
			return err
		}
	}
	return nil
}

// writeAll writes the statements (INSERTs of new rows, say) as one unit and returns once it is
// durable. On SQLite they run in order in inTx. On PostgreSQL they are one statement, each but
// the last a data-modifying WITH of the last, which commits on its own: one round trip instead
// of BEGIN, each statement and COMMIT. PostgreSQL runs the parts of a statement in no set order
// and checks foreign keys at its end, so the statements must not read each other's rows. Each
// statement's arguments are its placeholders, $1 to the highest.
func (db *DB) writeAll(ctx context.Context, stmts []sqlStmt) error {
	if db.dialect != PostgreSQL {
		return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error { return execAll(ctx, tx, stmts) })
	}
	var args []any
	queries := make([]string, len(stmts))
	for i, s := range stmts {
		queries[i], args = s.query, append(args, s.args...)
	}
	_, err := db.w.ExecContext(ctx, oneStatement(queries), args...)
	return err
}

// oneStatements holds oneStatement's answers by their queries (joined by NUL): a create makes
// its statement once per number of quotes.
var oneStatements sync.Map // string → string

// placeholder is a $N placeholder; the store's SQL holds no other $.
var placeholder = regexp.MustCompile(`\$[0-9]+`)

// oneStatement is the queries as one PostgreSQL statement (writeAll): each but the last a
// data-modifying WITH, every query's placeholders numbered after those of the queries before.
func oneStatement(queries []string) string {
	key := strings.Join(queries, "\x00")
	if s, ok := oneStatements.Load(key); ok {
		return s.(string)
	}
	var b strings.Builder
	last := 0 // the highest placeholder of the queries so far
	for i, q := range queries {
		first, high := last, last
		q = placeholder.ReplaceAllStringFunc(q, func(p string) string {
			n, _ := strconv.Atoi(p[1:])
			high = max(high, first+n)
			return "$" + strconv.Itoa(first+n)
		})
		last = high
		switch {
		case len(queries) == 1:
			b.WriteString(q)
		case i == 0:
			b.WriteString("WITH w0 AS (" + q + ")")
		case i < len(queries)-1:
			b.WriteString(", w" + strconv.Itoa(i) + " AS (" + q + ")")
		default:
			b.WriteString(" " + q)
		}
	}
	s, _ := oneStatements.LoadOrStore(key, b.String())
	return s.(string)
}

// now is the store's clock in the stored unit.
func (db *DB) now() int64 { return Micros(db.Now()) }

// Micros converts t to the stored timestamp unit.
func Micros(t time.Time) int64 { return t.UnixMicro() }

// Time converts a stored timestamp back; the zero value stays zero.
func Time(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return time.UnixMicro(us).UTC()
}

// stamp converts a stored timestamp to the API's timestamp type.
func stamp(us int64) shipping.Timestamp { return shipping.Timestamp{Time: Time(us)} }

// nullStamp converts a nullable stored timestamp to the API's timestamp type.
func nullStamp(us sql.NullInt64) *shipping.Timestamp { return shipping.Stamp(NullTime(us)) }

// NullTime converts a nullable stored timestamp.
func NullTime(us sql.NullInt64) *time.Time {
	if !us.Valid {
		return nil
	}
	t := Time(us.Int64)
	return &t
}

// randomBytes reads n bytes from db.Rand.
func (db *DB) randomBytes(n int) ([]byte, error) {
	b := make([]byte, n)
	_, err := io.ReadFull(db.Rand, b)
	return b, err
}

// NewUUIDv7 returns a time-ordered random UUID (RFC 9562 version 7).
func NewUUIDv7() string {
	var b [16]byte
	rand.Read(b[:])
	ms := uint64(time.Now().UnixMilli())
	for i := 0; i < 6; i++ {
		b[i] = byte(ms >> (40 - 8*i))
	}
	b[6] = b[6]&0x0f | 0x70
	b[8] = b[8]&0x3f | 0x80
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	hex.Encode(out[9:13], b[4:6])
	hex.Encode(out[14:18], b[6:8])
	hex.Encode(out[19:23], b[8:10])
	hex.Encode(out[24:36], b[10:16])
	out[8], out[13], out[18], out[23] = '-', '-', '-', '-'
	return string(out[:])
}

// migrationLock is the first key of the PostgreSQL advisory lock migrations run under; the
// second is the schema's name, so databases in different schemas migrate independently.
const migrationLock = 0x77617962 // "wayb"

// migrate applies, in order and each in its own transaction, the embedded migrations that the
// schema_migrations table does not list yet. It runs on one connection, holding (on
// PostgreSQL) a connection-level advisory lock, so processes starting together on a fresh database
// migrate one after the other: the second finds every migration applied.
func (db *DB) migrate(ctx context.Context) (err error) {
	conn, err := db.w.Conn(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer conn.Close()
	if db.dialect == PostgreSQL {
		if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1, hashtext(current_schema()))`, migrationLock); err != nil {
			return fmt.Errorf("migrate: lock: %w", err)
		}
		defer func() {
			_, uerr := conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1, hashtext(current_schema()))`, migrationLock)
			if err == nil && uerr != nil {
				err = fmt.Errorf("migrate: unlock: %w", uerr)
			}
		}()
	}
	if db.dialect == SQLite {
		// SQLite's way to change a table ALTER TABLE cannot: foreign keys off (outside any
		// transaction), the table rebuilt, then checked (applyMigration) before the commit.
		if _, err := conn.ExecContext(ctx, `PRAGMA foreign_keys = OFF`); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		defer func() {
			_, ferr := conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA foreign_keys = ON`)
			if err == nil && ferr != nil {
				err = fmt.Errorf("migrate: %w", ferr)
			}
		}()
	}
	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return err
	}
	sort.Strings(names)
	for _, name := range names {
		base := strings.TrimPrefix(name, "migrations/")
		version, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil {
			return fmt.Errorf("migrate: %s: name must start with a number", base)
		}
		body, err := migrations.ReadFile(name)
		if err != nil {
			return err
		}
		if err := db.applyMigration(ctx, conn, version, base, string(body)); err != nil {
			return fmt.Errorf("migrate %s: %w", base, err)
		}
	}
	return nil
}

// applyMigration applies one migration in one transaction on conn, unless it is applied already.
func (db *DB) applyMigration(ctx context.Context, conn *sql.Conn, version int, base, body string) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE version = $1`, version).Scan(&n); err != nil || n > 0 {
		return err
	}
	for _, stmt := range splitStatements(body) {
		if db.dialect == PostgreSQL {
			// A table SQLite keeps in its key's order; PostgreSQL's tables have no rowid.
			stmt = strings.TrimSuffix(stmt, " WITHOUT ROWID")
		}
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("%w\n%s", err, stmt)
		}
	}
	if step := migrationSteps[version]; step != nil {
		if err := step(ctx, db, tx); err != nil {
			return err
		}
	}
	if db.dialect == SQLite {
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
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
		version, base, db.now()); err != nil {
		return err
	}
	return tx.Commit()
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
