package httpapi_test

import (
	"context"
	"flag"
	"path/filepath"
	"testing"

	"github.com/waybill/waybill/httpapi/apitest"
	"github.com/waybill/waybill/store"
)

// TestGolden replays every golden file on a fresh SQLite file (cmd/waybill-pg replays them on
// PostgreSQL). go test ./httpapi -update rewrites the response sections.
func TestGolden(t *testing.T) {
	update := flag.Lookup("update").Value.(flag.Getter).Get().(bool)
	apitest.RunGolden(t, "../testdata", func(t testing.TB) *store.DB {
		db, err := store.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "waybill.db"))
		if err != nil {
			t.Fatal(err)
		}
		return db
	}, update)
}
