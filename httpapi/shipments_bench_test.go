package httpapi

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/waybill/waybill/store"
	"github.com/waybill/waybill/store/migrate"
)

// BenchmarkCreateShipment measures POST /shipments (validate, rate shop across every built-in
// carrier, store the shipment and its rates in one transaction) beside a bare net/http handler.
func BenchmarkCreateShipment(b *testing.B) {
	e := newEnv(b)
	token := e.tokens["all"]
	benchVsBare(b, e.api, http.StatusCreated, func(base string, i int) *http.Request {
		req, _ := http.NewRequest("POST", base+"/shipments", strings.NewReader(fuzzShipmentBody))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		return req
	})
}

// benchDepth is how many shipments BenchmarkListShipmentsCursor seeds.
const benchDepth = 100_000

// BenchmarkListShipmentsCursor measures GET /shipments?first=50&after=… with the cursor at the
// newest shipment (depth 0) and 99,900 shipments deep in a table of 100,000: keyset pagination
// should cost the same at both.
func BenchmarkListShipmentsCursor(b *testing.B) {
	e := newEnv(b)
	acct := e.accounts["acme"].ID
	keys := seedShipments(b, e.sql, acct, benchDepth)
	token := e.tokens["all"]
	for _, depth := range []int{0, benchDepth - 100} {
		b.Run(fmt.Sprintf("depth=%d", depth), func(b *testing.B) {
			after := url.QueryEscape(e.api.docs.sealCursor(encodeCursor(keys[depth])))
			benchVsBare(b, e.api, http.StatusOK, func(base string, i int) *http.Request {
				req, _ := http.NewRequest("GET", base+"/shipments?first=50&after="+after, nil)
				req.Header.Set("Authorization", "Bearer "+token)
				return req
			})
		})
	}
}

// rateServices are the seeded rates of each shipment: as many as an ALL quote has.
var rateServices = []string{"S1", "S2", "S3", "S4", "S5", "S6", "S7", "S8", "S9"}

// seedShipments bulk-inserts n shipments with nine rates each for the account, in one
// transaction with prepared statements, and returns their keys newest first.
func seedShipments(b *testing.B, db *sql.DB, accountID string, n int) []store.Key {
	b.Helper()
	const request = `{"origin":{"name":"A","street1":"1 Main St","city":"Los Angeles","state":"CA","zip":"90058","country":"US"},` +
		`"destination":{"name":"B","street1":"5 Broadway","city":"New York","state":"NY","zip":"10001","country":"US"},` +
		`"return_address":{"name":"A","street1":"1 Main St","city":"Los Angeles","state":"CA","zip":"90058","country":"US"},` +
		`"parcel":{"length":10,"width":8,"height":4,"length_unit":"IN","weight":20,"weight_unit":"OZ"}}`
	start := store.Micros(testStart) - int64(n)*1000
	keys := make([]store.Key, n)
	err := func() error {
		tx, err := db.Begin()
		if err != nil {
			return err
		}
		defer tx.Rollback()
		ship, err := tx.Prepare(`INSERT INTO shipments (id, account_id, status, brand, carrier, ship_date, rate_shopping_profile,
			rate_shopping_strategy, label_format, custom_reference_1, custom_reference_2, request, created_at, updated_at)
			VALUES ($1, $2, 'OPEN', 'Acme', NULL, '2026-11-22', 'default', 'ALL', 'PDF', NULL, NULL, '', $3, $3)`)
		if err != nil {
			return err
		}
		defer ship.Close()
		req, err := tx.Prepare(`INSERT INTO shipment_requests (shipment_id, request) VALUES ($1, $2)`)
		if err != nil {
			return err
		}
		defer req.Close()
		rate, err := tx.Prepare(`INSERT INTO shipment_quotes (shipment_id, position, id, carrier, service, currency,
			postage_cents, surcharges_cents, total_cents, retail_cents, estimated_delivery_at, estimated_delivery_days,
			usps_zone, country_zone, billable_weight, actual_oz_weight, billable_oz_weight, dim_factor, dim_threshold, volume,
			surcharges, carrier_version)
			VALUES ($1, $2, $3, 'POSTLINE', $4, 'USD', 928, 19, 947, 1184, $5, 5, 8, 0, 31, 20, 31, 166, 1728, 320, '{"FUEL":19}', 0)`)
		if err != nil {
			return err
		}
		defer rate.Close()
		delivery := store.Micros(time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC))
		for i := 0; i < n; i++ {
			id := fmt.Sprintf("00000000-0000-7000-9000-%012x", i)
			at := start + int64(i)*1000
			if _, err := ship.Exec(id, accountID, at); err != nil {
				return err
			}
			if _, err := req.Exec(id, request); err != nil {
				return err
			}
			for p, svc := range rateServices {
				rid := fmt.Sprintf("00000000-0000-7000-a%03x-%012x", p, i)
				if _, err := rate.Exec(id, p, rid, svc, delivery); err != nil {
					return err
				}
			}
			keys[n-1-i] = store.Key{CreatedAt: at, ID: id}
		}
		if err := migrate.FillChecksums(context.Background(), tx); err != nil {
			return err
		}
		return tx.Commit()
	}()
	if err != nil {
		b.Fatal(err)
	}
	// Fold the seeded rows into the database file so both depths read it the same way.
	if _, err := db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`); err != nil {
		b.Fatal(err)
	}
	return keys
}

// BenchmarkGetShipment measures GET /shipments/{id} of a purchased shipment (its stored
// response) beside a bare net/http handler.
func BenchmarkGetShipment(b *testing.B) {
	e := newEnv(b)
	s := e.createShipment(b, "CHEAPEST", "PDF")
	bought := decode[shipmentAnswer](b, e.do("POST", "/shipments/"+s.Data.ID+"/rates/"+s.Data.ShippingRates[0].ID, "all", nil), http.StatusOK)
	token := e.tokens["all"]
	for _, path := range []string{"/shipments/" + s.Data.ID, "/shipping_labels/" + bought.Data.ShippingLabel.ID} {
		b.Run(strings.Split(path, "/")[1], func(b *testing.B) {
			benchVsBare(b, e.api, http.StatusOK, func(base string, _ int) *http.Request {
				req, _ := http.NewRequest("GET", base+path, nil)
				req.Header.Set("Authorization", "Bearer "+token)
				return req
			})
		})
	}
}

// BenchmarkListShipmentsStored measures GET /shipments?first=50 over shipments created through
// the API (so each has its stored response) beside a bare net/http handler.
func BenchmarkListShipmentsStored(b *testing.B) {
	e := newEnv(b)
	for range 120 {
		e.createShipment(b, "CHEAPEST", "PDF")
	}
	token := e.tokens["all"]
	benchVsBare(b, e.api, http.StatusOK, func(base string, _ int) *http.Request {
		req, _ := http.NewRequest("GET", base+"/shipments?first=50", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		return req
	})
}
