package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/store/internal/codec"
)

// LabelURLMark stands for the API's label_url in a stored response: the store renders a label's
// label_url as LabelURLMark followed by the label's id (JSON "\u0000<id>"), and the API, whose
// URLs they are, replaces it. An international label's commercial_invoice_url is marked alike.
// No client string can produce it: a NUL byte is refused at input, and a quote inside a string
// is escaped, so `"label_url":"\u0000` only ever starts a label's own field.
const LabelURLMark = "\x00"

// Stored responses: every shipment and label keeps its rendered JSON, packed
// (store/internal/codec; those kept as text before migration 024 were packed by migration 038),
// so GET /shipments/{id}, GET /shipments and GET /shipping_labels/{id} read one column instead
// of decoding the stored request and re-encoding the rates. rerender is the copy's one owner:
// every transaction that changes a shipment, its rates or its label calls it last. The buy alone
// writes renderings it made itself (with renderings, from the shipment it writes) in the
// statements that write the shipment and the label; TestStoredResponsesMatchFreshRender checks
// them after every kind of change.

// rerender renders the shipment and its label as they now stand in tx, stores the renderings,
// and returns the shipment.
func (db *DB) rerender(ctx context.Context, tx *sql.Tx, accountID, shipmentID string) (*shipping.Shipment, error) {
	s, err := db.shipmentIn(ctx, tx, accountID, shipmentID)
	if err != nil {
		return nil, err
	}
	return s, storeRendering(ctx, tx, s)
}

// storeRendering stores the renderings of s and its label; s must be complete and exactly as it
// now stands in tx (a caller that has just written it whole may pass it rather than read it back).
func storeRendering(ctx context.Context, tx *sql.Tx, s *shipping.Shipment) error {
	shipment, label, err := renderings(s)
	if err != nil {
		return err
	}
	return storeRenderings(ctx, tx, s, shipment, label)
}

// renderings renders s and its label (nil without one).
func renderings(s *shipping.Shipment) (shipment, label []byte, err error) {
	if shipment, err = renderShipment(s); err != nil || s.ShippingLabel == nil {
		return shipment, nil, err
	}
	label, err = renderLabel(s.ShippingLabel)
	return shipment, label, err
}

// storeRenderings stores the renderings of s and its label, made by renderings, packed. The
// record they copy (the row, its request and quotes) is written by whoever changed it.
func storeRenderings(ctx context.Context, tx *sql.Tx, s *shipping.Shipment, shipment, label []byte) error {
	if _, err := tx.ExecContext(ctx, `UPDATE shipments SET packed = $1 WHERE account_id = $2 AND id = $3`,
		codec.Pack(shipment), s.AccountID, s.ID); err != nil {
		return err
	}
	if l := s.ShippingLabel; l != nil {
		if _, err := tx.ExecContext(ctx, `UPDATE shipping_labels SET packed = $1 WHERE account_id = $2 AND id = $3`,
			codec.Pack(label), s.AccountID, l.ID); err != nil {
			return err
		}
	}
	return nil
}

// renderShipment is a shipment's JSON as stored, its label_url marked.
func renderShipment(s *shipping.Shipment) ([]byte, error) {
	if l := s.ShippingLabel; l != nil {
		c := withMarks(l)
		cs := *s
		cs.ShippingLabel = &c
		s = &cs
	}
	return json.Marshal(s)
}

// boughtRendering is renderShipment of s, just bought, made from open, its rendering while it
// was OPEN with updated_at then, and label, renderLabel of its label, without encoding the
// rest again: a purchase changes only the status, the label and updated_at. It is nil when
// open is not that rendering. (TestBoughtRendering holds it to renderShipment.)
func boughtRendering(open []byte, s *shipping.Shipment, then shipping.Timestamp, label []byte) []byte {
	id, err := json.Marshal(s.ID)
	if err != nil || s.ShippingLabel == nil {
		return nil
	}
	created, _ := s.CreatedAt.MarshalJSON()
	was, _ := then.MarshalJSON()
	now, _ := s.UpdatedAt.MarshalJSON()
	head := `{"id":` + string(id) + `,"status":"` + shipping.StatusOpen + `",`
	tail := `],"created_at":` + string(created) + `,"updated_at":` + string(was) + `,"customs_info":`
	i := bytes.LastIndex(open, []byte(tail))
	if !bytes.HasPrefix(open, []byte(head)) || i < len(head) {
		return nil
	}
	out := make([]byte, 0, len(open)+len(label)+64)
	out = append(append(append(out, `{"id":`...), id...), `,"status":"`+s.Status+`",`...)
	out = append(append(out, open[len(head):i+1]...), `,"shipping_label":`...)
	out = append(append(out, label...), `,"created_at":`...)
	out = append(append(append(append(out, created...), `,"updated_at":`...), now...), `,"customs_info":`...)
	return append(out, open[i+len(tail):]...)
}

// renderLabel is a label's JSON as stored, its label_url (and commercial_invoice_url) marked.
func renderLabel(l *shipping.Label) ([]byte, error) {
	c := withMarks(l)
	return json.Marshal(&c)
}

// withMarks is a copy of l with its URLs marked (LabelURLMark).
func withMarks(l *shipping.Label) shipping.Label {
	c := *l
	c.LabelURL, c.CommercialInvoiceURL = LabelURLMark+l.ID, nil
	if l.CommercialInvoice {
		mark := LabelURLMark + l.ID
		c.CommercialInvoiceURL = &mark
	}
	return c
}

