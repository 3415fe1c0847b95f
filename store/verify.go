package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/waybill/waybill/shipping"
)

// Difference is a stored copy that does not agree with the record it copies: the packed
// rendering of a shipment or of a label, which the API serves, against the rendering made
// afresh from the legible record (`waybill verify`).
type Difference struct {
	// ID is the shipment's or the label's id.
	ID string
	// Kind is "shipment" or "label".
	Kind string
	// Field says where they differ: the path of a differing value in the rendering
	// ("destination.city", "shipping_rates[1].price.amount", "shipping_label"); "packed" for
	// a stored copy that cannot be read (damaged, or failing its checksum); "rendering" when
	// nothing finer is known; "request" or "messages" for a record that cannot be read.
	Field string
}

const (
	kindShipment = "shipment"
	kindLabel    = "label"
)

// verifyPageSize is how many shipments Verify reads per page.
const verifyPageSize = 200

// Verify renders afresh every shipment created at or after since, and its label, from the
// record (the rows of shipments, shipment_requests, shipment_quotes and shipping_labels), and
// calls each with every difference from the stored copy that GETs and lists serve. It walks
// account by account, a page of shipments at a time in the account's (created_at, id) order,
// each page read in one read-only transaction so that a page's records and copies agree with
// each other while the service writes.
func (db *DB) Verify(ctx context.Context, since time.Time, each func(Difference) error) error {
	accts, err := db.accountIDs(ctx)
	if err != nil {
		return err
	}
	for _, acct := range accts {
		after := Key{CreatedAt: Micros(since)} // every id sorts after ""
		for {
			n, last, err := db.verifyPage(ctx, acct, after, each)
			if err != nil {
				return err
			}
			if n < verifyPageSize {
				break
			}
			after = last
		}
	}
	return nil
}

// storedCopies are a shipment's packed rendering and its label's, as a page of Verify reads
// them.
type storedCopies struct {
	key         Key
	packed      []byte
	labelPacked []byte
	record      *shipping.Shipment
	unreadable  string // the part of the record that cannot be read
}

// verifyPage verifies the account's page of shipments after the key, and returns how many it
// read and the last one's key.
func (db *DB) verifyPage(ctx context.Context, acct string, after Key, each func(Difference) error) (int, Key, error) {
	tx, err := db.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead})
	if err != nil {
		return 0, after, err
	}
	defer tx.Rollback()
	page, err := collect(ctx, tx, `SELECT s.id, s.created_at, s.packed, l.packed FROM shipments s
		LEFT JOIN shipping_labels l ON l.account_id = s.account_id AND l.shipment_id = s.id
		WHERE s.account_id = $1 AND (s.created_at, s.id) > ($2, $3) ORDER BY s.created_at, s.id LIMIT $4`,
		[]any{acct, after.CreatedAt, after.ID, verifyPageSize}, func(rows *sql.Rows) (*storedCopies, error) {
			c := new(storedCopies)
			return c, rows.Scan(&c.key.ID, &c.key.CreatedAt, &c.packed, &c.labelPacked)
		})
	if err != nil || len(page) == 0 {
		return 0, after, err
	}
	if err := db.verifyRecords(ctx, tx, acct, page); err != nil {
		return 0, after, err
	}
	for _, c := range page {
		for _, d := range c.differences() {
			if err := each(d); err != nil {
				return 0, after, err
			}
		}
	}
	return len(page), page[len(page)-1].key, nil
}

