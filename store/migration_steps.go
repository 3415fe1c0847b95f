package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/store/internal/codec"
)

// migrationSteps are the Go parts of migrations, by version: what SQL alone cannot do (read a
// packed value), run in the migration's transaction after its SQL.
var migrationSteps = map[int]func(ctx context.Context, db *DB, tx *sql.Tx) error{
	25: sqlOnly(markReturns),
	27: sqlOnly(markCommercialInvoices),
	28: sqlOnly(legibleRecords),
	29: rerenderLabelled,
	34: boughtRatesAreQuotes,
	35: plannerStats,
	36: plannerStats,
	37: outlineBeforeCard,
	38: sqlOnly(packRenderings),
}

// sqlOnly is a step that needs nothing of the store but its transaction.
func sqlOnly(step func(ctx context.Context, tx *sql.Tx) error) func(context.Context, *DB, *sql.Tx) error {
	return func(ctx context.Context, _ *DB, tx *sql.Tx) error { return step(ctx, tx) }
}

// rerenderLabelled renders again every shipment that has a label, and its label, from the
// record (migration 029: renderings made before labels showed commercial_invoice_url lack it).
func rerenderLabelled(ctx context.Context, db *DB, tx *sql.Tx) error {
	return eachInBatches(ctx, tx, `SELECT s.id, s.account_id FROM shipments s
		WHERE s.id > $1 AND EXISTS (SELECT 1 FROM shipping_labels l WHERE l.shipment_id = s.id)
		ORDER BY s.id LIMIT $2`, func(id, acct string) error {
		if _, err := db.rerender(ctx, tx, acct, id); err != nil {
			return fmt.Errorf("migration 029: shipment %s: %w", id, err)
		}
		return nil
	})
}

