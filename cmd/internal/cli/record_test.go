package cli

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/waybill/waybill/httpapi"
	"github.com/waybill/waybill/store"
)

// TestInspectAndExport: `inspect shipment` and `export shipments` print a shipment's record
// from the database: its request, its quotes in cents, its label and its events.
func TestInspectAndExport(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "w.db")
	db, err := store.OpenSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
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
	call := func(method, path, body string) map[string]any {
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
	ids := []string{}
	for _, city := range []string{"New York", "Boston"} {
		s := call("POST", "/shipments", `{"origin": {"name": "Acme", "street1": "1 Main St", "city": "Los Angeles", "state": "CA", "zip": "90058", "country": "US"},
			"destination": {"name": "Jane Doe", "street1": "5 Broadway", "city": "`+city+`", "state": "NY", "zip": "10001", "country": "US"},
			"parcel": {"length": 10, "width": 8, "height": 4, "length_unit": "IN", "weight": 20, "weight_unit": "OZ"}}`)
		ids = append(ids, s["id"].(string))
	}
	rates := call("GET", "/shipments/"+ids[0], "")["shipping_rates"].([]any)
	bought := call("POST", "/shipments/"+ids[0]+"/rates/"+rates[0].(map[string]any)["id"].(string), "")
	code := bought["shipping_label"].(map[string]any)["tracking_code"].(string)
	call("POST", "/admin/tracking_events", `{"tracking_code": "`+code+`", "status": "IN_TRANSIT",
		"occurred_at": "`+time.Now().UTC().Add(time.Minute).Format(time.RFC3339)+`", "message": "Picked up"}`)
	db.Close()

	out, err := runCLI(t, "-db", path, "inspect", "shipment", ids[0])
	if err != nil {
		t.Fatal(err)
	}
	var r recordJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("inspect printed %s: %v", out, err)
	}
	var top map[string]json.RawMessage // the record's parts, side by side
	if err := json.Unmarshal([]byte(out), &top); err != nil || top["request"] == nil || top["quotes"] == nil ||
		top["label"] == nil || top["events"] == nil {
		t.Errorf("inspect printed keys %v; want request, quotes, label and events at the top", slices.Collect(maps.Keys(top)))
	}
	if r.ID != ids[0] || r.AccountID != acct.ID || r.Request.Destination.City != "New York" || r.Request.Parcel.Weight != 20 {
		t.Errorf("inspect: id %s, account %s, request %+v; want the shipment as created", r.ID, r.AccountID, r.Request)
	}
	if len(r.Quotes) != len(rates) || r.Quotes[0].TotalCents <= 0 || r.Quotes[0].TotalCents != r.Quotes[0].PostageCents+r.Quotes[0].SurchargesCents {
		t.Errorf("inspect: quotes %+v; want %d, in cents that add up", r.Quotes, len(rates))
	}
	if r.Messages == nil {
		t.Error("inspect: no messages; want the shipment's (an empty list when every carrier quoted)")
	}
	if r.Label == nil || r.Label.TrackingCode == "" || r.Label.ShippingRateID != r.Quotes[0].ID ||
		len(r.Events) != 1 || r.Events[0].Message != "Picked up" || r.Label.Status != "IN_TRANSIT" {
		t.Errorf("inspect: label %+v; want the label bought, with its events", r.Label)
	}
	if _, err := runCLI(t, "-db", path, "inspect", "shipment", "nope"); err == nil || !strings.Contains(err.Error(), "no shipment") {
		t.Errorf("inspect of an unknown id: %v; want no shipment", err)
	}

	for _, c := range []struct {
		since string
		want  int
	}{{"", 2}, {"2000-01-01", 2}, {"2999-01-01", 0}} {
		args := []string{"-db", path, "export", "shipments"}
		if c.since != "" {
			args = append(args, "-since", c.since)
		}
		out, err := runCLI(t, args...)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if out == "" {
			lines = nil
		}
		if len(lines) != c.want {
			t.Errorf("export -since %q: %d lines; want %d", c.since, len(lines), c.want)
		}
		for i, l := range lines {
			if err := json.Unmarshal([]byte(l), &r); err != nil || r.ID != ids[i] {
				t.Errorf("export line %d: %s (%v); want shipment %s", i, l, err, ids[i])
			}
		}
	}
	if _, err := runCLI(t, "-db", path, "export", "shipments", "-since", "yesterday"); err == nil {
		t.Error("export -since yesterday: no error")
	}
}
