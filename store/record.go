package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/waybill/waybill/shipping"
)

// Record is a shipment as the database holds it, for an auditor (`waybill inspect shipment`,
// `waybill export shipments`): what was asked (the request), every quote with the cents the
// API does not show, who gave no quote, the label bought and its tracking events. It is read
// from the rows that sqlite3 and psql show (shipments, shipment_requests, shipment_quotes,
// shipping_labels, tracking_events), never from a packed copy of an answer.
type Record struct {
	ID                   string
	AccountID            string
	OrderID              string
	Status               string
	Brand                string
	ShipDate             string
	RateShoppingProfile  string
	RateShoppingStrategy string
	LabelFormat          string
	CustomReference1     *string
	CustomReference2     *string
	Request              RecordRequest
	Quotes               []RecordQuote
	// Messages are the carriers (or services) of the profile that gave no rate, and why; null
	// for a shipment quoted before they were kept.
	Messages []shipping.Reason
	Label    *RecordLabel
	// Events are the label's tracking events, oldest first; empty (not nil) without a label.
	Events    []shipping.TrackingEvent
	CreatedAt shipping.Timestamp
	UpdatedAt shipping.Timestamp
}

// RecordRequest is what the shipment was created with.
type RecordRequest struct {
	Origin        shipping.Address
	Destination   shipping.Address
	ReturnAddress shipping.Address
	Parcel        shipping.Parcel
	CustomsInfo   *shipping.CustomsInfo
	IsReturn      bool
}

// RecordQuote is one quote of the shipment, in cents.
type RecordQuote struct {
	ID                    string
	Carrier               string
	Service               string
	Currency              string
	PostageCents          int64
	SurchargesCents       int64
	TotalCents            int64
	RetailCents           int64
	EstimatedDeliveryDate shipping.Timestamp
	EstimatedDeliveryDays int
	RateMetadata          shipping.RateMetadata
}

// RecordLabel is the label bought, with the money and dates the API does not show.
type RecordLabel struct {
	ID                 string
	Status             string
	Substatus          *string
	TrackingCode       string
	Carrier            string
	Service            string
	ShippingRateID     string
	InsuredCents       int64
	InsuranceCents     int64
	ManifestID         *string
	FirstCarrierScanAt *shipping.Timestamp
	DeliveredAt        *shipping.Timestamp
	CreatedAt          shipping.Timestamp
	UpdatedAt          shipping.Timestamp
}

// ShipmentRecord reads the record of the shipment with the id, whichever account it is of.
func (db *DB) ShipmentRecord(ctx context.Context, id string) (*Record, error) {
	var acct string
	err := db.r.QueryRowContext(ctx, `SELECT account_id FROM shipments WHERE id = $1`, id).Scan(&acct)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return db.record(ctx, acct, id)
}

// exportPage is how many shipments ExportShipments reads per query.
const exportPage = 200

// ExportShipments calls each with the record of every shipment created at or after since:
// account by account (oldest account first), each account's oldest shipment first, reading a
// page at a time through the account's index on (created_at, id).
func (db *DB) ExportShipments(ctx context.Context, since time.Time, each func(*Record) error) error {
	accts, err := db.accountIDs(ctx)
	if err != nil {
		return err
	}
	for _, acct := range accts {
		created, id := since.UnixMicro(), ""
		for {
			ids, last, err := db.exportPage(ctx, acct, created, id)
			if err != nil {
				return err
			}
			for _, id := range ids {
				r, err := db.record(ctx, acct, id)
				if err != nil {
					return err
				}
				if err := each(r); err != nil {
					return err
				}
			}
			if len(ids) < exportPage {
				break
			}
			created, id = last, ids[len(ids)-1]
		}
	}
	return nil
}

// accountIDs lists every account's id, oldest first.
func (db *DB) accountIDs(ctx context.Context) ([]string, error) {
	return collect(ctx, db.r, `SELECT id FROM accounts ORDER BY created_at, id`, nil, scanString)
}

// exportPage lists the ids of the account's shipments after (created, id), and the created_at
// of the last.
func (db *DB) exportPage(ctx context.Context, acct string, created int64, id string) (ids []string, last int64, err error) {
	rows, err := db.r.QueryContext(ctx, `SELECT id, created_at FROM shipments WHERE account_id = $1
		AND (created_at > $2 OR (created_at = $2 AND id > $3)) ORDER BY created_at, id LIMIT $4`, acct, created, id, exportPage)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id, &last); err != nil {
			return nil, 0, err
		}
		ids = append(ids, id)
	}
	return ids, last, rows.Err()
}

// record reads one of the account's shipments as its Record.
func (db *DB) record(ctx context.Context, acct, id string) (*Record, error) {
	s, err := db.Shipment(ctx, acct, id)
	if err != nil {
		return nil, err
	}
	var order sql.NullString
	if err := db.r.QueryRowContext(ctx, `SELECT order_id FROM shipments WHERE id = $1`, id).Scan(&order); err != nil {
		return nil, err
	}
	r := &Record{ID: s.ID, AccountID: s.AccountID, OrderID: order.String, Status: s.Status, Brand: s.Brand,
		ShipDate: s.ShipDate, RateShoppingProfile: s.RateShoppingProfile, RateShoppingStrategy: s.RateShoppingStrategy,
		LabelFormat: s.LabelFormat, CustomReference1: s.CustomReference1, CustomReference2: s.CustomReference2,
		Request: RecordRequest{s.Origin, s.Destination, s.ReturnAddress, s.Parcel, s.CustomsInfo, s.IsReturn},
		Quotes:  []RecordQuote{}, Messages: s.Messages, Events: []shipping.TrackingEvent{}, CreatedAt: s.CreatedAt,
		UpdatedAt: s.UpdatedAt}
	for _, q := range s.ShippingRates {
		r.Quotes = append(r.Quotes, RecordQuote{q.ID, q.Carrier, q.Service, q.Price.Currency, q.PostageCents,
			q.SurchargesCents, q.TotalCents, q.RetailCents, q.EstimatedDeliveryDate, q.EstimatedDeliveryDays, q.RateMetadata})
	}
	if l := s.ShippingLabel; l != nil {
		events, err := trackingEvents(ctx, db.r, acct, l.ID)
		if err != nil {
			return nil, err
		}
		r.Events = append(r.Events, events...)
		r.Label = &RecordLabel{ID: l.ID, Status: l.Status, Substatus: l.Substatus, TrackingCode: l.TrackingCode,
			Carrier: l.Carrier, Service: l.Service, ShippingRateID: l.ShippingRateID, InsuredCents: l.InsuredCents,
			InsuranceCents: l.InsuranceCents, ManifestID: l.ManifestID, FirstCarrierScanAt: l.FirstCarrierScanAt,
			DeliveredAt: l.DeliveredAt, CreatedAt: l.CreatedAt, UpdatedAt: l.UpdatedAt}
	}
	return r, nil
}