// verifyRecords reads the records of the page's shipments, with their quotes and labels; a
// record that cannot be read is noted, not an error.
func (db *DB) verifyRecords(ctx context.Context, tx *sql.Tx, acct string, page []*storedCopies) error {
	byID := make(map[string]*storedCopies, len(page))
	ids := make([]string, len(page))
	for i, c := range page {
		byID[c.key.ID], ids[i] = c, c.key.ID
	}
	args := []any{acct}
	rows, err := tx.QueryContext(ctx, `SELECT `+shipmentColumns+` FROM `+shipmentsFrom+`
		WHERE account_id = $1 AND id IN (`+placeholders(&args, ids)+`)`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	var records []*shipping.Shipment
	for rows.Next() {
		s, err := scanShipment(rows)
		var u *unreadableRecord
		switch {
		case errors.As(err, &u):
			byID[u.id].unreadable = u.part
		case err != nil:
			return err
		default:
			byID[s.ID].record = s
			records = append(records, s)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows.Close()
	// A quote that cannot be read marks its shipment, which is left out, and the rest are read
	// again.
	for {
		err := loadQuotes(ctx, tx, records)
		var u *unreadableRecord
		if !errors.As(err, &u) {
			if err != nil {
				return err
			}
			break
		}
		byID[u.id].unreadable, byID[u.id].record = u.part, nil
		records = slices.DeleteFunc(records, func(s *shipping.Shipment) bool { return s.ID == u.id })
		for _, s := range records {
			s.ShippingRates = nil
		}
	}
	return db.attachLabelsWith(ctx, tx, acct, records)
}

// differences compares the stored copies with renderings made afresh from the record.
func (c *storedCopies) differences() []Difference {
	id := c.key.ID
	switch {
	case c.unreadable != "":
		return []Difference{{id, kindShipment, c.unreadable}}
	case c.record == nil: // a shipment without its request's row
		return []Difference{{id, kindShipment, "request"}}
	}
	var out []Difference
	if c.packed != nil { // nil: stored before renderings existed, and rendered when served
		fresh, err := renderShipment(c.record)
		out = append(out, compareCopy(id, kindShipment, c.packed, fresh, err)...)
	}
	if l := c.record.ShippingLabel; l != nil && c.labelPacked != nil {
		fresh, err := renderLabel(l)
		out = append(out, compareCopy(l.ID, kindLabel, c.labelPacked, fresh, err)...)
	}
	return out
}

// compareCopy compares a packed copy with the fresh rendering.
func compareCopy(id, kind string, packed []byte, fresh []byte, renderErr error) []Difference {
	stored, err := storedRendering(packed)
	if err != nil {
		return []Difference{{id, kind, "packed"}}
	}
	if renderErr != nil {
		return []Difference{{id, kind, "rendering"}}
	}
	if string(fresh) == stored {
		return nil
	}
	fields := differingFields("", fresh, []byte(stored), nil)
	if len(fields) == 0 {
		fields = []string{"rendering"}
	}
	out := make([]Difference, len(fields))
	for i, f := range fields {
		out[i] = Difference{id, kind, f}
	}
	return out
}

// differingFields appends to out the paths under path of the values in which two JSON
// documents differ: it descends into objects (by key, in a's order, then keys only b has) and
// into arrays of equal length (by index); a value that differs otherwise is named whole. Path
// "" is the whole document, named "rendering".
func differingFields(path string, a, b []byte, out []string) []string {
	if bytes.Equal(a, b) {
		return out
	}
	whole := path
	if whole == "" {
		whole = "rendering"
	}
	if ka, va, ok := objectFields(a); ok {
		kb, vb, ok := objectFields(b)
		if !ok {
			return append(out, whole)
		}
		for _, k := range ka {
			out = differingFields(joinPath(path, k), va[k], vb[k], out)
		}
		for _, k := range kb {
			if _, ok := va[k]; !ok {
				out = append(out, joinPath(path, k))
			}
		}
		return out
	}
	var ea, eb []json.RawMessage
	if json.Unmarshal(a, &ea) == nil && json.Unmarshal(b, &eb) == nil && ea != nil && eb != nil && len(ea) == len(eb) {
		for i := range ea {
			out = differingFields(whole+"["+strconv.Itoa(i)+"]", ea[i], eb[i], out)
		}
		return out
	}
	return append(out, whole)
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// objectFields reads a JSON object's keys, in order, and their values; ok is false for
// anything but an object.
func objectFields(b []byte) (keys []string, values map[string][]byte, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, false
	}
	values = map[string][]byte{}
	for dec.More() {
		t, err := dec.Token()
		key, isKey := t.(string)
		var v json.RawMessage
		if err != nil || !isKey || dec.Decode(&v) != nil {
			return nil, nil, false
		}
		keys, values[key] = append(keys, key), v
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, nil, false
	}
	return keys, values, true
}