// eachInBatches calls each with the two columns, an id and a text, of every row query selects,
// a batch of migrationBatch rows at a time in id order: query takes the id to start after ($1)
// and the batch's size ($2). A batch is read whole before each runs on it, so each may write.
func eachInBatches(ctx context.Context, tx *sql.Tx, query string, each func(id, v string) error) error {
	for after := ""; ; {
		rows, err := tx.QueryContext(ctx, query, after, migrationBatch)
		if err != nil {
			return err
		}
		var batch [][2]string
		for rows.Next() {
			var r [2]string
			if err := rows.Scan(&r[0], &r[1]); err != nil {
				rows.Close()
				return err
			}
			batch = append(batch, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, r := range batch {
			if err := each(r[0], r[1]); err != nil {
				return err
			}
		}
		if len(batch) < migrationBatch {
			return nil
		}
		after = batch[len(batch)-1][0]
	}
}

// migrationBatch is how many rows a migration's Go step reads at a time.
const migrationBatch = 500

// markReturns sets shipments.is_return (migration 025) on the return shipments stored before
// it, from their requests.
func markReturns(ctx context.Context, tx *sql.Tx) error {
	return markFromRequests(ctx, tx, `SELECT id, id, packed, request FROM shipments WHERE id > $1 ORDER BY id LIMIT $2`,
		`UPDATE shipments SET is_return = $1 WHERE id IN (`, func(s *shipping.Shipment) bool { return s.IsReturn })
}

// markCommercialInvoices sets shipping_labels.commercial_invoice (migration 027) on the labels of
// the international shipments stored before it, from their shipments' requests.
func markCommercialInvoices(ctx context.Context, tx *sql.Tx) error {
	return markFromRequests(ctx, tx, `SELECT l.id, s.id, s.packed, s.request FROM shipping_labels l
			JOIN shipments s ON s.account_id = l.account_id AND s.id = l.shipment_id
			WHERE l.id > $1 ORDER BY l.id LIMIT $2`,
		`UPDATE shipping_labels SET commercial_invoice = $1 WHERE id IN (`, (*shipping.Shipment).HasCustomsDocuments)
}

// markFromRequests sets a flag to true on the rows whose shipment's stored request (packed, or
// in the request column for a row stored before migration 024 or after 028) pick chooses. query
// selects each row's id, its shipment's id, packed value and request column, after the id $1 in
// id order, at most $2; update is the UPDATE setting the flag to $1 up to its IN list. It reads
// every row once, a batch at a time. A request it cannot read (a damaged packed value) fails the
// migration, naming the shipment: guessing would mark it wrongly.
func markFromRequests(ctx context.Context, tx *sql.Tx, query, update string, pick func(*shipping.Shipment) bool) error {
	after := ""
	for {
		rows, err := tx.QueryContext(ctx, query, after, migrationBatch)
		if err != nil {
			return err
		}
		var marked []string
		n := 0
		for rows.Next() {
			var shipmentID, req string
			var packed []byte
			if err := rows.Scan(&after, &shipmentID, &packed, &req); err != nil {
				rows.Close()
				return err
			}
			n++
			var s shipping.Shipment
			r, err := storedRequest(packed, req)
			if err == nil && len(r) > 0 {
				err = setRequest(&s, r)
			}
			if err != nil {
				rows.Close()
				return fmt.Errorf("shipment %s: %w", shipmentID, err)
			}
			if pick(&s) {
				marked = append(marked, after)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(marked) > 0 {
			args := []any{true}
			if _, err := tx.ExecContext(ctx, update+placeholders(&args, marked)+`)`, args...); err != nil {
				return err
			}
		}
		if n < migrationBatch {
			return nil
		}
	}
}

// storedRequest is a shipment's request as its row holds it: in its packed value of format 1
// to 4 (migrations 024 to 028), else in its request column.
func storedRequest(packed []byte, req string) ([]byte, error) {
	if packed == nil || !codec.Legacy(packed) {
		return []byte(req), nil
	}
	p, err := codec.Unpack(packed, 3)
	if err != nil {
		return nil, err
	}
	if len(p) != 3 {
		return nil, codec.ErrMalformed
	}
	return p[1], nil
}

// unpackShipment reads a shipment's packed value of versions 1 to 4, which held its rendering,
// its request and its quotes' cents: it sets on s the request's fields, the quotes (read from
// the rendering, with their cents) and the messages, and returns the rendering and the request.
// Only migration 028 reads these values; it stores what they hold in columns and rows.
func unpackShipment(b []byte, s *shipping.Shipment) (rendering, req []byte, err error) {
	p, err := codec.Unpack(b, 3)
	if err != nil {
		return nil, nil, err
	}
	if len(p) != 3 {
		return nil, nil, fmt.Errorf("shipment %s: a packed value of version %d holds no request", s.ID, b[0])
	}
	rendering, req, cents := p[0], p[1], p[2]
	if err := setRequest(s, req); err != nil {
		return nil, nil, err
	}
	if s.ShippingRates, err = codec.QuotesOf(rendering, cents); err != nil {
		return nil, nil, fmt.Errorf("shipment %s: %w", s.ID, err)
	}
	if s.Messages, err = codec.MessagesOf(rendering); err != nil {
		return nil, nil, fmt.Errorf("shipment %s: messages: %w", s.ID, err)
	}
	return rendering, req, nil
}

// legibleBatch is how many shipments legibleRecords reads at a time.
const legibleBatch = 500

// legibleRecords (migration 028) stores every shipment's request, messages and quotes where
// they are kept now (shipment_requests, shipment_quotes), from where its row held them: a packed
// value of format 1 to 4, repacked as format 5 (the rendering alone, byte for byte the same);
// shipments.request and .rates (migrations 017 to 024), then cleared; or shipments.request and
// rows of shipping_rates (before 017), which stay (a label may refer to one). It reads every shipment
// once, in id order, a batch at a time. A value it cannot read fails the migration, naming the
// shipment: guessing would make a wrong record.
func legibleRecords(ctx context.Context, tx *sql.Tx) error {
	after := ""
	for {
		batch, err := legacyRows(ctx, tx, after)
		if err != nil {
			return err
		}
		for _, r := range batch {
			if err := r.makeLegible(ctx, tx); err != nil {
				return fmt.Errorf("shipment %s: %w", r.id, err)
			}
		}
		if len(batch) < legibleBatch {
			return nil
		}
		after = batch[len(batch)-1].id
	}
}

// legacyRow is what a shipment's row held before migration 028.
type legacyRow struct {
	id, account, request string
	packed               []byte
	rates                sql.NullString
}

// legacyRows reads the batch of shipments after the id.
func legacyRows(ctx context.Context, tx *sql.Tx, after string) ([]legacyRow, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, account_id, request, packed, rates FROM shipments WHERE id > $1
		ORDER BY id LIMIT $2`, after, legibleBatch)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []legacyRow
	for rows.Next() {
		var r legacyRow
		if err := rows.Scan(&r.id, &r.account, &r.request, &r.packed, &r.rates); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// makeLegible stores the row's request, messages and quotes as migration 028 keeps them.
func (r legacyRow) makeLegible(ctx context.Context, tx *sql.Tx) error {
	s := &shipping.Shipment{ID: r.id}
	req, packed, messages := r.request, r.packed, (*string)(nil)
	switch {
	case r.packed != nil && !codec.Legacy(r.packed):
		return nil // stored as migration 028 keeps it
	case r.packed != nil:
		rendering, request, err := unpackShipment(r.packed, s)
		if err != nil {
			return err
		}
		if messages, err = messagesJSON(s.Messages); err != nil {
			return err
		}
		req, packed = string(request), codec.Pack(rendering)
	case r.rates.Valid:
		var err error
		if s.ShippingRates, err = decodeRates(r.rates.String, r.id); err != nil {
			return err
		}
	default:
		if err := rowRates(ctx, tx, r.account, []*shipping.Shipment{s}); err != nil {
			return err
		}
	}
	if err := setRequest(s, []byte(req)); err != nil {
		return fmt.Errorf("request: %w", err)
	}
	quotes, err := quoteRowsOf(r.id, s.ShippingRates)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE shipments SET packed = $1, request = '', rates = NULL WHERE id = $2`,
		packed, r.id); err != nil {
		return err
	}
	return execAll(ctx, tx, append([]sqlStmt{requestInsert(r.id, req, messages)}, quotes.statements()...))
}

// boughtRatesAreQuotes makes each label's rate its shipment's quote (migration 034): it checks
// that every label's shipping_rate_id names a quote of its shipment, at the carrier, service,
// currency and cents of the bought rate's row, then drops shipping_labels' foreign key to
// shipping_rates (on SQLite by rebuilding the table, as SQLite documents for a change ALTER
// TABLE cannot make; migrate runs with foreign keys off and checks them before committing) and
// shipping_rates.
func boughtRatesAreQuotes(ctx context.Context, db *DB, tx *sql.Tx) error {
	var label string
	err := tx.QueryRowContext(ctx, `SELECT l.id FROM shipping_labels l
		LEFT JOIN shipment_quotes q ON q.shipment_id = l.shipment_id AND q.id = l.shipping_rate_id
		LEFT JOIN shipping_rates r ON r.id = l.shipping_rate_id
		WHERE q.id IS NULL OR (r.id IS NOT NULL AND (r.carrier, r.service, r.currency, r.postage_cents, r.surcharges_cents,
			r.total_cents, r.retail_cents) <> (q.carrier, q.service, q.currency, q.postage_cents, q.surcharges_cents,
			q.total_cents, q.retail_cents))
		ORDER BY l.id LIMIT 1`).Scan(&label)
	if err == nil {
		return fmt.Errorf("migration 034: label %s: its rate is not a quote of its shipment at the price bought", label)
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	stmts := []string{`ALTER TABLE shipping_labels DROP CONSTRAINT IF EXISTS shipping_labels_shipping_rate_id_fkey`}
	if db.dialect == SQLite {
		// The table as it is, without the foreign key, under another name; filled, then renamed.
		var table string
		if err := tx.QueryRowContext(ctx, `SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'shipping_labels'`).
			Scan(&table); err != nil {
			return err
		}
		const fk = " REFERENCES shipping_rates (id)"
		head, columns, _ := strings.Cut(table, "(")
		switch {
		case strings.ReplaceAll(head, `"`, "") != "CREATE TABLE shipping_labels " || strings.Count(columns, fk) > 1:
			return fmt.Errorf("migration 034: shipping_labels is not as migration 033 left it: %s", table)
		case !strings.Contains(columns, fk): // as IF EXISTS does on PostgreSQL
			stmts = nil
		default:
			stmts = []string{"CREATE TABLE shipping_labels_034 (" + strings.Replace(columns, fk, "", 1),
				`INSERT INTO shipping_labels_034 SELECT * FROM shipping_labels`,
				`DROP TABLE shipping_labels`,
				`ALTER TABLE shipping_labels_034 RENAME TO shipping_labels`,
				`CREATE INDEX shipping_labels_account_created ON shipping_labels (account_id, created_at, id)`,
				`CREATE INDEX shipping_labels_account_status ON shipping_labels (account_id, status, created_at, id)`,
				`CREATE INDEX shipping_labels_account_carrier_status ON shipping_labels (account_id, carrier, status)`,
				`CREATE INDEX shipping_labels_carrier_poll ON shipping_labels (carrier, status, poll_at)`}
		}
	}
	for _, stmt := range append(stmts, `DROP TABLE shipping_rates`) {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("migration 034: %w\n%s", err, stmt)
		}
	}
	return nil
}

// rowRates reads, in one query, the quotes of shipments created before migration 017 (nil
// ShippingRates): rows of shipping_rates, in their order. Only migration 028 reads them, to
// store them as rows of shipment_quotes.
func rowRates(ctx context.Context, q querier, accountID string, shipments []*shipping.Shipment) error {
	return fillRates(ctx, q, shipments, []any{accountID}, func(in string) string {
		return `SELECT ` + rateColumns + ` FROM shipping_rates WHERE account_id = $1 AND shipment_id IN (` + in + `)
		ORDER BY shipment_id, position`
	}, scanRate)
}

// storedRate is one rate as stored, until migration 028 made them rows of shipment_quotes, in a
// row of shipping_rates (every quote of a shipment created before migration 017; until
// migration 034, also a copy of each rate bought) and as an element of shipments.rates (every
// quote of a shipment created between migrations 017 and 024).
type storedRate struct {
	ID                    string                `json:"id"`
	Carrier               string                `json:"carrier"`
	Service               string                `json:"service"`
	Currency              string                `json:"currency"`
	PostageCents          int64                 `json:"postage_cents"`
	SurchargesCents       int64                 `json:"surcharges_cents"`
	TotalCents            int64                 `json:"total_cents"`
	RetailCents           int64                 `json:"retail_cents"`
	EstimatedDeliveryDays int                   `json:"estimated_delivery_days"`
	EstimatedDeliveryDate string                `json:"estimated_delivery_date"` // RFC 3339
	RateMetadata          shipping.RateMetadata `json:"rate_metadata"`
}

// rate is the shipment's rate sr stores.
func (sr storedRate) rate(shipmentID string) (shipping.Rate, error) {
	r := shipping.Rate{ID: sr.ID, ShipmentID: shipmentID, Carrier: sr.Carrier, Service: sr.Service,
		Price: shipping.USD(sr.TotalCents), EstimatedDeliveryDays: sr.EstimatedDeliveryDays, PostageCents: sr.PostageCents,
		SurchargesCents: sr.SurchargesCents, TotalCents: sr.TotalCents, RetailCents: sr.RetailCents,
		RateMetadata: sr.RateMetadata}
	r.Price.Currency = sr.Currency
	var err error
	r.EstimatedDeliveryDate.Time, err = time.Parse(time.RFC3339, sr.EstimatedDeliveryDate)
	return r, err
}

// decodeRates reads a shipments.rates value (migration 028 does).
func decodeRates(s, shipmentID string) ([]shipping.Rate, error) {
	var stored []storedRate
	if err := json.Unmarshal([]byte(s), &stored); err != nil {
		return nil, err
	}
	rates := make([]shipping.Rate, len(stored))
	for i, sr := range stored {
		var err error
		if rates[i], err = sr.rate(shipmentID); err != nil {
			return nil, err
		}
	}
	return rates, nil
}

// rateColumns are the shipping_rates columns scanRate reads, in its order.
const rateColumns = `id, shipment_id, carrier, service, currency, postage_cents, surcharges_cents, total_cents,
	retail_cents, estimated_delivery_days, estimated_delivery_date, rate_metadata`

// scanRate reads one shipping_rates row selected as rateColumns.
func scanRate(row rowScanner) (shipping.Rate, error) {
	var sr storedRate
	var shipmentID, meta string
	err := row.Scan(&sr.ID, &shipmentID, &sr.Carrier, &sr.Service, &sr.Currency, &sr.PostageCents, &sr.SurchargesCents,
		&sr.TotalCents, &sr.RetailCents, &sr.EstimatedDeliveryDays, &sr.EstimatedDeliveryDate, &meta)
	if err != nil {
		return shipping.Rate{}, err
	}
	if err := codec.DecodeRateMetadata(meta, &sr.RateMetadata); err != nil {
		return shipping.Rate{}, err
	}
	return sr.rate(shipmentID)
}

// plannerStats writes SQLite's fixed planner statistics (migration 035; again in migration 036,
// whose DROP INDEX took its index's row with it): per index, the rows of
// its table, then how many rows share each prefix of its columns (sqlite_stat1's format), for a
// store of a million shipments and labels over ten accounts. ANALYZE sqlite_schema makes the
// connection read them; the others read them when they open.
func plannerStats(ctx context.Context, db *DB, tx *sql.Tx) error {
	if db.dialect != SQLite {
		return nil
	}
	stats := [][3]string{
		{"shipments", "sqlite_autoindex_shipments_1", "1000000 1"},
		{"shipments", "shipments_account_created", "1000000 100000 1 1"},
		{"shipments", "shipments_account_status", "1000000 100000 25000 1 1"},
		{"shipments", "shipments_account_carrier", "1000000 100000 10000 1 1"},
		{"shipments", "shipments_account_brand", "100000 10000 1000 1 1"},
		{"shipments", "shipments_account_order", "100000 10000 2 1 1"},
		{"shipping_labels", "sqlite_autoindex_shipping_labels_1", "1000000 1"},
		{"shipping_labels", "sqlite_autoindex_shipping_labels_2", "1000000 1"},
		{"shipping_labels", "sqlite_autoindex_shipping_labels_3", "1000000 1"},
		{"shipping_labels", "shipping_labels_account_created", "1000000 100000 1 1"},
		{"shipping_labels", "shipping_labels_account_status", "1000000 100000 25000 1 1"},
		{"shipping_labels", "shipping_labels_account_carrier_status", "1000000 100000 10000 2500"},
		{"shipping_labels", "shipping_labels_carrier_poll", "1000000 100000 25000 10"},
	}
	// ANALYZE of a small table creates sqlite_stat1, which SQLite does not let a CREATE TABLE make.
	if _, err := tx.ExecContext(ctx, `ANALYZE schema_migrations`); err != nil {
		return err
	}
	for _, st := range stats {
		if _, err := tx.ExecContext(ctx, `DELETE FROM sqlite_stat1 WHERE tbl = $1 AND idx = $2`, st[0], st[1]); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES ($1, $2, $3)`, st[0], st[1], st[2]); err != nil {
			return err
		}
	}
	_, err := tx.ExecContext(ctx, `ANALYZE sqlite_schema`)
	return err
}

// outlineBeforeCard rebuilds carrier_versions on SQLite with its outline column before its card
// (migration 037), as SQLite documents for a change ALTER TABLE cannot make: the table as it
// will be under another name, filled, the old one dropped, the new one renamed. Nothing refers
// to the table, and it has no index but its key.
func outlineBeforeCard(ctx context.Context, db *DB, tx *sql.Tx) error {
	if db.dialect != SQLite {
		return nil
	}
	for _, stmt := range []string{`CREATE TABLE carrier_versions_037 (
			carrier        TEXT NOT NULL REFERENCES carriers (code),
			version        BIGINT NOT NULL,
			effective_from TEXT NOT NULL,   -- YYYY-MM-DD
			created_at     BIGINT NOT NULL,
			outline        TEXT,            -- JSON: store.cardOutline
			card           TEXT NOT NULL,   -- JSON: shipping.Card
			PRIMARY KEY (carrier, version)
		)`,
		`INSERT INTO carrier_versions_037 (carrier, version, effective_from, created_at, outline, card)
			SELECT carrier, version, effective_from, created_at, outline, card FROM carrier_versions`,
		`DROP TABLE carrier_versions`,
		`ALTER TABLE carrier_versions_037 RENAME TO carrier_versions`,
	} {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("migration 037: %w", err)
		}
	}
	return nil
}

// packRenderings stores each rendering kept as text since before migration 024 as a packed
// value, checked like every other (migration 038).
func packRenderings(ctx context.Context, tx *sql.Tx) error {
	for _, table := range []string{"shipments", "shipping_labels"} {
		err := eachInBatches(ctx, tx, `SELECT id, rendered FROM `+table+`
			WHERE id > $1 AND packed IS NULL AND rendered IS NOT NULL ORDER BY id LIMIT $2`, func(id, rendering string) error {
			_, err := tx.ExecContext(ctx, `UPDATE `+table+` SET packed = $1, rendered = NULL WHERE id = $2`,
				codec.Pack([]byte(rendering)), id)
			if err != nil {
				return fmt.Errorf("migration 038: %s %s: %w", table, id, err)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
