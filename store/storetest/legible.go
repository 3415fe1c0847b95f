package storetest

import (
	"bytes"
	"context"
	"database/sql"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/store"
)

// Packed values and renderings as the code before migration 028 stored them (made by that code
// from store's boughtShipment): a bought shipment of nine quotes (bought_v4.hex, its tracking
// code filled in a hole; bought.json), its label (label_v3.hex, label.json), and the same
// shipment OPEN under other ids (open_v3.hex, open.json).
//
//go:embed testdata
var fixtures embed.FS

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := fixtures.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	if strings.HasSuffix(name, ".hex") {
		if b, err = hex.DecodeString(string(b)); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

// requestMember is an SQL expression for a text member of shipment_requests.request, as an
// auditor would write it in sqlite3 or psql.
func requestMember(db *store.DB, object, key string) string {
	if db.Dialect() == store.PostgreSQL {
		return "request::json -> '" + object + "' ->> '" + key + "'"
	}
	return "json_extract(request, '$." + object + "." + key + "')"
}

// legible reads what sqlite3 or psql show of a shipment: its destination's city, and its
// quotes' ids and total cents, in order.
func legible(t *testing.T, db *store.DB, shipmentID string) (city string, quotes []string) {
	t.Helper()
	ctx := context.Background()
	if err := sqlOf(db).QueryRowContext(ctx, `SELECT `+requestMember(db, "destination", "city")+` FROM shipment_requests
		WHERE shipment_id = $1`, shipmentID).Scan(&city); err != nil {
		t.Fatal(err)
	}
	rows, err := sqlOf(db).QueryContext(ctx, `SELECT id, total_cents FROM shipment_quotes WHERE shipment_id = $1
		ORDER BY position`, shipmentID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var cents int64
		if err := rows.Scan(&id, &cents); err != nil {
			t.Fatal(err)
		}
		quotes = append(quotes, fmt.Sprintf("%s %d", id, cents))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return city, quotes
}

// quotesOf is what legible shows of rates.
func quotesOf(rates []shipping.Rate) []string {
	var out []string
	for _, r := range rates {
		out = append(out, fmt.Sprintf("%s %d", r.ID, r.TotalCents))
	}
	return out
}

// rendered is s as the store renders it: JSON, its label_url marked.
func rendered(t *testing.T, s *shipping.Shipment) string {
	t.Helper()
	if s.ShippingLabel != nil {
		s.ShippingLabel.LabelURL = store.LabelURLMark + s.ShippingLabel.ID
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// covers reports whether the JSON value got holds every member of want, with the same value.
func covers(t *testing.T, got, want string) bool {
	t.Helper()
	decode := func(s string) any {
		d := json.NewDecoder(strings.NewReader(s))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	var sub func(g, w any) bool
	sub = func(g, w any) bool {
		switch w := w.(type) {
		case map[string]any:
			gm, ok := g.(map[string]any)
			if !ok {
				return false
			}
			for k, wv := range w {
				if gv, ok := gm[k]; !ok || !sub(gv, wv) {
					return false
				}
			}
			return true
		case []any:
			ga, ok := g.([]any)
			if !ok || len(ga) != len(w) {
				return false
			}
			for i := range w {
				if !sub(ga[i], w[i]) {
					return false
				}
			}
			return true
		default:
			return reflect.DeepEqual(g, w)
		}
	}
	return sub(decode(got), decode(want))
}

// legacyMeta is a rate_metadata as stored before the real product's field names were adopted;
// legacyMetaRead is how it reads.
const legacyMeta = `{"zone":5,"billable_weight_oz":12,"surcharges":[{"type":"FUEL","amount":0.45},{"type":"DAS","amount":3.95}]}`

var legacyMetaRead = shipping.RateMetadata{USPSZone: 5, BillableWeight: 12,
	WeightMetadata: shipping.WeightMetadata{BillableOzWeight: 12, DimFactor: 166, DimThreshold: 1728},
	SurchargesMetadata: []shipping.SurchargeMetadata{{SurchargeType: "FUEL", Surcharge: shipping.USD(45)},
		{SurchargeType: "DAS", Surcharge: shipping.USD(395)}}}

// LegibleRecords: migration 028 makes every shipment stored before it legible, whichever form
// it was stored in — packed as the code of migrations 024 to 025 wrote it (OPEN, and bought with
// a label; the fixtures), with its quotes in shipments.rates (migrations 017 to 024), or in rows
// of shipping_rates (before 017) — and each then reads, renders and buys as before. db is a
// fresh database, which reopen opens (migrating it) with a plain pool on it; it is taken back to
// before migration 028 and opened again.
func LegibleRecords(t *testing.T, reopen func() (*store.DB, *sql.DB)) {
	ctx := context.Background()
	db := register(reopen())
	acct := newAccount(t, db)
	at := time.Date(2026, 11, 26, 1, 2, 3, 456789000, time.UTC)
	now := time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC)
	mid, old := testShipment(db, acct.ID, now), testShipment(db, acct.ID, now)
	const openID, boughtID, labelID = "shp_1a1b2c3d4e5f60718293a4b5", "shp_0a1b2c3d4e5f60718293a4b5", "lbl_0a1b2c3d4e5f60718293a4b5"
	err := inTx(ctx, db, func(ctx context.Context, tx *sql.Tx) error {
		// Back to before migration 028, and so before 034 (shipping_rates as 017 left it) and 039
		// (which repacks the label's value of format 3), and 041 (the checksums of the tables 028 makes).
		for _, stmt := range []string{`DROP TABLE shipment_quotes`, `DROP TABLE shipment_requests`, `CREATE TABLE shipping_rates (
			id TEXT PRIMARY KEY, account_id TEXT NOT NULL REFERENCES accounts (id),
			shipment_id TEXT NOT NULL REFERENCES shipments (id), carrier TEXT NOT NULL, service TEXT NOT NULL,
			currency TEXT NOT NULL, postage_cents BIGINT NOT NULL, surcharges_cents BIGINT NOT NULL,
			total_cents BIGINT NOT NULL, retail_cents BIGINT NOT NULL, estimated_delivery_days BIGINT NOT NULL,
			estimated_delivery_date TEXT NOT NULL, rate_metadata TEXT NOT NULL, position BIGINT NOT NULL,
			created_at BIGINT NOT NULL)`,
			`DELETE FROM schema_migrations WHERE version IN (28, 34, 38, 39, 41)`} {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		insert := func(id, status string, carrier, request, rendered, rates any, packed []byte, created time.Time) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO shipments (id, account_id, status, brand, carrier, ship_date,
				rate_shopping_profile, rate_shopping_strategy, label_format, request, rendered, rates, packed, created_at, updated_at)
				VALUES ($1, $2, $3, 'default', $4, '2026-11-26', 'default', 'ALL', 'PDF', $5, $6, $7, $8, $9, $9)`,
				id, acct.ID, status, carrier, request, rendered, rates, packed, store.Micros(created))
			return err
		}
		if err := insert(openID, shipping.StatusOpen, nil, "", nil, nil, fixture(t, "open_v3.hex"), at); err != nil {
			return err
		}
		if err := insert(boughtID, shipping.StatusPurchased, "SPEEDSHIP", "", nil, nil, fixture(t, "bought_v4.hex"), at); err != nil {
			return err
		}
		// The bought rate's row and the label, as the buy wrote them.
		meta := `{"usps_zone":8,"billable_weight":20,"weight_metadata":{"actual_oz_weight":20,"billable_oz_weight":20,` +
			`"dim_factor":139,"dim_threshold":1728,"volume":320},"surcharges_metadata":[{"surcharge_type":"FUEL",` +
			`"surcharge":{"amount":0.4,"currency":"USD"}}],"carrier_version":1}`
		if _, err := tx.ExecContext(ctx, `INSERT INTO shipping_rates (id, account_id, shipment_id, carrier, service, currency,
			postage_cents, surcharges_cents, total_cents, retail_cents, estimated_delivery_days, estimated_delivery_date,
			rate_metadata, position, created_at) VALUES ($1, $2, $3, 'SPEEDSHIP', 'EXPRESS', 'USD', 1408, 40, 1448, 1810, 3,
			'2026-11-26T01:02:03Z', $4, 4, $5)`, "rate_00000000000000000000000b", acct.ID, boughtID, meta, store.Micros(at)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO shipping_labels (id, account_id, shipment_id, shipping_rate_id, carrier,
			service, tracking_code, status, label_format, created_at, updated_at, insurance_cents, packed)
			VALUES ($1, $2, $3, $4, 'SPEEDSHIP', 'EXPRESS', '1Z999AA10123456784', 'PRE_TRANSIT', 'PDF', $5, $5, 0, $6)`,
			labelID, acct.ID, boughtID, "rate_00000000000000000000000b", store.Micros(at), fixture(t, "label_v3.hex")); err != nil {
			return err
		}
		request, err := json.Marshal(map[string]any{"origin": mid.Origin, "destination": mid.Destination,
			"return_address": mid.ReturnAddress, "parcel": mid.Parcel})
		if err != nil {
			return err
		}
		metaJSON, err := json.Marshal(testRateMetadata)
		if err != nil {
			return err
		}
		// Between migrations 017 and 024: the request, the quotes and the rendering in columns.
		var quotes []string
		for _, r := range mid.ShippingRates {
			quotes = append(quotes, fmt.Sprintf(`{"id":%q,"carrier":%q,"service":%q,"currency":"USD","postage_cents":%d,`+
				`"surcharges_cents":%d,"total_cents":%d,"retail_cents":%d,"estimated_delivery_days":%d,"estimated_delivery_date":%q,"rate_metadata":%s}`,
				r.ID, r.Carrier, r.Service, r.PostageCents, r.SurchargesCents, r.TotalCents, r.RetailCents, r.EstimatedDeliveryDays,
				r.EstimatedDeliveryDate.Format(time.RFC3339), metaJSON))
		}
		mid.Brand, mid.ShipDate, mid.ShippingRates[0].ShipmentID = "default", "2026-11-26", mid.ID
		if err := insert(mid.ID, shipping.StatusOpen, nil, string(request), rendered(t, mid), "["+strings.Join(quotes, ",")+"]",
			nil, now); err != nil {
			return err
		}
		// Before migration 017: the quotes rows of shipping_rates (inserted out of order).
		if err := insert(old.ID, shipping.StatusOpen, nil, string(request), nil, nil, nil, now); err != nil {
			return err
		}
		for _, i := range []int{2, 0, 1} {
			r, meta := old.ShippingRates[i], string(metaJSON)
			if i == 1 {
				meta = legacyMeta // as rates were stored before the real product's field names
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO shipping_rates (id, account_id, shipment_id, carrier, service, currency,
				postage_cents, surcharges_cents, total_cents, retail_cents, estimated_delivery_days, estimated_delivery_date,
				rate_metadata, position, created_at) VALUES ($1, $2, $3, $4, $5, 'USD', $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
				r.ID, acct.ID, old.ID, r.Carrier, r.Service, r.PostageCents, r.SurchargesCents, r.TotalCents, r.RetailCents,
				r.EstimatedDeliveryDays, r.EstimatedDeliveryDate.Format(time.RFC3339), meta, i, store.Micros(now)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	db = register(reopen())
	// Renderings kept as text (before migration 024) are packed now (migration 038).
	var text int
	if err := sqlOf(db).QueryRowContext(ctx, `SELECT COUNT(*) FROM shipments WHERE rendered IS NOT NULL`).Scan(&text); err != nil || text != 0 {
		t.Errorf("%d shipments keep a rendering as text (%v); want none", text, err)
	}

	for _, tt := range []struct {
		id, rendering string
		quotes        int
	}{
		{openID, string(fixture(t, "open.json")), 9},
		{boughtID, string(fixture(t, "bought.json")), 9},
		{mid.ID, rendered(t, mid), 3},
		{old.ID, "", 3},
	} {
		got, err := db.Shipment(ctx, acct.ID, tt.id)
		if err != nil {
			t.Fatalf("shipment %s: %v", tt.id, err)
		}
		if city, quotes := legible(t, db, tt.id); city != got.Destination.City || city == "" ||
			!reflect.DeepEqual(quotes, quotesOf(got.ShippingRates)) || len(quotes) != tt.quotes {
			t.Errorf("shipment %s as sqlite3 or psql show it: city %q, quotes %q; want %q and %q (%d)", tt.id, city, quotes,
				got.Destination.City, quotesOf(got.ShippingRates), tt.quotes)
		}
		if tt.rendering == "" {
			continue
		}
		// Its record renders what its stored rendering shows (fields added to the API since are
		// not in the rendering), which it answers still.
		if again := rendered(t, got); !covers(t, again, tt.rendering) {
			t.Errorf("shipment %s rendered from its record:\n%s\ndoes not show its stored rendering\n%s", tt.id, again, tt.rendering)
		}
		if stored, err := db.ShipmentJSON(ctx, acct.ID, tt.id); err != nil || stored != tt.rendering {
			t.Errorf("ShipmentJSON(%s) = %.80s…, %v; want its rendering as stored", tt.id, stored, err)
		}
	}
	if l, err := db.LabelJSON(ctx, acct.ID, labelID); err != nil || l != string(fixture(t, "label.json")) {
		t.Errorf("LabelJSON = %.80s…, %v; want the label's rendering as stored", l, err)
	}
	r, err := db.ShipmentRecord(ctx, boughtID)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Quotes) != 9 || r.Quotes[4].TotalCents != 1448 || r.Quotes[4].RetailCents != 1810 || r.Label == nil ||
		r.Request.Destination.City != "New York" {
		t.Errorf("ShipmentRecord(%s) = %+v; want 9 quotes, the 5th of 1448 cents (retail 1810), New York, a label", boughtID, r)
	}
	// The record is read from the rows, not from the packed copy: with the copy damaged it reads
	// the same, while the answer the copy is for is refused.
	if err := inTx(ctx, db, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE shipments SET packed = $1 WHERE id = $2`, []byte{5, 0, 0, 0, 0, 1, 0}, boughtID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if again, err := db.ShipmentRecord(ctx, boughtID); err != nil || !reflect.DeepEqual(again, r) {
		t.Errorf("ShipmentRecord with the packed copy damaged = %+v, %v; want the record as before", again, err)
	}
	if got, err := db.ShipmentJSON(ctx, acct.ID, boughtID); err == nil {
		t.Errorf("ShipmentJSON of a damaged copy = %.60s…; want an error", got)
	}
	// The legacy metadata is read in today's shape, which the quote's columns hold (and billing
	// copies).
	if s, err := db.Shipment(ctx, acct.ID, old.ID); err != nil || !reflect.DeepEqual(s.ShippingRates[1].RateMetadata, legacyMetaRead) {
		t.Errorf("a quote stored with legacy metadata reads %+v (%v); want %+v", s.ShippingRates[1].RateMetadata, err, legacyMetaRead)
	}
	var rates sql.NullString
	var request string
	if err := sqlOf(db).QueryRowContext(ctx, `SELECT rates, request FROM shipments WHERE id = $1`, mid.ID).
		Scan(&rates, &request); err != nil || rates.Valid || request != "" {
		t.Errorf("the row of migrations 017 to 024 after 028: rates %v, request %q (%v); want both moved", rates, request, err)
	}

	// Each buys as any shipment: the label's rate is the quote, the rendering the record's.
	for _, tt := range []struct {
		id   string
		rate int
	}{{openID, 0}, {mid.ID, 0}, {old.ID, 2}} {
		s, err := db.Shipment(ctx, acct.ID, tt.id)
		if err != nil {
			t.Fatal(err)
		}
		bought, stored, err := buyLabel(ctx, db, acct.ID, tt.id, s.ShippingRates[tt.rate].ID, func(context.Context, *shipping.Shipment, shipping.Rate, string, shipping.SerialSource) (string, error) {
			return "TRK" + tt.id[len(tt.id)-8:], nil
		})
		if err != nil {
			t.Fatalf("buy %s: %v", tt.id, err)
		}
		got, err := db.Shipment(ctx, acct.ID, tt.id)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(*got.ShippingLabel.ShippingRate, s.ShippingRates[tt.rate]) {
			t.Errorf("shipment %s: label's rate = %+v; want the quote bought", tt.id, *got.ShippingLabel.ShippingRate)
		}
		if json, err := db.ShipmentJSON(ctx, acct.ID, tt.id); err != nil || json != rendered(t, got) ||
			(stored != "" && stored != json) || bought.Status != shipping.StatusPurchased {
			t.Errorf("shipment %s bought: stored rendering %.80s…, %v; want its record's", tt.id, json, err)
		}
	}
}
