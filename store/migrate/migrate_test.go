package migrate

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"
)

// migrated is a fresh SQLite database with every migration applied and an account (acct), on
// one connection, its foreign keys off so that a test inserts only the rows it needs: the rows
// as the code before a migration stored them.
func migrated(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(t.TempDir(), "test.db")+"?_busy_timeout=10000&_synchronous=OFF&_journal_mode=MEMORY")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	if err := Apply(context.Background(), db, SQLite, time.Now); err != nil {
		t.Fatal(err)
	}
	run(t, db, `PRAGMA foreign_keys = OFF`,
		`INSERT INTO accounts (id, name, organization_id, ingest_secret, created_at) VALUES ('acct', 'acme', 'org', 's', 0)`)
	return db
}

// inTx runs fn in one transaction of db and returns its error, committing if there is none.
func inTx(db *sql.DB, fn func(tx *sql.Tx) error) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// run runs the statements on db, failing the test on an error.
func run(t *testing.T, db *sql.DB, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("%v\n%s", err, s)
		}
	}
}

// insertShipment inserts a shipment's row as the code before migration 028 stored it: its
// request in its row, packed a value of then (or NULL).
func insertShipment(t *testing.T, db *sql.DB, id, req string, packed []byte) {
	t.Helper()
	if _, err := db.Exec(`INSERT INTO shipments (id, account_id, status, brand, ship_date, rate_shopping_profile,
		rate_shopping_strategy, label_format, request, packed, created_at, updated_at) VALUES ($1, 'acct', 'OPEN', '',
		'2026-11-22', 'default', 'ALL', 'PDF', $2, $3, 0, 0)`, id, req, packed); err != nil {
		t.Fatal(err)
	}
}

// insertLabel inserts a label of the shipment.
func insertLabel(t *testing.T, db *sql.DB, id, shipmentID string, packed []byte) {
	t.Helper()
	if _, err := db.Exec(`INSERT INTO shipping_labels (id, account_id, shipment_id, shipping_rate_id, carrier, service,
		tracking_code, status, label_format, packed, created_at, updated_at)
		VALUES ($1, 'acct', $2, 'rate', 'POSTLINE', 'X', $3, 'PRE_TRANSIT', 'PDF', $4, 0, 0)`,
		id, shipmentID, "TRK"+id, packed); err != nil {
		t.Fatal(err)
	}
}

// fixture reads a file of testdata: packed values and renderings as the code before migration
// 028 stored them, of a shipment with nine quotes, bought (bought_v4.hex, its tracking code
// filled in a hole; bought.json), and OPEN (open_v3.hex, open.json), and of a label
// (label_v3.hex, label.json).
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
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

// wantFlags checks the flag of every row query selects (id, flag) against want, which must name
// each row.
func wantFlags(t *testing.T, db *sql.DB, query string, want map[string]bool) {
	t.Helper()
	rows, err := db.Query(query)
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

// TestMarkReturns: migration 025's Go step marks the return shipments stored before it — with
// their request in their row, or in a packed value of then — and only them, over more than one
// batch of rows.
func TestMarkReturns(t *testing.T) {
	db := migrated(t)
	want := map[string]bool{}
	for i := range batchSize + 3 {
		id := fmt.Sprintf("s%04d", i)
		want[id] = i%7 == 3
		req := `{"origin":{},"destination":{},"return_address":{},"parcel":{},"is_return":` + strconv.FormatBool(want[id]) + `}`
		insertShipment(t, db, id, req, nil)
	}
	insertShipment(t, db, "packed-outbound", "", fixture(t, "open_v3.hex"))
	want["packed-outbound"] = false
	// A return whose request is in its row beside a packed value of today (not of then).
	insertShipment(t, db, "packed-today", `{"origin":{},"destination":{},"return_address":{},"parcel":{},"is_return":true}`,
		[]byte{packRendering, 0, 0, 0, 0, 0})
	want["packed-today"] = true
	if err := inTx(db, func(tx *sql.Tx) error { return markReturns(context.Background(), tx, SQLite) }); err != nil {
		t.Fatal(err)
	}
	wantFlags(t, db, `SELECT id, is_return FROM shipments`, want)
}

// TestMarkReturnsDamaged: a packed value that does not read (one of format 3, as stored at
// migration 025) fails the migration, naming its shipment, rather than mark a return outbound.
func TestMarkReturnsDamaged(t *testing.T) {
	db := migrated(t)
	packed := fixture(t, "open_v3.hex")
	packed[len(packed)-1] ^= 0x20
	insertShipment(t, db, "damaged", "", packed)
	err := inTx(db, func(tx *sql.Tx) error { return markReturns(context.Background(), tx, SQLite) })
	if err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("markReturns over a damaged value = %v; want an error naming shipment damaged", err)
	}
}

