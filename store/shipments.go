package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/store/internal/codec"
)

// shipmentRequest is what shipment_requests.request holds (and shipments.request did before
// migration 024).
type shipmentRequest struct {
	Origin        shipping.Address `json:"origin"`
	Destination   shipping.Address `json:"destination"`
	ReturnAddress shipping.Address `json:"return_address"`
	Parcel        shipping.Parcel  `json:"parcel"`
	// CustomsInfo is absent without one; billing copies the column into line items as
	// shipment_request_parameters, so the declaration shows there too.
	CustomsInfo *shipping.CustomsInfo `json:"customs_info,omitempty"`
	// IsReturn is absent for an outbound shipment.
	IsReturn bool `json:"is_return,omitempty"`
}

// CreateShipment stores a new shipment as one write (writeAll): its row, its request and messages
// (shipment_requests), its quotes (shipment_quotes), and its rendering, which it returns (as
// ShipmentJSON would), packed in shipments.packed. The shipment's and rates' IDs and timestamps must be set.
func (db *DB) CreateShipment(ctx context.Context, s *shipping.Shipment) (string, error) {
	// Everything is encoded before the transaction, so the single writer only writes: the
	// shipment is stored as given, so its rendering is the given shipment's.
	body, err := renderShipment(s)
	if err != nil {
		return "", err
	}
	req, err := requestJSON(s)
	if err != nil {
		return "", err
	}
	messages, err := messagesJSON(s.Messages)
	if err != nil {
		return "", err
	}
	quotes, err := quoteRowsOf(s.ID, s.ShippingRates)
	if err != nil {
		return "", err
	}
	packed := codec.Pack(body)
	row := sqlStmt{`INSERT INTO shipments (id, account_id, status, brand, carrier, ship_date,
		rate_shopping_profile, rate_shopping_strategy, label_format, custom_reference_1, custom_reference_2, request,
		created_at, updated_at, packed, order_id, is_return, order_additional)
		VALUES ($1, $2, $3, $4, NULL, $5, $6, $7, $8, $9, $10, '', $11, $12, $13, $14, $15, $16)`,
		[]any{s.ID, s.AccountID, s.Status, s.Brand, s.ShipDate, s.RateShoppingProfile, s.RateShoppingStrategy, s.LabelFormat,
			s.CustomReference1, s.CustomReference2, Micros(s.CreatedAt.Time), Micros(s.UpdatedAt.Time), packed,
			sql.NullString{String: s.OrderID, Valid: s.OrderID != ""}, s.IsReturn, s.OrderID != "" && s.Additional}}
	return string(body), db.writeAll(ctx, append([]sqlStmt{row, requestInsert(s.ID, req, messages)}, quotes.statements()...))
}

// shipmentColumns are the columns of shipmentsFrom scanShipment reads: the record, not its
// packed rendering.
const shipmentColumns = `id, account_id, status, brand, carrier, ship_date, rate_shopping_profile, rate_shopping_strategy,
	label_format, custom_reference_1, custom_reference_2, created_at, updated_at, shipment_requests.request,
	shipment_requests.messages, shipment_requests.crc`

// shipmentsFrom is what shipmentColumns are read from: a shipment's row and its request's.
const shipmentsFrom = `shipments JOIN shipment_requests ON shipment_id = id`

// rowScanner is a row to scan: *sql.Row and *sql.Rows both are one.
type rowScanner interface{ Scan(dest ...any) error }

// unreadableRecord is a shipment whose record holds a value that cannot be decoded: part is
// "request" or "messages".
type unreadableRecord struct {
	id, part string
	err      error
}

func (e *unreadableRecord) Error() string {
	return "shipment " + e.id + ": " + e.part + ": " + e.err.Error()
}

func (e *unreadableRecord) Unwrap() error { return e.err }

// scanShipment reads a row selected as shipmentColumns, followed by any columns scanned into
// more. Its ShippingRates stay nil, for loadQuotes to read (completeShipments).
func scanShipment(row rowScanner, more ...any) (*shipping.Shipment, error) {
	s := new(shipping.Shipment)
	var carrier, ref1, ref2 sql.NullString
	var req []byte
	var messages *string
	var created, updated int64
	var crc sql.NullInt64
	err := row.Scan(append([]any{&s.ID, &s.AccountID, &s.Status, &s.Brand, &carrier, &s.ShipDate, &s.RateShoppingProfile,
		&s.RateShoppingStrategy, &s.LabelFormat, &ref1, &ref2, &created, &updated, &req, &messages, &crc}, more...)...)
	if err != nil {
		return nil, err
	}
	if err := checkSum(crc, req, messages); err != nil {
		return nil, &unreadableRecord{s.ID, "request", err}
	}
	if err := setRequest(s, req); err != nil {
		return nil, &unreadableRecord{s.ID, "request", err}
	}
	if s.Messages, err = codec.DecodeMessages(messages); err != nil {
		return nil, &unreadableRecord{s.ID, "messages", err}
	}
	s.Carrier = carrier.String
	if ref1.Valid {
		s.CustomReference1 = &ref1.String
	}
	if ref2.Valid {
		s.CustomReference2 = &ref2.String
	}
	s.CreatedAt, s.UpdatedAt = stamp(created), stamp(updated)
	return s, nil
}

