package store

import (
	"context"
	"database/sql"
	"reflect"
	"strings"
	"testing"
)

// shippingRatesTable is shipping_rates as migrations 003 to 031 left it.
const shippingRatesTable = `CREATE TABLE shipping_rates (id TEXT PRIMARY KEY, account_id TEXT NOT NULL REFERENCES accounts (id),
	shipment_id TEXT NOT NULL REFERENCES shipments (id), carrier TEXT NOT NULL, service TEXT NOT NULL, currency TEXT NOT NULL,
	postage_cents BIGINT NOT NULL, surcharges_cents BIGINT NOT NULL, total_cents BIGINT NOT NULL, retail_cents BIGINT NOT NULL,
	estimated_delivery_days BIGINT NOT NULL, estimated_delivery_date TEXT NOT NULL, rate_metadata TEXT NOT NULL,
	position BIGINT NOT NULL, created_at BIGINT NOT NULL)`

// TestBoughtRatesAreQuotes: migration 034 takes a database whose labels refer to rows of
// shipping_rates to one where each refers to its shipment's quote: shipping_rates is gone, so is
// the labels' foreign key to it, and every label keeps every column, its indexes and the
// foreign keys to it; a label whose rate row is not one of its shipment's quotes at the price
// bought fails the migration, naming the label.
func TestBoughtRatesAreQuotes(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name        string
		rateTotal   int64 // the rate row's total; its quote's is 100
		wantFailure bool
	}{
		{"rate row as its quote", 100, false},
		{"rate row at another price", 101, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db, path := openAt(t)
			s := openShipmentAt(t, db, "acme")
			labelID, rateID := db.NewID(), db.NewID()
			err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
				if err := insertQuote(ctx, tx, s.ID, rateID); err != nil {
					return err
				}
				_, err := tx.ExecContext(ctx, `INSERT INTO shipping_labels (id, account_id, shipment_id, shipping_rate_id, carrier,
					service, tracking_code, status, substatus, label_format, last_event_at, first_carrier_scan_at, delivered_at,
					finished_at, created_at, updated_at, insured_cents, insurance_cents, poll_at, poll_failures, packed,
					commercial_invoice) VALUES ($1, $2, $3, $4, 'POSTLINE', 'X', 'TRK1', 'DELIVERED', 'HANDED', 'PDF', 7, 8, 9,
					10, 11, 12, 5000, 25, 13, 2, $5, TRUE)`, labelID, s.AccountID, s.ID, rateID, []byte{5, 1, 2, 3})
				if err != nil {
					return err
				}
				_, err = tx.ExecContext(ctx, `INSERT INTO tracking_events (id, account_id, label_id, status, message,
					occurred_at, source, created_at) VALUES ($1, $2, $3, 'DELIVERED', 'Delivered', 7, 'carrier', 7)`,
					db.NewID(), s.AccountID, labelID)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			before := labelRow(t, db, labelID)
			db.Close()

			// The database as migration 033 left it: labels refer to rows of shipping_rates.
			raw, err := sql.Open("sqlite3", "file:"+path+"?_foreign_keys=off")
			if err != nil {
				t.Fatal(err)
			}
			// (SQLite's documented way to add a foreign key in place: the table's SQL rewritten.)
			labels := tableSQL(t, raw, "shipping_labels")
			withFK := strings.Replace(labels, "shipping_rate_id      TEXT NOT NULL,",
				"shipping_rate_id      TEXT NOT NULL REFERENCES shipping_rates (id),", 1)
			if withFK == labels {
				t.Fatalf("no shipping_rate_id column in %s", labels)
			}
			for _, stmt := range []string{shippingRatesTable, `PRAGMA writable_schema = ON`,
				`UPDATE sqlite_master SET sql = '` + strings.ReplaceAll(withFK, "'", "''") + `' WHERE name = 'shipping_labels'`,
				`PRAGMA writable_schema = OFF`, `DELETE FROM schema_migrations WHERE version = 34`} {
				if _, err := raw.Exec(stmt); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := raw.Exec(`INSERT INTO shipping_rates VALUES ($1, $2, $3, 'POSTLINE', 'X', 'USD', 100, 0, $4, 100, 3,
				'2026-11-25T00:00:00Z', '{}', 0, 0)`, rateID, s.AccountID, s.ID, tt.rateTotal); err != nil {
				t.Fatal(err)
			}
			raw.Close()
			if fks := foreignKeys(t, path, "shipping_labels"); !strings.Contains(fks, "shipping_rates") {
				t.Fatalf("before migration 034, labels' foreign keys: %s; want one to shipping_rates", fks)
			}

			db, err = OpenSQLite(ctx, path)
			if tt.wantFailure {
				if err == nil || !strings.Contains(err.Error(), "label "+labelID) {
					t.Fatalf("opening with a label's rate at another price: %v; want migration 034 to fail naming the label", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if after := labelRow(t, db, labelID); !reflect.DeepEqual(after, before) {
				t.Errorf("the label after migration 034:\n%v\nwant as before\n%v", after, before)
			}
			if fks := foreignKeys(t, path, "shipping_labels"); strings.Contains(fks, "shipping_rates") || !strings.Contains(fks, "shipments") {
				t.Errorf("labels' foreign keys after migration 034: %s; want those to accounts, shipments, manifests only", fks)
			}
			if fks := foreignKeys(t, path, "tracking_events"); !strings.Contains(fks, "shipping_labels") {
				t.Errorf("tracking events' foreign keys: %s; want the one to shipping_labels", fks)
			}
			var tables int
			if err := db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE name = 'shipping_rates'`).Scan(&tables); err != nil || tables != 0 {
				t.Errorf("tables shipping_rates after migration 034: %d (%v); want none", tables, err)
			}
			for _, index := range []string{"shipping_labels_account_created", "shipping_labels_account_status",
				"shipping_labels_account_carrier_status", "shipping_labels_carrier_poll"} {
				if plan := queryPlan(t, db, `SELECT id FROM shipping_labels INDEXED BY `+index+` WHERE account_id = $1`, s.AccountID); plan == "" {
					t.Errorf("index %s: no plan", index)
				}
			}
			l, err := db.Label(ctx, s.AccountID, labelID)
			if err != nil || l.ShippingRate == nil || l.ShippingRate.ID != rateID || l.ShippingRate.TotalCents != 100+25 {
				t.Errorf("the label read after migration 034: %+v, %v; want its quote %s, insured (100 + 25 cents)", l, err, rateID)
			}
		})
	}
}

// labelRow is every column of a label, as text.
func labelRow(t *testing.T, db *DB, id string) []string {
	t.Helper()
	rows, err := db.r.Query(`SELECT `+labelTableColumns+` FROM shipping_labels WHERE id = $1`, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if !rows.Next() {
		t.Fatalf("no label %s", id)
	}
	if err := rows.Scan(ptrs...); err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(cols))
	for i, v := range vals {
		out[i] = cols[i] + "=" + v.String
	}
	return out
}

// tableSQL is the CREATE TABLE statement SQLite keeps for table.
func tableSQL(t *testing.T, db *sql.DB, table string) string {
	t.Helper()
	var stmt string
	if err := db.QueryRow(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = $1`, table).Scan(&stmt); err != nil {
		t.Fatal(err)
	}
	return stmt
}

// foreignKeys are the tables table's foreign keys refer to, one after the other.
func foreignKeys(t *testing.T, path, table string) string {
	t.Helper()
	db, err := sql.Open("sqlite3", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT "table" FROM pragma_foreign_key_list($1)`, table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

// labelTableColumns are shipping_labels' columns in their table's order (migrations 003 to 027).
const labelTableColumns = `id, account_id, shipment_id, shipping_rate_id, carrier, service, tracking_code, status,
	substatus, label_format, last_event_at, first_carrier_scan_at, delivered_at, finished_at, created_at, updated_at,
	insured_cents, insurance_cents, rendered, manifest_id, poll_at, poll_failures, packed, commercial_invoice`
