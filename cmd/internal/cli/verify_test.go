package cli

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/waybill/waybill/cmd/internal/clitest"
	"github.com/waybill/waybill/store"
)

// TestVerify: `waybill verify` on SQLite (cmd/waybill-pg runs the same test on PostgreSQL;
// cmd/waybill's TestReadCommandsNeedTheDatabase, the refusal of a -db that names no file).
func TestVerify(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.db")
	db, err := store.OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	plain, err := sql.Open("sqlite3", "file:"+path+"?_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { plain.Close() })
	clitest.Verify(t, db, plain, func(args ...string) (string, error) {
		return runCLI(t, append([]string{"verify", "-db", path}, args...)...)
	})
}
