package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/waybill/waybill/shipping"
)

// migrationSteps are the Go parts of migrations, by version: what SQL alone cannot do (read a
// packed value), run in the migration's transaction after its SQL.
var migrationSteps = map[int]func(ctx context.Context, tx *sql.Tx) error{
	25: markReturns,
	27: markCommercialInvoices,
}

// markReturnsBatch is how many shipments markReturns reads at a time.
const markReturnsBatch = 500

// markReturns sets shipments.is_return (migration 025) on the return shipments stored before
// it, from their requests: packed, or in the request column for a row stored before migration
// 024. It reads every shipment once, in id order, a batch at a time. A request it cannot read
// (a damaged packed value) fails the migration, naming the shipment.
func markReturns(ctx context.Context, tx *sql.Tx) error {
	after := ""
	for {
		rows, err := tx.QueryContext(ctx, `SELECT id, packed, request FROM shipments WHERE id > $1 ORDER BY id LIMIT $2`,
			after, markReturnsBatch)
		if err != nil {
			return err
		}
		var returns []string
		n := 0
		for rows.Next() {
			var packed []byte
			var req string
			if err := rows.Scan(&after, &packed, &req); err != nil {
				rows.Close()
				return err
			}
			n++
			var s shipping.Shipment
			if packed != nil {
				var parts [][]byte
				if parts, err = unpack(packed, 3); err == nil {
					err = setRequest(&s, parts[1])
				}
			} else if req != "" {
				err = setRequest(&s, []byte(req))
			}
			if err != nil {
				// Guessing would mark a damaged return outbound; the operator is told which.
				rows.Close()
				return fmt.Errorf("shipment %s: %w", after, err)
			}
			if s.IsReturn {
				returns = append(returns, after)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(returns) > 0 {
			args := []any{true}
			if _, err := tx.ExecContext(ctx, `UPDATE shipments SET is_return = $1 WHERE id IN (`+placeholders(&args, returns)+`)`,
				args...); err != nil {
				return err
			}
		}
		if n < markReturnsBatch {
			return nil
		}
	}
}

// markCommercialInvoices sets shipping_labels.commercial_invoice (migration 027) on the labels of
// the international shipments stored before it, from their shipments' requests (packed, or in
// the request column for a row stored before migration 024), a batch of labels at a time in id
// order. A request it cannot read fails the migration, naming the shipment.
func markCommercialInvoices(ctx context.Context, tx *sql.Tx) error {
	after := ""
	for {
		rows, err := tx.QueryContext(ctx, `SELECT l.id, s.id, s.packed, s.request FROM shipping_labels l
			JOIN shipments s ON s.account_id = l.account_id AND s.id = l.shipment_id
			WHERE l.id > $1 ORDER BY l.id LIMIT $2`, after, markReturnsBatch)
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
			if packed != nil {
				var parts [][]byte
				if parts, err = unpack(packed, 3); err == nil {
					err = setRequest(&s, parts[1])
				}
			} else if req != "" {
				err = setRequest(&s, []byte(req))
			}
			if err != nil {
				rows.Close()
				return fmt.Errorf("shipment %s: %w", shipmentID, err)
			}
			if s.HasCustomsDocuments() {
				marked = append(marked, after)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(marked) > 0 {
			args := []any{true}
			if _, err := tx.ExecContext(ctx, `UPDATE shipping_labels SET commercial_invoice = $1 WHERE id IN (`+
				placeholders(&args, marked)+`)`, args...); err != nil {
				return err
			}
		}
		if n < markReturnsBatch {
			return nil
		}
	}
}
