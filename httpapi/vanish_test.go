package httpapi

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/waybill/waybill/store"
)

// TestVanishedDatabase: with the SQLite file deleted under the running API, /healthz and
// every write answer 503 database_unavailable in the JSON error shape (never a 201 into the
// unlinked file), and the log says why.
func TestVanishedDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "waybill.db")
	db, err := store.OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnvWith(t, db, path)
	var logs bytes.Buffer
	e.api.log = slog.New(slog.NewJSONHandler(&logs, nil))
	created := decode[shipmentAnswer](t, e.do("POST", "/shipments", "all", shipmentBody("CHEAPEST", "PDF")), http.StatusCreated)
	if w := e.do("GET", "/healthz", "", nil); w.Code != http.StatusOK {
		t.Fatalf("healthz before = %d; want 200", w.Code)
	}

	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}

	tests := []struct {
		name         string
		method, path string
		token        string
		body         any
	}{
		{"healthz", "GET", "/healthz", "", nil},
		{"create shipment", "POST", "/shipments", "all", shipmentBody("CHEAPEST", "PDF")},
		{"buy", "POST", "/shipments/" + created.Data.ID + "/rates/" + created.Data.ShippingRates[0].ID, "all", nil},
		{"cancel", "PUT", "/shipments/" + created.Data.ID + "/cancel", "all", nil},
		{"webhook", "POST", "/webhooks", "all", `{"url": "https://example.com/hook", "topic": "LABEL_PURCHASED"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := e.do(tt.method, tt.path, tt.token, tt.body)
			body := decode[struct{ Errors Error }](t, w, http.StatusServiceUnavailable)
			if body.Errors.Code != "database_unavailable" {
				t.Errorf("%s %s = %s; want code database_unavailable", tt.method, tt.path, w.Body)
			}
		})
	}
	t.Run("order import", func(t *testing.T) {
		acme := e.accounts["acme"]
		w := e.postOrder(acme.OrganizationID, acme.IngestSecret, orderBody("V-1"))
		if w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), `"database_unavailable"`) {
			t.Errorf("order import = %d %s; want 503 database_unavailable (never 202 into a lost file)", w.Code, w.Body)
		}
	})
	if !strings.Contains(logs.String(), "was deleted") {
		t.Errorf("log does not say the database file was deleted:\n%s", logs.String())
	}
}
