// Command waybill serves the waybill API on an embedded SQLite database and administers its
// accounts and tokens. Its commands and flags are package cli's, shared with cmd/waybill-pg.
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	_ "github.com/mattn/go-sqlite3"

	"github.com/waybill/waybill/cmd/internal/cli"
	"github.com/waybill/waybill/store"
)

// sqlite is how this binary opens its database.
var sqlite = cli.Database{Default: "waybill.db", Help: "SQLite database path", Open: store.OpenSQLite, Missing: missing}

// missing reports a database file that is not there.
func missing(path string) error {
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("no database at %s: %w", path, err)
	}
	return nil
}

func main() { cli.Main(sqlite) }

// run is cli.Run on SQLite, for the tests.
func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	return cli.Run(ctx, sqlite, args, getenv, stdin, stdout, stderr)
}
