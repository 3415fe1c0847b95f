package clitest

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/waybill/waybill/httpapi"
	"github.com/waybill/waybill/store"
)

// Verify is the test of `waybill verify` on either database. db is a fresh database and plain
// a plain pool on it, through which the test changes a record and damages a stored copy as an
// operator with sqlite3 or psql would; verify runs the command on the same database with the
// arguments given and returns what it printed.
//
// The database holds shipments of two days, bought and unbought, domestic and international.
// Verify finds nothing; then a changed destination city (in the legible request, which no longer
// matches its checksum) and a damaged label copy are reported, each on one line, and -since leaves out the older day's shipments.
func Verify(t *testing.T, db *store.DB, plain *sql.DB, verify func(args ...string) (string, error)) {
	ctx := context.Background()
	days := []time.Time{time.Date(2026, 11, 20, 15, 0, 0, 0, time.UTC), time.Date(2026, 11, 24, 15, 0, 0, 0, time.UTC)}
	day := days[0]
	db.Now = func() time.Time { return day }
	call := apiCaller(t, db)
	older := call("POST", "/shipments", domesticShipment("Boston"))
	buy(call, older)
	call("POST", "/shipments", internationalShipment)
	day = days[1]
	call("POST", "/shipments", domesticShipment("New York"))
	newer := buy(call, call("POST", "/shipments", internationalShipment))

	expect := func(want string, args ...string) {
		t.Helper()
		out, err := verify(args...)
		if out != want || (err == nil) != (want == "") {
			t.Errorf("verify %q printed %q and returned %v; want %q and an error if that is not empty", args, out, err, want)
		}
	}
	line := func(id, kind, field string) string {
		b, _ := json.Marshal(struct {
			ID    string `json:"id"`
			Kind  string `json:"kind"`
			Field string `json:"field"`
		}{id, kind, field})
		return string(b) + "\n"
	}
	expect("")

	olderID := older["id"].(string)
	if _, err := plain.ExecContext(ctx, `UPDATE shipment_requests SET request = replace(request, '"Boston"', '"Cambridge"')
		WHERE shipment_id = $1`, olderID); err != nil {
		t.Fatal(err)
	}
	expect(line(olderID, "shipment", "request"))
	expect("", "-since", "2026-11-24")

	label := newer["shipping_label"].(map[string]any)["id"].(string)
	var packed []byte
	if err := plain.QueryRowContext(ctx, `SELECT packed FROM shipping_labels WHERE id = $1`, label).Scan(&packed); err != nil {
		t.Fatal(err)
	}
	packed[len(packed)-1] ^= 1
	if _, err := plain.ExecContext(ctx, `UPDATE shipping_labels SET packed = $1 WHERE id = $2`, packed, label); err != nil {
		t.Fatal(err)
	}
	expect(line(label, "label", "packed"), "-since", "2026-11-24")
	expect(line(olderID, "shipment", "request")+line(label, "label", "packed"), "-since", "2026-11-20")
}

// apiCaller creates an account with a token holding every scope, and returns a function that
// sends a request to the API on db as that account and returns the answer's data.
func apiCaller(t *testing.T, db *store.DB) func(method, path, body string) map[string]any {
	ctx := context.Background()
	acct, err := db.CreateAccount(ctx, "acme", "")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := db.CreateToken(ctx, acct.ID, httpapi.AllScopes)
	if err != nil {
		t.Fatal(err)
	}
	api, err := httpapi.New(httpapi.Config{DB: db, BaseURL: "https://waybill.test"})
	if err != nil {
		t.Fatal(err)
	}
	return func(method, path, body string) map[string]any {
		t.Helper()
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+tok.Token)
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		api.ServeHTTP(w, r)
		if w.Code != http.StatusOK && w.Code != http.StatusCreated {
			t.Fatalf("%s %s: %d %s", method, path, w.Code, w.Body)
		}
		var v struct{ Data map[string]any }
		if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		return v.Data
	}
}

// buy buys the shipment's first rate and returns the shipment bought.
func buy(call func(method, path, body string) map[string]any, s map[string]any) map[string]any {
	rate := s["shipping_rates"].([]any)[0].(map[string]any)["id"].(string)
	return call("POST", "/shipments/"+s["id"].(string)+"/rates/"+rate, "")
}

func domesticShipment(city string) string {
	return `{"origin": {"name": "Acme", "street1": "1 Main St", "city": "Los Angeles", "state": "CA", "zip": "90058", "country": "US"},
		"destination": {"name": "Jane Doe", "street1": "5 Broadway", "city": "` + city + `", "state": "NY", "zip": "10001", "country": "US"},
		"parcel": {"length": 10, "width": 8, "height": 4, "length_unit": "IN", "weight": 20, "weight_unit": "OZ"}}`
}

const internationalShipment = `{"origin": {"name": "Acme Warehouse", "street1": "1 Main St", "city": "Los Angeles", "state": "CA", "zip": "90058", "country": "US"},
	"destination": {"name": "Jane Roe", "street1": "1 Front St W", "city": "Toronto", "state": "ON", "zip": "M5V 2T6", "country": "CA"},
	"parcel": {"length": 10, "width": 8, "height": 4, "length_unit": "IN", "weight": 20, "weight_unit": "OZ"},
	"customs_info": {"customs_signer": "Acme Shipping", "customs_items": [
		{"description": "Cotton T-shirt", "harmonized_system_code": "6109.10.0012", "origin_country": "US", "quantity": 2, "value": 40, "weight": 8, "weight_unit": "OZ"},
		{"description": "Wool scarf", "harmonized_system_code": "6117.10", "origin_country": "PT", "quantity": 1, "value": 25.5, "weight": 4, "weight_unit": "OZ"}]}}`
