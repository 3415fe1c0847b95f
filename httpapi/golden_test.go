package httpapi_test

import (
	"context"
	"flag"
	"path/filepath"
	"testing"

	"github.com/waybill/waybill/httpapi"
	"github.com/waybill/waybill/httpapi/apitest"
	"github.com/waybill/waybill/store"
)

// TestGolden replays every golden file on a fresh SQLite file (cmd/waybill-pg replays them on
// PostgreSQL). go test ./httpapi -update rewrites the response sections.
func TestGolden(t *testing.T) {
	update := flag.Lookup("update").Value.(flag.Getter).Get().(bool)
	apitest.RunGolden(t, "../testdata", openSQLite, update)
}

// TestWebhookGuardGolden replays testdata/webhooks/private/*.txtar against an API that refuses
// private webhook targets (TestGolden's API allows them, so these files sit one level deeper).
func TestWebhookGuardGolden(t *testing.T) {
	update := flag.Lookup("update").Value.(flag.Getter).Get().(bool)
	files, err := filepath.Glob("../testdata/webhooks/private/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files under testdata/webhooks/private (%v)", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			e := apitest.NewEnvWith(t, openSQLite(t), func(c *httpapi.Config) { c.WebhookAllowPrivate = false })
			apitest.RunFile(t, e, file, update)
		})
	}
}

// openSQLite opens a fresh SQLite file for one test.
func openSQLite(t testing.TB) *store.DB {
	db, err := store.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "waybill.db"))
	if err != nil {
		t.Fatal(err)
	}
	return db
}
