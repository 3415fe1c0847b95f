package migrate

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// markReturns sets shipments.is_return (migration 025) on the return shipments stored before
// it, from their requests.
func markReturns(ctx context.Context, tx *sql.Tx, _ Dialect) error {
	return markFromRequests(ctx, tx, `SELECT id, id, packed, request FROM shipments WHERE id > $1 ORDER BY id LIMIT $2`,
		`UPDATE shipments SET is_return = $1 WHERE id IN (`, func(r *request) bool { return r.IsReturn })
}

// markCommercialInvoices sets shipping_labels.commercial_invoice (migration 027) on the labels of
// the international shipments stored before it, from their shipments' requests.
func markCommercialInvoices(ctx context.Context, tx *sql.Tx, _ Dialect) error {
	return markFromRequests(ctx, tx, `SELECT l.id, s.id, s.packed, s.request FROM shipping_labels l
			JOIN shipments s ON s.account_id = l.account_id AND s.id = l.shipment_id
			WHERE l.id > $1 ORDER BY l.id LIMIT $2`,
		`UPDATE shipping_labels SET commercial_invoice = $1 WHERE id IN (`, (*request).hasCustomsDocuments)
}

// markFromRequests sets a flag to true on the rows whose shipment's stored request (packed, or
// in the request column for a row stored before migration 024) pick chooses. query selects each
// row's id, its shipment's id, packed value and request column, after the id $1 in id order, at
// most $2; update is the UPDATE setting the flag to $1 up to its IN list. It reads every row
// once, a batch at a time. A request it cannot read (a damaged packed value) fails the
// migration, naming the shipment: guessing would mark it wrongly.
func markFromRequests(ctx context.Context, tx *sql.Tx, query, update string, pick func(*request) bool) error {
	var p packer
	for after := ""; ; {
		rows, err := tx.QueryContext(ctx, query, after, batchSize)
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
			r := new(request)
			b, err := p.storedRequest(packed, req)
			if err == nil && len(b) > 0 {
				r, err = readRequest(b)
			}
			if err != nil {
				rows.Close()
				return fmt.Errorf("shipment %s: %w", shipmentID, err)
			}
			if pick(r) {
				marked = append(marked, after)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if err := setFlag(ctx, tx, update, marked); err != nil {
			return err
		}
		if n < batchSize {
			return nil
		}
	}
}

// setFlag runs update (an UPDATE setting a flag to $1 up to its IN list) on the ids.
func setFlag(ctx context.Context, tx *sql.Tx, update string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	args := []any{true}
	in := make([]string, len(ids))
	for i, id := range ids {
		args = append(args, id)
		in[i] = "$" + strconv.Itoa(i+2)
	}
	_, err := tx.ExecContext(ctx, update+strings.Join(in, ", ")+`)`, args...)
	return err
}

// storedRequest is a shipment's request as its row holds it: in its packed value of format 1
// to 4 (migrations 024 to 028), else in its request column.
func (p *packer) storedRequest(packed []byte, req string) ([]byte, error) {
	if packed == nil || !older(packed) {
		return []byte(req), nil
	}
	parts, err := p.unpackOlder(packed, 3)
	if err != nil {
		return nil, err
	}
	return parts[1], nil
}

// legibleRecords (migration 028) stores every shipment's request, messages and quotes where
// they are kept now (shipment_requests, shipment_quotes), from where its row held them: a packed
// value of format 1 to 4, repacked as format 5 (the rendering alone, byte for byte the same);
// shipments.request and .rates (migrations 017 to 024), then cleared; or shipments.request and
// rows of shipping_rates (before 017), which stay (a label may refer to one). It reads every
// shipment once, in id order, a batch at a time. A value it cannot read fails the migration,
// naming the shipment: guessing would make a wrong record.
func legibleRecords(ctx context.Context, tx *sql.Tx, _ Dialect) error {
	var p packer
	for after := ""; ; {
		batch, err := rowsBefore028(ctx, tx, after)
		if err != nil {
			return err
		}
		for _, r := range batch {
			if err := r.makeLegible(ctx, tx, &p); err != nil {
				return fmt.Errorf("shipment %s: %w", r.id, err)
			}
		}
		if len(batch) < batchSize {
			return nil
		}
		after = batch[len(batch)-1].id
	}
}

// rowBefore028 is what a shipment's row held before migration 028.
type rowBefore028 struct {
	id, account, request string
	packed               []byte
	rates                sql.NullString
}

// rowsBefore028 reads the batch of shipments after the id.
func rowsBefore028(ctx context.Context, tx *sql.Tx, after string) ([]rowBefore028, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, account_id, request, packed, rates FROM shipments WHERE id > $1
		ORDER BY id LIMIT $2`, after, batchSize)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []rowBefore028
	for rows.Next() {
		var r rowBefore028
		if err := rows.Scan(&r.id, &r.account, &r.request, &r.packed, &r.rates); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// makeLegible stores the row's request, messages and quotes as migration 028 keeps them.
func (r rowBefore028) makeLegible(ctx context.Context, tx *sql.Tx, p *packer) error {
	req, packed, messages := r.request, r.packed, (*string)(nil)
	var quotes []quote
	var err error
	switch {
	case r.packed != nil && !older(r.packed):
		return nil // stored as migration 028 keeps it
	case r.packed != nil:
		var rendering, request []byte
		if rendering, request, quotes, messages, err = p.unpackShipment(r.packed); err != nil {
			return err
		}
		req, packed = string(request), p.pack(rendering)
	case r.rates.Valid:
		quotes, err = decodeRates(r.rates.String, r.id)
	default:
		quotes, err = rowRates(ctx, tx, r.account, r.id)
	}
	if err != nil {
		return err
	}
	if _, err := readRequest([]byte(req)); err != nil {
		return fmt.Errorf("request: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE shipments SET packed = $1, request = '', rates = NULL WHERE id = $2`,
		packed, r.id); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO shipment_requests (shipment_id, request, messages) VALUES ($1, $2, $3)`,
		r.id, req, messages); err != nil {
		return err
	}
	return insertQuotes(ctx, tx, r.id, quotes)
}

// unpackShipment reads a shipment's packed value of versions 1 to 4, which held its rendering,
// its request and its quotes' cents: the rendering, the request, the quotes (read from the
// rendering, with their cents) and the messages' column (nil when the rendering has none).
func (p *packer) unpackShipment(b []byte) (rendering, req []byte, quotes []quote, messages *string, err error) {
	parts, err := p.unpackOlder(b, 3)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	rendering, req, cents := parts[0], parts[1], parts[2]
	if quotes, err = quotesOf(rendering, cents); err != nil {
		return nil, nil, nil, nil, err
	}
	if messages, err = messagesOf(rendering); err != nil {
		return nil, nil, nil, nil, fmt.Errorf("messages: %w", err)
	}
	return rendering, req, quotes, messages, nil
}

// messagesOf is the messages column of a shipment's rendering: its messages, kept there alone,
// as JSON; nil for a rendering stored before shipments had them. Only the shipment's own key is
// named messages, and a quote inside a string is escaped, so `"messages":[` is found only there.
func messagesOf(rendering []byte) (*string, error) {
	const key = `"messages":[`
	i := bytes.Index(rendering, []byte(key))
	if i < 0 {
		return nil, nil
	}
	ms := []reason{}
	if err := json.NewDecoder(bytes.NewReader(append([]byte("["), rendering[i+len(key):]...))).Decode(&ms); err != nil {
		return nil, err
	}
	b, err := json.Marshal(ms)
	s := string(b)
	return &s, err
}

// quotesOf reads the quotes of a shipment's rendering, with the cents a value of versions 1 to
// 4 stored beside it: four varints a quote.
func quotesOf(rendering, cents []byte) ([]quote, error) {
	_, rest, ok := bytes.Cut(rendering, []byte(`"shipping_rates":`))
	if !ok {
		return nil, errors.New("no shipping_rates in the rendering")
	}
	var quotes []quote
	if err := json.NewDecoder(bytes.NewReader(rest)).Decode(&quotes); err != nil {
		return nil, err
	}
	for i := range quotes {
		q := &quotes[i]
		for _, c := range []*int64{&q.PostageCents, &q.SurchargesCents, &q.TotalCents, &q.RetailCents} {
			v, k := binary.Varint(cents)
			if k <= 0 {
				return nil, errMalformed
			}
			*c, cents = v, cents[k:]
		}
	}
	if len(cents) > 0 {
		return nil, errMalformed
	}
	return quotes, nil
}

// storedRate is one rate as stored, until migration 028 made them rows of shipment_quotes, in a
// row of shipping_rates (every quote of a shipment created before migration 017) and as an
// element of shipments.rates (every quote of a shipment created between migrations 017 and 024).
type storedRate struct {
	ID                    string       `json:"id"`
	Carrier               string       `json:"carrier"`
	Service               string       `json:"service"`
	Currency              string       `json:"currency"`
	PostageCents          int64        `json:"postage_cents"`
	SurchargesCents       int64        `json:"surcharges_cents"`
	TotalCents            int64        `json:"total_cents"`
	RetailCents           int64        `json:"retail_cents"`
	EstimatedDeliveryDays int          `json:"estimated_delivery_days"`
	EstimatedDeliveryDate string       `json:"estimated_delivery_date"` // RFC 3339
	RateMetadata          rateMetadata `json:"rate_metadata"`
}

// quote is the shipment's quote sr stores.
func (sr storedRate) quote(shipmentID string) (quote, error) {
	q := quote{ID: sr.ID, ShipmentID: shipmentID, Carrier: sr.Carrier, Service: sr.Service,
		Price: money{Amount: float64(sr.TotalCents) / 100, Currency: sr.Currency}, EstimatedDeliveryDays: sr.EstimatedDeliveryDays,
		PostageCents: sr.PostageCents, SurchargesCents: sr.SurchargesCents, TotalCents: sr.TotalCents, RetailCents: sr.RetailCents,
		RateMetadata: sr.RateMetadata}
	var err error
	q.EstimatedDeliveryDate, err = time.Parse(time.RFC3339, sr.EstimatedDeliveryDate)
	return q, err
}

// decodeRates reads a shipments.rates value.
func decodeRates(s, shipmentID string) ([]quote, error) {
	var stored []storedRate
	if err := json.Unmarshal([]byte(s), &stored); err != nil {
		return nil, err
	}
	quotes := make([]quote, len(stored))
	for i, sr := range stored {
		var err error
		if quotes[i], err = sr.quote(shipmentID); err != nil {
			return nil, err
		}
	}
	return quotes, nil
}

// rowRates reads the quotes of a shipment created before migration 017: rows of shipping_rates,
// in their order.
func rowRates(ctx context.Context, tx *sql.Tx, accountID, shipmentID string) ([]quote, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, carrier, service, currency, postage_cents, surcharges_cents, total_cents,
		retail_cents, estimated_delivery_days, estimated_delivery_date, rate_metadata FROM shipping_rates
		WHERE account_id = $1 AND shipment_id = $2 ORDER BY position`, accountID, shipmentID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	quotes := []quote{}
	for rows.Next() {
		var sr storedRate
		var meta string
		if err := rows.Scan(&sr.ID, &sr.Carrier, &sr.Service, &sr.Currency, &sr.PostageCents, &sr.SurchargesCents,
			&sr.TotalCents, &sr.RetailCents, &sr.EstimatedDeliveryDays, &sr.EstimatedDeliveryDate, &meta); err != nil {
			return nil, err
		}
		if sr.RateMetadata, _, err = readRateMetadata(meta); err != nil {
			return nil, err
		}
		q, err := sr.quote(shipmentID)
		if err != nil {
			return nil, err
		}
		quotes = append(quotes, q)
	}
	return quotes, rows.Err()
}

// quoteColumns are the shipment_quotes columns insertQuotes writes, in its order.
const quoteColumns = `shipment_id, position, id, carrier, service, currency, postage_cents, surcharges_cents,
	total_cents, retail_cents, estimated_delivery_at, estimated_delivery_days, usps_zone, country_zone, billable_weight,
	actual_oz_weight, billable_oz_weight, dim_factor, dim_threshold, volume, surcharges, carrier_version, ddp_fee_cents`

// insertQuotes writes a shipment's quotes as rows of shipment_quotes. A quote the columns cannot
// hold exactly (a price or surcharge not in whole cents of its currency) is an error: the record
// never differs from what was quoted.
func insertQuotes(ctx context.Context, tx *sql.Tx, shipmentID string, quotes []quote) error {
	for i, q := range quotes {
		if q.Price != (money{Amount: float64(q.TotalCents) / 100, Currency: q.Price.Currency}) {
			return fmt.Errorf("quote %s: price %v is not its total of %d cents", q.ID, q.Price, q.TotalCents)
		}
		m := q.RateMetadata
		surcharges, err := encodeSurcharges(m.SurchargesMetadata, q.Price.Currency)
		if err != nil {
			return fmt.Errorf("quote %s: %w", q.ID, err)
		}
		var ddp sql.NullInt64
		if m.DDPFee != nil {
			if ddp.Int64, err = wholeCents(*m.DDPFee, q.Price.Currency); err != nil {
				return fmt.Errorf("quote %s: DDP fee: %w", q.ID, err)
			}
			ddp.Valid = true
		}
		w := m.WeightMetadata
		if _, err := tx.ExecContext(ctx, `INSERT INTO shipment_quotes (`+quoteColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7,
			$8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23)`,
			shipmentID, i, q.ID, q.Carrier, q.Service, q.Price.Currency, q.PostageCents, q.SurchargesCents, q.TotalCents,
			q.RetailCents, q.EstimatedDeliveryDate.UnixMicro(), q.EstimatedDeliveryDays, m.USPSZone, m.CountryZone,
			m.BillableWeight, w.ActualOzWeight, w.BillableOzWeight, w.DimFactor, w.DimThreshold, w.Volume, surcharges,
			m.CarrierVersion, ddp); err != nil {
			return err
		}
	}
	return nil
}
