package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
)

// TestMarkReturns: migration 025's Go step marks the return shipments stored before it — packed,
// and stored before migration 024 (the request column) — and only them, over more than one
// batch of rows.
func TestMarkReturns(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	acct, err := db.CreateAccount(ctx, "acme", "")
	if err != nil {
		t.Fatal(err)
	}
	addr := shipping.Address{Name: "A", Street1: "1 Main St", City: "Austin", State: "TX", Zip: "78701", Country: "US"}
	want := map[string]bool{}
	for i := range migrationBatch + 3 {
		s := &shipping.Shipment{ID: db.NewID(), AccountID: acct.ID, Status: shipping.StatusOpen, ShipDate: "2026-11-22",
			Origin: addr, Destination: addr, ReturnAddress: addr, RateShoppingProfile: "default", RateShoppingStrategy: "ALL",
			LabelFormat: "PDF", IsReturn: i%7 == 3, ShippingRates: []shipping.Rate{},
			CreatedAt: shipping.Timestamp{Time: time.Now()}, UpdatedAt: shipping.Timestamp{Time: time.Now()}}
		if _, err := db.CreateShipment(ctx, s); err != nil {
			t.Fatal(err)
		}
		want[s.ID] = s.IsReturn
	}
	// As before migration 025: no shipment marked, their requests in shipments.request (as
	// stored before migration 024); and one return and one outbound shipment inserted so.
	err = db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE shipments SET is_return = $1, request = (SELECT request FROM shipment_requests
			WHERE shipment_id = shipments.id)`, false); err != nil {
			return err
		}
		for _, legacy := range []struct {
			id  string
			req string
		}{
			{"legacy-return", `{"origin":{},"destination":{},"return_address":{},"parcel":{},"is_return":true}`},
			{"legacy-outbound", `{"origin":{},"destination":{},"return_address":{},"parcel":{}}`},
		} {
			if _, err := tx.ExecContext(ctx, `INSERT INTO shipments (id, account_id, status, brand, ship_date, rate_shopping_profile,
				rate_shopping_strategy, label_format, request, created_at, updated_at) VALUES ($1, $2, $3, '', '2026-11-22', 'default',
				'ALL', 'PDF', $4, 0, 0)`, legacy.id, acct.ID, shipping.StatusOpen, legacy.req); err != nil {
				return err
			}
			want[legacy.id] = legacy.id == "legacy-return"
		}
		return markReturns(ctx, tx)
	})
	if err != nil {
		t.Fatal(err)
	}
	wantFlags(t, db, `SELECT id, is_return FROM shipments`, want)
}

// TestMarkReturnsDamaged: a packed value that does not read (one of format 3, as stored at
// migration 025) fails the migration, naming its shipment, rather than mark a return outbound.
func TestMarkReturnsDamaged(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	acct, err := db.CreateAccount(ctx, "acme", "")
	if err != nil {
		t.Fatal(err)
	}
	addr := shipping.Address{Name: "A", Street1: "1 Main St", City: "Austin", State: "TX", Zip: "78701", Country: "US"}
	s := &shipping.Shipment{ID: db.NewID(), AccountID: acct.ID, Status: shipping.StatusOpen, ShipDate: "2026-11-22",
		Origin: addr, Destination: addr, ReturnAddress: addr, RateShoppingProfile: "default", RateShoppingStrategy: "ALL",
		LabelFormat: "PDF", IsReturn: true, ShippingRates: []shipping.Rate{},
		CreatedAt: shipping.Timestamp{Time: time.Now()}, UpdatedAt: shipping.Timestamp{Time: time.Now()}}
	if _, err := db.CreateShipment(ctx, s); err != nil {
		t.Fatal(err)
	}
	err = db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		packed := fixture(t, "open_v3.hex")
		packed[len(packed)-1] ^= 0x20
		if _, err := tx.ExecContext(ctx, `UPDATE shipments SET packed = $1, request = '' WHERE id = $2`, packed, s.ID); err != nil {
			return err
		}
		return markReturns(ctx, tx)
	})
	if err == nil || !strings.Contains(err.Error(), s.ID) {
		t.Errorf("markReturns over a damaged value = %v; want an error naming shipment %s", err, s.ID)
	}
}

// wantFlags checks the flag of every row query selects (id, flag) against want, which must name
// each row.
func wantFlags(t *testing.T, db *DB, query string, want map[string]bool) {
	t.Helper()
	rows, err := db.r.QueryContext(context.Background(), query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var id string
		var flag bool
		if err := rows.Scan(&id, &flag); err != nil {
			t.Fatal(err)
		}
		if n++; flag != want[id] {
			t.Errorf("%s: row %s has %v; want %v", query, id, flag, want[id])
		}
	}
	if err := rows.Err(); err != nil || n != len(want) {
		t.Errorf("%s: %d rows read (%v); want %d", query, n, err, len(want))
	}
}

func TestDecodeRates(t *testing.T) {
	// shipments.rates as written between migrations 017 and 024.
	s := `[{"id":"r1","carrier":"USPS","service":"Ground","currency":"USD","postage_cents":700,"surcharges_cents":45,` +
		`"total_cents":745,"retail_cents":912,"estimated_delivery_days":3,"estimated_delivery_date":"2026-11-25T00:00:00Z",` +
		`"rate_metadata":{"usps_zone":8,"billable_weight":31,"weight_metadata":{"actual_oz_weight":20,"billable_oz_weight":31,` +
		`"dim_factor":166,"dim_threshold":1728,"volume":320},"surcharges_metadata":[{"surcharge_type":"FUEL","surcharge":{"amount":0.19,"currency":"USD"}}]}}]`
	got, err := decodeRates(s, "s1")
	if err != nil || len(got) != 1 || got[0].TotalCents != 745 || got[0].PostageCents != 700 || got[0].RetailCents != 912 ||
		got[0].Price != shipping.USD(745) || got[0].ShipmentID != "s1" {
		t.Errorf("decodeRates(%s) = %+v, %v", s, got, err)
	}
	if _, err := decodeRates(`[{"id":1}]`, "s1"); err == nil {
		t.Error("decodeRates of a malformed value: no error")
	}
}

// TestEachInBatches: every row the query selects is handed to each once, in id order, across
// batches, each writing as it goes; an error of each ends the walk with it.
func TestEachInBatches(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	const query = `SELECT id, v FROM walk WHERE id > $1 AND done = 0 ORDER BY id LIMIT $2`
	var want []string
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE walk (id TEXT PRIMARY KEY, v TEXT NOT NULL, done INTEGER NOT NULL)`); err != nil {
			return err
		}
		for i := range 2*migrationBatch + 3 {
			id := fmt.Sprintf("r%04d", i)
			want = append(want, id+"="+strconv.Itoa(i))
			if _, err := tx.ExecContext(ctx, `INSERT INTO walk (id, v, done) VALUES ($1, $2, 0)`, id, strconv.Itoa(i)); err != nil {
				return err
			}
		}
		var got []string
		if err := eachInBatches(ctx, tx, query, func(id, v string) error {
			got = append(got, id+"="+v)
			_, err := tx.ExecContext(ctx, `UPDATE walk SET done = 1 WHERE id = $1`, id)
			return err
		}); err != nil {
			return err
		}
		if !slices.Equal(got, want) {
			t.Errorf("eachInBatches walked %d rows (first %v); want %d in id order", len(got), got[:min(3, len(got))], len(want))
		}
		stop := errors.New("stop")
		if err := eachInBatches(ctx, tx, `SELECT id, v FROM walk WHERE id > $1 ORDER BY id LIMIT $2`,
			func(string, string) error { return stop }); !errors.Is(err, stop) {
			t.Errorf("eachInBatches with a failing each = %v; want its error", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
