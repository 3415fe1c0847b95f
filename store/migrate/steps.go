package migrate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// steps are the Go parts of migrations, by version: what SQL alone cannot do (read a packed
// value), run in the migration's transaction after its SQL.
var steps = map[int]func(ctx context.Context, tx *sql.Tx, d Dialect) error{
	25: markReturns,
	27: markCommercialInvoices,
	28: legibleRecords,
	29: forgetLabelledRenderings,
	34: boughtRatesAreQuotes,
	35: plannerStats,
	36: plannerStats,
	37: outlineBeforeCard,
	38: packRenderings,
	39: todaysShapes,
	41: recordChecksums,
}

// batchSize is how many rows a step reads at a time.
const batchSize = 500

// eachInBatches calls each with the two columns, an id and a text, of every row query selects,
// a batch of batchSize rows at a time in id order: query takes the id to start after ($1), then
// args ($2 on), then the batch's size (the last placeholder; SQLite numbers placeholders in the
// order they appear). A batch is read whole before each runs on it, so each may write.
func eachInBatches(ctx context.Context, tx *sql.Tx, query string, each func(id, v string) error, args ...any) error {
	for after := ""; ; {
		rows, err := tx.QueryContext(ctx, query, append(append([]any{after}, args...), batchSize)...)
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
		if len(batch) < batchSize {
			return nil
		}
		after = batch[len(batch)-1][0]
	}
}

// forgetLabelledRenderings (migration 029) drops the stored renderings of every shipment that
// has a label, and of its label: made before labels showed commercial_invoice_url, they lack
// it. A migration cannot render (the rendering is the running service's, and changes with it);
// the store renders a shipment or label that has no stored rendering when it is read.
func forgetLabelledRenderings(ctx context.Context, tx *sql.Tx, _ Dialect) error {
	for _, stmt := range []string{
		`UPDATE shipments SET packed = NULL, rendered = NULL
			WHERE EXISTS (SELECT 1 FROM shipping_labels l WHERE l.shipment_id = shipments.id)`,
		`UPDATE shipping_labels SET packed = NULL, rendered = NULL`,
	} {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("migration 029: %w", err)
		}
	}
	return nil
}

// boughtRatesAreQuotes makes each label's rate its shipment's quote (migration 034): it checks
// that every label's shipping_rate_id names a quote of its shipment, at the carrier, service,
// currency and cents of the bought rate's row, then drops shipping_labels' foreign key to
// shipping_rates (on SQLite by rebuilding the table, as SQLite documents for a change ALTER
// TABLE cannot make; migrations run with foreign keys off and check them before committing) and
// shipping_rates.
func boughtRatesAreQuotes(ctx context.Context, tx *sql.Tx, d Dialect) error {
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
	if d == SQLite {
		if stmts, err = labelsWithoutRateKey(ctx, tx); err != nil {
			return err
		}
	}
	for _, stmt := range append(stmts, `DROP TABLE shipping_rates`) {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("migration 034: %w\n%s", err, stmt)
		}
	}
	return nil
}

// labelsWithoutRateKey are the statements that rebuild SQLite's shipping_labels without its
// foreign key to shipping_rates: the table as it is, without the key, under another name;
// filled, then renamed. They are none when the table has no such key (as IF EXISTS does on
// PostgreSQL).
func labelsWithoutRateKey(ctx context.Context, tx *sql.Tx) ([]string, error) {
	var table string
	if err := tx.QueryRowContext(ctx, `SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'shipping_labels'`).
		Scan(&table); err != nil {
		return nil, err
	}
	const fk = " REFERENCES shipping_rates (id)"
	head, columns, _ := strings.Cut(table, "(")
	switch {
	case strings.ReplaceAll(head, `"`, "") != "CREATE TABLE shipping_labels " || strings.Count(columns, fk) > 1:
		return nil, fmt.Errorf("migration 034: shipping_labels is not as migration 033 left it: %s", table)
	case !strings.Contains(columns, fk):
		return nil, nil
	}
	return []string{"CREATE TABLE shipping_labels_034 (" + strings.Replace(columns, fk, "", 1),
		`INSERT INTO shipping_labels_034 SELECT * FROM shipping_labels`,
		`DROP TABLE shipping_labels`,
		`ALTER TABLE shipping_labels_034 RENAME TO shipping_labels`,
		`CREATE INDEX shipping_labels_account_created ON shipping_labels (account_id, created_at, id)`,
		`CREATE INDEX shipping_labels_account_status ON shipping_labels (account_id, status, created_at, id)`,
		`CREATE INDEX shipping_labels_account_carrier_status ON shipping_labels (account_id, carrier, status)`,
		`CREATE INDEX shipping_labels_carrier_poll ON shipping_labels (carrier, status, poll_at)`}, nil
}

// plannerStats writes SQLite's fixed planner statistics (migration 035; again in migration 036,
// whose DROP INDEX took its index's row with it): per index, the rows of its table, then how
// many rows share each prefix of its columns (sqlite_stat1's format), for a store of a million
// shipments and labels over ten accounts. ANALYZE sqlite_schema makes the connection read them;
// the others read them when they open.
func plannerStats(ctx context.Context, tx *sql.Tx, d Dialect) error {
	if d != SQLite {
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
func outlineBeforeCard(ctx context.Context, tx *sql.Tx, d Dialect) error {
	if d != SQLite {
		return nil
	}
	for _, stmt := range []string{`CREATE TABLE carrier_versions_037 (
			carrier        TEXT NOT NULL REFERENCES carriers (code),
			version        BIGINT NOT NULL,
			effective_from TEXT NOT NULL,   -- YYYY-MM-DD
			created_at     BIGINT NOT NULL,
			outline        TEXT,            -- JSON: the card's name, tracking scheme and services
			card           TEXT NOT NULL,   -- JSON: the carrier's card
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
func packRenderings(ctx context.Context, tx *sql.Tx, _ Dialect) error {
	var p packer
	for _, table := range []string{"shipments", "shipping_labels"} {
		err := eachInBatches(ctx, tx, `SELECT id, rendered FROM `+table+`
			WHERE id > $1 AND packed IS NULL AND rendered IS NOT NULL ORDER BY id LIMIT $2`, func(id, rendering string) error {
			_, err := tx.ExecContext(ctx, `UPDATE `+table+` SET packed = $1, rendered = NULL WHERE id = $2`,
				p.pack([]byte(rendering)), id)
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
