package migrate

import (
	"context"
	"database/sql"
	"fmt"
	"hash/crc32"
)

// recordChecksums (migration 41) gives every request and quote stored before it the checksum the
// store writes with them since: a CRC-32C of its values, computed here by a frozen copy of the
// store's rule (checksum41).
func recordChecksums(ctx context.Context, tx *sql.Tx, d Dialect) error { return FillChecksums(ctx, tx) }

// FillChecksums gives every request and quote without a checksum the one the store writes, as
// migration 41 did: for rows written by hand (a test's fixture, an operator's repair).
func FillChecksums(ctx context.Context, tx *sql.Tx) error {
	err := untilNone(ctx, tx, `SELECT shipment_id, request, messages FROM shipment_requests WHERE crc IS NULL LIMIT $1`,
		func(rows *sql.Rows) (string, []any, error) {
			var id, req string
			var messages *string
			err := rows.Scan(&id, &req, &messages)
			return `UPDATE shipment_requests SET crc = $1 WHERE shipment_id = $2`, []any{checksum41(req, messages), id}, err
		})
	if err != nil {
		return err
	}
	return untilNone(ctx, tx, `SELECT shipment_id, position, id, carrier, service, currency, postage_cents, surcharges_cents,
		total_cents, retail_cents, estimated_delivery_at, estimated_delivery_days, usps_zone, country_zone, billable_weight,
		actual_oz_weight, billable_oz_weight, dim_factor, dim_threshold, volume, surcharges, carrier_version, ddp_fee_cents
		FROM shipment_quotes WHERE crc IS NULL LIMIT $1`,
		func(rows *sql.Rows) (string, []any, error) {
			var shipment, id, carrier, service, currency, surcharges string
			var position, postage, surchargesCents, total, retail, delivery, days, zone, countryZone, billable int64
			var billableOz, dimFactor, dimThreshold, version int64
			var actual, volume float64
			var ddp sql.NullInt64
			err := rows.Scan(&shipment, &position, &id, &carrier, &service, &currency, &postage, &surchargesCents, &total,
				&retail, &delivery, &days, &zone, &countryZone, &billable, &actual, &billableOz, &dimFactor, &dimThreshold,
				&volume, &surcharges, &version, &ddp)
			sum := checksum41(shipment, position, id, carrier, service, currency, postage, surchargesCents, total, retail,
				delivery, days, zone, countryZone, billable, actual, billableOz, dimFactor, dimThreshold, volume, surcharges,
				version, ddp)
			return `UPDATE shipment_quotes SET crc = $1 WHERE shipment_id = $2 AND position = $3`, []any{sum, shipment, position}, err
		})
}

// untilNone reads batchSize rows of query (its one placeholder is the batch's size) at a time,
// and runs the statement each row makes, until query selects none: each statement must take
// its row out of what query selects.
func untilNone(ctx context.Context, tx *sql.Tx, query string, each func(*sql.Rows) (string, []any, error)) error {
	for {
		rows, err := tx.QueryContext(ctx, query, batchSize)
		if err != nil {
			return err
		}
		type stmt struct {
			query string
			args  []any
		}
		var batch []stmt
		for rows.Next() {
			q, args, err := each(rows)
			if err != nil {
				rows.Close()
				return err
			}
			batch = append(batch, stmt{q, args})
		}
		if err := rows.Close(); err != nil {
			return err
		}
		if len(batch) == 0 {
			return nil
		}
		for _, s := range batch {
			if _, err := tx.ExecContext(ctx, s.query, s.args...); err != nil {
				return err
			}
		}
	}
}

// checksum41 is the record's checksum as of migration 41: the CRC-32C of vals, each in decimal (a
// float in its shortest form) or as its text, NULL as the byte 1, each followed by a 0 byte.
func checksum41(vals ...any) int64 {
	var b []byte
	for _, v := range vals {
		switch v := v.(type) {
		case *string:
			if v == nil {
				b = append(b, 1)
			} else {
				b = append(b, *v...)
			}
		case sql.NullInt64:
			if !v.Valid {
				b = append(b, 1)
			} else {
				b = fmt.Append(b, v.Int64)
			}
		default:
			b = fmt.Append(b, v)
		}
		b = append(b, 0)
	}
	return int64(crc32.Checksum(b, crc32.MakeTable(crc32.Castagnoli)))
}