// ShipmentJSON returns one of the account's shipments as rendered JSON (label_url marked, see
// LabelURLMark). A shipment without a stored rendering (storedJSON) is rendered now.
func (db *DB) ShipmentJSON(ctx context.Context, accountID, id string) (string, error) {
	return db.storedJSON(ctx, `SELECT packed FROM shipments WHERE account_id = $1 AND id = $2`, accountID, id,
		func() ([]byte, error) {
			s, err := db.shipmentIn(ctx, db.r, accountID, id)
			if err != nil {
				return nil, err
			}
			return renderShipment(s)
		})
}

// LabelJSON returns one of the account's labels as rendered JSON (label_url marked).
func (db *DB) LabelJSON(ctx context.Context, accountID, id string) (string, error) {
	return db.storedJSON(ctx, `SELECT packed FROM shipping_labels WHERE account_id = $1 AND id = $2`, accountID, id,
		func() ([]byte, error) {
			l, err := db.Label(ctx, accountID, id)
			if err != nil {
				return nil, err
			}
			return renderLabel(l)
		})
}

// storedJSON reads one row's rendering with query (its packed value), or renders it now
// (render) for a row that has none: stored before renderings existed, or whose rendering a
// migration dropped as stale (the migrations cannot render).
func (db *DB) storedJSON(ctx context.Context, query, accountID, id string, render func() ([]byte, error)) (string, error) {
	var packed []byte
	err := db.readRow(ctx, query, accountID, id).Scan(&packed)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	if err != nil {
		return "", err
	}
	if packed == nil {
		b, err := render()
		return string(b), err
	}
	b, err := storedRendering(packed)
	if err != nil {
		return "", fmt.Errorf("%s: %w", id, err) // the log line names the row
	}
	return b, nil
}

// unpackBuffers hold renderings on their way from a packed value to a string.
var unpackBuffers = sync.Pool{New: func() any { return new([]byte) }}

// storedRendering is the rendering a packed value holds.
func storedRendering(packed []byte) (string, error) {
	buf := unpackBuffers.Get().(*[]byte)
	defer unpackBuffers.Put(buf)
	b, err := codec.AppendRendering((*buf)[:0], packed)
	if err != nil {
		return "", err
	}
	*buf = b
	return string(b), nil
}

// renderedRow is one row of a list of stored renderings.
type renderedRow struct {
	id     string
	key    Key
	packed []byte
}

// ListShipmentsJSON is ListShipments answering each shipment's rendered JSON (label_url
// marked): one query for the page, none per shipment.
func (db *DB) ListShipmentsJSON(ctx context.Context, accountID string, f ShipmentFilter, p Page, k *Keyset) (List[string], error) {
	from, args := shipmentWhere("shipments", accountID, f)
	q := listQuery[renderedRow]{
		Columns: "id, created_at, packed",
		From:    from,
		Args:    args,
		Scan: func(rows *sql.Rows) (renderedRow, error) {
			var r renderedRow
			err := rows.Scan(&r.id, &r.key.CreatedAt, &r.packed)
			r.key.ID = r.id
			return r, err
		},
	}
	var l List[renderedRow]
	var err error
	if k != nil {
		k.Asc = f.Asc
		l, err = keysetList(ctx, db.r, q, *k, func(r renderedRow) Key { return r.key })
	} else {
		l, err = offsetList(ctx, db.r, q, shipmentOrder(f), p)
	}
	out := List[string]{HasNext: l.HasNext, HasPrev: l.HasPrev, Total: l.Total, Keys: l.Keys, Items: make([]string, len(l.Items))}
	if err != nil {
		return out, err
	}
	for i, r := range l.Items {
		if r.packed != nil {
			if out.Items[i], err = storedRendering(r.packed); err != nil {
				return out, fmt.Errorf("shipment %s: %w", r.id, err)
			}
			continue
		}
		s, err := db.shipmentIn(ctx, db.r, accountID, r.id)
		if err != nil {
			return out, err
		}
		rendered, err := renderShipment(s)
		if err != nil {
			return out, err
		}
		out.Items[i] = string(rendered)
	}
	return out, nil
}

// shipmentWhere is the FROM clause of a shipment list from table (shipments, or shipmentsFrom),
// with its arguments.
func shipmentWhere(table, accountID string, f ShipmentFilter) (string, []any) {
	args := []any{accountID}
	where := []string{"account_id = $1"}
	in := func(column string, values []string) {
		if len(values) == 0 {
			return
		}
		where = append(where, column+" IN ("+placeholders(&args, values)+")")
	}
	in("status", f.Statuses)
	in("brand", f.Brands)
	if len(f.Brands) > 0 && !slices.Contains(f.Brands, "") {
		// The index by brand holds only shipments that have one (migration 033); the planner
		// uses it when the WHERE says so.
		where = append(where, "brand <> ''")
	}
	in("carrier", f.Carriers)
	if len(f.Carriers) > 0 {
		// The index by carrier holds only shipments that have one (migration 036). SQLite infers
		// this from the IN; PostgreSQL's planner is told.
		where = append(where, "carrier IS NOT NULL")
	}
	if !f.CreatedFrom.IsZero() {
		where = append(where, "created_at >= "+arg(&args, Micros(f.CreatedFrom)))
	}
	if !f.CreatedBefore.IsZero() {
		where = append(where, "created_at < "+arg(&args, Micros(f.CreatedBefore)))
	}
	return table + " WHERE " + strings.Join(where, " AND "), args
}

// shipmentOrder is an offset shipment list's ORDER BY.
func shipmentOrder(f ShipmentFilter) string {
	if f.Asc {
		return "created_at ASC, id ASC"
	}
	return "created_at DESC, id DESC"
}
