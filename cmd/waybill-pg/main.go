// Command waybill-pg is waybill on PostgreSQL: the same commands and flags as cmd/waybill (both
// are package cli's), with -db / WAYBILL_DB a postgres:// URL. Any number of waybill-pg
// processes may share one database.
package main

import (
	"context"
	"database/sql"
	"fmt"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/waybill/waybill/cmd/internal/cli"
	"github.com/waybill/waybill/store"
)

// postgres is how this binary opens its database.
var postgres = cli.Database{
	Default: "postgres:///waybill?host=/var/run/postgresql",
	Help:    "PostgreSQL URL",
	Open:    open,
	Missing: missing,
}

func main() { cli.Main(postgres) }

// open connects to the PostgreSQL database at url and applies the migrations (under a lock, so
// processes starting together on a fresh database do not race).
func open(ctx context.Context, url string) (*store.DB, error) {
	// Requests, the webhook, import and billing workers share the pool; PostgreSQL's default
	// max_connections (100) leaves room for several processes at 20 each.
	return store.Open(ctx, "pgx", url, store.PostgreSQL, 20)
}

// missing reports a database that holds no waybill tables (no migration applied to its schema),
// or that cannot be reached, without writing to it.
func missing(url string) error {
	db, err := sql.Open("pgx", url)
	if err != nil {
		return err
	}
	defer db.Close()
	var table sql.NullString
	if err := db.QueryRow(`SELECT to_regclass('schema_migrations')::text`).Scan(&table); err != nil {
		return err
	}
	if !table.Valid {
		return fmt.Errorf("no waybill database at %s: no migration applied", url)
	}
	return nil
}