// TestMarkCommercialInvoices: migration 027's Go step marks the labels of the international
// shipments stored before it, and only them.
func TestMarkCommercialInvoices(t *testing.T) {
	db := migrated(t)
	want := map[string]bool{}
	for _, tt := range []struct {
		id, req       string
		packed        []byte
		international bool
	}{
		{"abroad", `{"origin":{"country":"US"},"destination":{"country":"JP"},"return_address":{},"parcel":{},
			"customs_info":{"customs_signer":"A","customs_items":[]}}`, nil, true},
		{"home", `{"origin":{"country":"US"},"destination":{"country":"US"},"return_address":{},"parcel":{},
			"customs_info":{"customs_signer":"A","customs_items":[]}}`, nil, false},
		{"abroad-undeclared", `{"origin":{"country":"US"},"destination":{"country":"CA"},"return_address":{},"parcel":{},
			"customs_info":null}`, nil, false},
		{"packed-home", "", fixture(t, "open_v3.hex"), false},
	} {
		insertShipment(t, db, tt.id, tt.req, tt.packed)
		insertLabel(t, db, "l-"+tt.id, tt.id, nil)
		want["l-"+tt.id] = tt.international
	}
	if err := inTx(db, func(tx *sql.Tx) error { return markCommercialInvoices(context.Background(), tx, SQLite) }); err != nil {
		t.Fatal(err)
	}
	wantFlags(t, db, `SELECT id, commercial_invoice FROM shipping_labels`, want)
}

func TestDecodeRates(t *testing.T) {
	// shipments.rates as written between migrations 017 and 024.
	s := `[{"id":"r1","carrier":"USPS","service":"Ground","currency":"USD","postage_cents":700,"surcharges_cents":45,` +
		`"total_cents":745,"retail_cents":912,"estimated_delivery_days":3,"estimated_delivery_date":"2026-11-25T00:00:00Z",` +
		`"rate_metadata":{"usps_zone":8,"billable_weight":31,"weight_metadata":{"actual_oz_weight":20,"billable_oz_weight":31,` +
		`"dim_factor":166,"dim_threshold":1728,"volume":320},"surcharges_metadata":[{"surcharge_type":"FUEL","surcharge":{"amount":0.19,"currency":"USD"}}]}}]`
	got, err := decodeRates(s, "s1")
	if err != nil || len(got) != 1 || got[0].TotalCents != 745 || got[0].PostageCents != 700 || got[0].RetailCents != 912 ||
		got[0].Price != (money{7.45, "USD"}) || got[0].ShipmentID != "s1" {
		t.Errorf("decodeRates(%s) = %+v, %v", s, got, err)
	}
	if _, err := decodeRates(`[{"id":1}]`, "s1"); err == nil {
		t.Error("decodeRates of a malformed value: no error")
	}
}

// TestOlderRateMetadata: rate metadata written before the real product's field names were
// adopted reads in today's shape; today's reads as it is.
func TestOlderRateMetadata(t *testing.T) {
	got, older, err := readRateMetadata(`{"zone":8,"billable_weight_oz":31,"surcharges":[{"type":"FUEL","amount":0.19},{"type":"DAS","amount":3.95}]}`)
	want := rateMetadata{USPSZone: 8, BillableWeight: 31,
		WeightMetadata:     weightMetadata{BillableOzWeight: 31, DimFactor: 166, DimThreshold: 1728},
		SurchargesMetadata: []surchargeMetadata{{"FUEL", money{0.19, "USD"}}, {"DAS", money{3.95, "USD"}}}}
	if err != nil || !older || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("readRateMetadata(older) = %+v, %v, %v; want %+v, true", got, older, err, want)
	}
	if _, older, err := readRateMetadata(`{"usps_zone":5,"billable_weight":12,"surcharges_metadata":[]}`); err != nil || older {
		t.Errorf("readRateMetadata(today's) = older %v, %v; want today's", older, err)
	}
}

// TestEachInBatches: every row the query selects is handed to each once, in id order, across
// batches, each writing as it goes; an error of each ends the walk with it.
func TestEachInBatches(t *testing.T) {
	db := migrated(t)
	ctx := context.Background()
	run(t, db, `CREATE TABLE walk (id TEXT PRIMARY KEY, v TEXT NOT NULL, done INTEGER NOT NULL)`)
	var want []string
	for i := range 2*batchSize + 3 {
		id := fmt.Sprintf("r%04d", i)
		want = append(want, id+"="+strconv.Itoa(i))
		run(t, db, `INSERT INTO walk (id, v, done) VALUES ('`+id+`', '`+strconv.Itoa(i)+`', 0)`)
	}
	err := inTx(db, func(tx *sql.Tx) error {
		var got []string
		if err := eachInBatches(ctx, tx, `SELECT id, v FROM walk WHERE id > $1 AND done = 0 ORDER BY id LIMIT $2`,
			func(id, v string) error {
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

// TestMigrationForeignKeyCheck: on SQLite, where migrations run with foreign keys off, a
// migration that leaves a row referring to no row fails, naming the table, and leaves nothing.
func TestMigrationForeignKeyCheck(t *testing.T) {
	ctx := context.Background()
	db := migrated(t)
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	m := migrator{conn: conn, dialect: SQLite, now: time.Now}
	err = m.apply(ctx, file{999, "999_orphan.sql", `INSERT INTO tracking_events (id, account_id, label_id,
		status, message, occurred_at, source, created_at) VALUES ('e1', 'nobody', 'no-label', 'DELIVERED', 'm', 0, 'carrier', 0);`})
	if err == nil || !strings.Contains(err.Error(), "tracking_events") {
		t.Fatalf("a migration leaving an orphan row: %v; want an error naming tracking_events", err)
	}
	var n int
	if err := conn.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM tracking_events) + (SELECT COUNT(*) FROM schema_migrations
		WHERE version = 999)`).Scan(&n); err != nil || n != 0 {
		t.Errorf("after the failed migration: %d rows of it (%v); want none", n, err)
	}
}
