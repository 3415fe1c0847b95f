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
	28: legibleRecords,
}

// markReturnsBatch is how many shipments markReturns reads at a time.
const markReturnsBatch = 500

// markReturns sets shipments.is_return (migration 025) on the return shipments stored before
// it, from their requests: packed, or in the request column for a row stored before migration
// 024 (or after 028). It reads every shipment once, in id order, a batch at a time. A request it cannot read
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
			r, err := storedRequest(packed, req)
			if err == nil && len(r) > 0 {
				err = setRequest(&s, r)
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
// the request column for a row stored before migration 024 or after 028), a batch of labels at a time in id
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
			r, err := storedRequest(packed, req)
			if err == nil && len(r) > 0 {
				err = setRequest(&s, r)
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

// storedRequest is a shipment's request as its row holds it: in its packed value of format 1
// to 4 (migrations 024 to 028), else in its request column.
func storedRequest(packed []byte, req string) ([]byte, error) {
	if len(packed) > 0 && packed[0] >= packRendering || packed == nil {
		return []byte(req), nil
	}
	p, err := unpack(packed, 3)
	if err != nil {
		return nil, err
	}
	if len(p) != 3 {
		return nil, errPacked
	}
	return p[1], nil
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
	case len(r.packed) > 0 && r.packed[0] >= packRendering:
		return nil // stored as migration 028 keeps it
	case r.packed != nil:
		rendering, request, err := unpackShipment(r.packed, s)
		if err != nil {
			return err
		}
		if messages, err = messagesJSON(s.Messages); err != nil {
			return err
		}
		req, packed = string(request), pack(rendering)
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
	if err := insertRequest(ctx, tx, r.id, req, messages); err != nil {
		return err
	}
	return quotes.insert(ctx, tx)
}