// setRequest sets the fields of s that a shipmentRequest holds from its JSON.
func setRequest(s *shipping.Shipment, req []byte) error {
	var r shipmentRequest
	if err := json.Unmarshal(req, &r); err != nil {
		return err
	}
	s.Origin, s.Destination, s.ReturnAddress, s.Parcel, s.CustomsInfo, s.IsReturn = r.Origin, r.Destination, r.ReturnAddress, r.Parcel, r.CustomsInfo, r.IsReturn
	return nil
}

// Shipment returns one of the account's shipments with its rates and label.
func (db *DB) Shipment(ctx context.Context, accountID, id string) (*shipping.Shipment, error) {
	s, err := scanShipment(db.r.QueryRowContext(ctx, `SELECT `+shipmentColumns+` FROM `+shipmentsFrom+`
		WHERE account_id = $1 AND id = $2`, accountID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if err := db.completeShipments(ctx, accountID, []*shipping.Shipment{s}); err != nil {
		return nil, err
	}
	return s, nil
}

// indexShipments maps shipments by id and lists their ids.
func indexShipments(shipments []*shipping.Shipment) (map[string]*shipping.Shipment, []string) {
	byID := make(map[string]*shipping.Shipment, len(shipments))
	ids := make([]string, len(shipments))
	for i, s := range shipments {
		byID[s.ID], ids[i] = s, s.ID
	}
	return byID, ids
}

// completeShipments loads the shipments' quotes and labels, one query each.
func (db *DB) completeShipments(ctx context.Context, accountID string, shipments []*shipping.Shipment) error {
	if err := loadQuotes(ctx, db.r, shipments); err != nil {
		return err
	}
	return db.attachLabels(ctx, accountID, shipments)
}

// ShipmentFilter narrows a shipment list. Empty slices and zero times do not filter.
type ShipmentFilter struct {
	Statuses, Brands, Carriers []string
	// CreatedFrom and CreatedBefore bound created_at: From ≤ created_at < Before.
	CreatedFrom, CreatedBefore time.Time
	// Asc lists oldest first; the default is newest first.
	Asc bool
}

// OptionalString is a field of a partial update: Set when the request named it, Value nil to
// clear it.
type OptionalString struct {
	Set   bool
	Value *string
}

// UpdateShipmentReferences changes the shipment's custom references that are Set, and returns
// the shipment.
func (db *DB) UpdateShipmentReferences(ctx context.Context, accountID, id string, ref1, ref2 OptionalString) (*shipping.Shipment, error) {
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var args []any
		sets := []string{"updated_at = " + arg(&args, db.now())}
		for _, r := range []struct {
			column string
			v      OptionalString
		}{{"custom_reference_1", ref1}, {"custom_reference_2", ref2}} {
			if r.v.Set {
				sets = append(sets, r.column+" = "+arg(&args, r.v.Value))
			}
		}
		query := `UPDATE shipments SET ` + strings.Join(sets, ", ") + ` WHERE account_id = ` + arg(&args, accountID) + ` AND id = ` + arg(&args, id)
		res, err := tx.ExecContext(ctx, query, args...)
		if err := rowsOrNotFound(res, err); err != nil {
			return err
		}
		_, err = db.rerender(ctx, tx, accountID, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return db.Shipment(ctx, accountID, id)
}

// OrderShipments returns, for each of the account's orders (waybill's ids), the shipments made
// for it with their labels' statuses, oldest first, in one query; an order without any is
// absent.
func (db *DB) OrderShipments(ctx context.Context, accountID string, orderIDs []string) (map[string][]shipping.OrderShipment, error) {
	return orderShipments(ctx, db.r, accountID, orderIDs)
}

// orderShipments is OrderShipments through q (a transaction, say).
func orderShipments(ctx context.Context, q querier, accountID string, orderIDs []string) (map[string][]shipping.OrderShipment, error) {
	out := map[string][]shipping.OrderShipment{}
	if len(orderIDs) == 0 {
		return out, nil
	}
	args := []any{accountID}
	rows, err := q.QueryContext(ctx, `SELECT s.order_id, s.id, l.status FROM shipments s
		LEFT JOIN shipping_labels l ON l.account_id = s.account_id AND l.shipment_id = s.id
		WHERE s.account_id = $1 AND s.order_id IN (`+placeholders(&args, orderIDs)+`)
		ORDER BY s.order_id, s.created_at, s.id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var order string
		var s shipping.OrderShipment
		var status sql.NullString
		if err := rows.Scan(&order, &s.ID, &status); err != nil {
			return nil, err
		}
		s.LabelStatus = status.String
		out[order] = append(out[order], s)
	}
	return out, rows.Err()
}
