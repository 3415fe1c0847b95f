package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/waybill/waybill/billing"
	"github.com/waybill/waybill/shipping"
)

// querier is what reads need; *sql.DB and *sql.Tx both have it, so one reader serves the read
// pool and a transaction.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

const labelColumns = `id, account_id, shipment_id, shipping_rate_id, carrier, service, tracking_code, status, substatus,
	label_format, last_event_at, first_carrier_scan_at, delivered_at, finished_at, created_at, updated_at,
	insured_cents, insurance_cents, manifest_id, commercial_invoice`

func (db *DB) scanLabel(row rowScanner) (*shipping.Label, error) {
	var account string
	return db.scanLabelAccount(row, &account)
}

// scanLabelAccount is scanLabel that also reads the label's account.
func (db *DB) scanLabelAccount(row rowScanner, account *string) (*shipping.Label, error) {
	var l shipping.Label
	var substatus, manifest sql.NullString
	var lastEvent, firstScan, delivered, finished, insured sql.NullInt64
	var created, updated, insurance int64
	err := row.Scan(&l.ID, account, &l.ShipmentID, &l.ShippingRateID, &l.Carrier, &l.Service, &l.TrackingCode, &l.Status,
		&substatus, &l.LabelFormat, &lastEvent, &firstScan, &delivered, &finished, &created, &updated, &insured, &insurance, &manifest,
		&l.CommercialInvoice)
	if err != nil {
		return nil, err
	}
	l.Insure(insured.Int64, insurance)
	if substatus.Valid {
		l.Substatus = &substatus.String
	}
	if manifest.Valid {
		l.ManifestID = &manifest.String
	}
	l.LastEventAt, l.FirstCarrierScanAt, l.DeliveredAt, l.FinishedAt = NullTime(lastEvent), nullStamp(firstScan), nullStamp(delivered), NullTime(finished)
	l.CreatedAt, l.UpdatedAt = stamp(created), stamp(updated)
	return &l, nil
}

// nullMicros converts a time that may be missing to a nullable stored timestamp.
func nullMicros(t *time.Time) sql.NullInt64 {
	if t == nil {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: Micros(*t), Valid: true}
}

func nullStampMicros(t *shipping.Timestamp) sql.NullInt64 {
	if t == nil {
		return sql.NullInt64{}
	}
	return nullMicros(&t.Time)
}

// attachLabels sets the ShippingLabel of each shipment that has one, in one query. The label's
// shipping_rate is taken from the shipment's rates.
func (db *DB) attachLabels(ctx context.Context, accountID string, shipments []*shipping.Shipment) error {
	return db.attachLabelsWith(ctx, db.r, accountID, shipments)
}

func (db *DB) attachLabelsWith(ctx context.Context, q querier, accountID string, shipments []*shipping.Shipment) error {
	if len(shipments) == 0 {
		return nil
	}
	byID, ids := indexShipments(shipments)
	args := []any{accountID}
	rows, err := q.QueryContext(ctx, `SELECT `+labelColumns+` FROM shipping_labels
		WHERE account_id = $1 AND shipment_id IN (`+placeholders(&args, ids)+`)`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	var missing []*shipping.Label
	for rows.Next() {
		l, err := db.scanLabel(rows)
		if err != nil {
			return err
		}
		s := byID[l.ShipmentID]
		if s == nil {
			continue
		}
		s.ShippingLabel = l
		for i := range s.ShippingRates {
			if s.ShippingRates[i].ID == l.ShippingRateID {
				r := s.ShippingRates[i].Insured(l.InsuranceCents)
				l.ShippingRate = &r
			}
		}
		if l.ShippingRate == nil {
			missing = append(missing, l)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows.Close()
	return attachRates(ctx, q, missing)
}

// attachRates sets the ShippingRate of labels, in one query: the quote of its shipment it
// bought, with its insurance included.
func attachRates(ctx context.Context, q querier, labels []*shipping.Label) error {
	if len(labels) == 0 {
		return nil
	}
	byRate := make(map[string][]*shipping.Label, len(labels))
	var shipments, rates []string
	for _, l := range labels {
		shipments, rates = append(shipments, l.ShipmentID), append(rates, l.ShippingRateID)
		byRate[l.ShippingRateID] = append(byRate[l.ShippingRateID], l)
	}
	var args []any
	in := placeholders(&args, shipments)
	rows, err := q.QueryContext(ctx, `SELECT `+quoteColumns+` FROM shipment_quotes
		WHERE shipment_id IN (`+in+`) AND id IN (`+placeholders(&args, rates)+`)`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanQuote(rows)
		if err != nil {
			return err
		}
		for _, l := range byRate[r.ID] {
			if l.ShipmentID == r.ShipmentID {
				rc := r.Insured(l.InsuranceCents)
				l.ShippingRate = &rc
			}
		}
	}
	return rows.Err()
}

// shipmentIn reads a shipment with its rates and label through q (a transaction, say).
func (db *DB) shipmentIn(ctx context.Context, q querier, accountID, id string) (*shipping.Shipment, error) {
	s, err := shipmentWithRates(ctx, q, accountID, id)
	if err != nil {
		return nil, err
	}
	return s, db.attachLabelsWith(ctx, q, accountID, []*shipping.Shipment{s})
}

// shipmentWithRates reads a shipment with its rates, without its label.
func shipmentWithRates(ctx context.Context, q querier, accountID, id string) (*shipping.Shipment, error) {
	s, err := scanShipment(q.QueryRowContext(ctx, `SELECT `+shipmentColumns+` FROM `+shipmentsFrom+`
		WHERE account_id = $1 AND id = $2`, accountID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return s, loadQuotes(ctx, q, []*shipping.Shipment{s})
}

// Label returns one of the account's labels with its rate.
func (db *DB) Label(ctx context.Context, accountID, id string) (*shipping.Label, error) {
	l, err := db.scanLabel(db.r.QueryRowContext(ctx, `SELECT `+labelColumns+` FROM shipping_labels
		WHERE account_id = $1 AND id = $2`, accountID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return l, attachRates(ctx, db.r, []*shipping.Label{l})
}

// LabelFilter narrows a label list; empty fields do not filter.
type LabelFilter struct {
	Status, TrackingCode string
}

// ListLabels lists the account's labels, newest first, with their rates.
func (db *DB) ListLabels(ctx context.Context, accountID string, f LabelFilter, p Page) (List[*shipping.Label], error) {
	args := []any{accountID}
	where := "shipping_labels WHERE account_id = $1"
	if f.Status != "" {
		where += " AND status = " + arg(&args, f.Status)
	}
	if f.TrackingCode != "" {
		where += " AND tracking_code = " + arg(&args, f.TrackingCode)
	}
	l, err := offsetList(ctx, db.r, listQuery[*shipping.Label]{
		Columns: labelColumns,
		From:    where,
		Args:    args,
		Scan:    func(rows *sql.Rows) (*shipping.Label, error) { return db.scanLabel(rows) },
	}, "created_at DESC, id DESC", p)
	if err != nil {
		return l, err
	}
	return l, attachRates(ctx, db.r, l.Items)
}

// LabelDocument returns what the label's document is drawn from: the label and its shipment.
func (db *DB) LabelDocument(ctx context.Context, accountID, labelID string) (*shipping.Label, *shipping.Shipment, error) {
	l, err := db.scanLabel(db.r.QueryRowContext(ctx, `SELECT `+labelColumns+` FROM shipping_labels
		WHERE account_id = $1 AND id = $2`, accountID, labelID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, ErrNotFound
	}
	if err != nil {
		return nil, nil, err
	}
	s, err := scanShipment(db.r.QueryRowContext(ctx, `SELECT `+shipmentColumns+` FROM `+shipmentsFrom+`
		WHERE account_id = $1 AND id = $2`, accountID, l.ShipmentID))
	if err != nil {
		return nil, nil, err
	}
	return l, s, nil
}

const trackingEventColumns = `id, status, substatus, status_detail, message, occurred_at, source, location, created_at`

func scanTrackingEvent(row rowScanner) (shipping.TrackingEvent, error) {
	var e shipping.TrackingEvent
	var substatus, detail, location sql.NullString
	var occurred, created int64
	if err := row.Scan(&e.ID, &e.Status, &substatus, &detail, &e.Message, &occurred, &e.Source, &location, &created); err != nil {
		return e, err
	}
	if substatus.Valid {
		e.Substatus = &substatus.String
	}
	if detail.Valid {
		e.StatusDetail = &detail.String
	}
	if location.Valid {
		e.TrackingLocation = &shipping.Location{}
		if err := json.Unmarshal([]byte(location.String), e.TrackingLocation); err != nil {
			return e, err
		}
	}
	e.OccurredAt, e.CreatedAt = stamp(occurred), stamp(created)
	return e, nil
}

// trackingEvents returns all of a label's events, oldest first.
func trackingEvents(ctx context.Context, q querier, accountID, labelID string) ([]shipping.TrackingEvent, error) {
	events, err := collect(ctx, q, `SELECT `+trackingEventColumns+` FROM tracking_events
		WHERE account_id = $1 AND label_id = $2 ORDER BY occurred_at, id`, []any{accountID, labelID}, scanTrackingEvent)
	if events == nil && err == nil {
		events = []shipping.TrackingEvent{}
	}
	return events, err
}

// ListTrackingEvents lists the events of one of the account's labels, oldest first.
func (db *DB) ListTrackingEvents(ctx context.Context, accountID, labelID string, p Page) (List[shipping.TrackingEvent], error) {
	var n int
	if err := db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM shipping_labels WHERE account_id = $1 AND id = $2`,
		accountID, labelID).Scan(&n); err != nil {
		return List[shipping.TrackingEvent]{}, err
	}
	if n == 0 {
		return List[shipping.TrackingEvent]{}, ErrNotFound
	}
	return offsetList(ctx, db.r, listQuery[shipping.TrackingEvent]{
		Columns: trackingEventColumns,
		From:    "tracking_events WHERE account_id = $1 AND label_id = $2",
		Args:    []any{accountID, labelID},
		Scan:    func(rows *sql.Rows) (shipping.TrackingEvent, error) { return scanTrackingEvent(rows) },
	}, "occurred_at ASC, id ASC", p)
}

// TrackLabel runs fn in one transaction on the label with the tracking code, of carrier unless
// it is empty, locked, with the billing ledger of the same transaction (shipping.TrackingStore);
// ErrNotFound when there is none.
func (db *DB) TrackLabel(ctx context.Context, carrier, trackingCode string, fn func(shipping.TrackedLabel, billing.Ledger) error) error {
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		account, l, err := db.lockTrackedLabel(ctx, tx, carrier, trackingCode)
		if err != nil {
			return err
		}
		return fn(&trackedLabel{db: db, tx: tx, account: account, l: l, now: db.now()}, ledger{db, tx})
	})
}

// trackedLabel is a label locked in a transaction for one tracking event (shipping.TrackedLabel).
type trackedLabel struct {
	db      *DB
	tx      *sql.Tx
	account string
	l       *shipping.Label
	now     int64
}

func (t *trackedLabel) Label() *shipping.Label { return t.l }

func (t *trackedLabel) AddEvent(ctx context.Context, e shipping.TrackingEvent) (shipping.TrackingEvent, bool, error) {
	inserted, err := t.db.insertTrackingEvent(ctx, t.tx, t.account, t.l.ID, &e, t.now)
	if err != nil || inserted {
		return e, inserted, err
	}
	recorded, err := scanTrackingEvent(t.tx.QueryRowContext(ctx, `SELECT `+trackingEventColumns+` FROM tracking_events
		WHERE account_id = $1 AND label_id = $2 AND occurred_at = $3 AND status = $4 AND message = $5`,
		t.account, t.l.ID, Micros(e.OccurredAt.Time), e.Status, e.Message))
	return recorded, false, err
}

func (t *trackedLabel) Save(ctx context.Context) error {
	l := t.l
	_, err := t.tx.ExecContext(ctx, `UPDATE shipping_labels SET status = $1, substatus = $2, last_event_at = $3,
		first_carrier_scan_at = $4, delivered_at = $5, finished_at = $6, updated_at = $7
		WHERE account_id = $8 AND id = $9`,
		l.Status, l.Substatus, nullMicros(l.LastEventAt), nullStampMicros(l.FirstCarrierScanAt), nullStampMicros(l.DeliveredAt),
		nullMicros(l.FinishedAt), t.now, t.account, l.ID)
	if err != nil {
		return err
	}
	_, err = t.db.rerender(ctx, t.tx, t.account, l.ShipmentID)
	return err
}

func (t *trackedLabel) Events(ctx context.Context) ([]shipping.TrackingEvent, error) {
	return trackingEvents(ctx, t.tx, t.account, t.l.ID)
}

func (t *trackedLabel) Emit(ctx context.Context, e shipping.Event) error {
	return t.db.emitEvent(ctx, t.tx, t.account, e.Topic, e.Payload)
}

// lockTrackedLabel locks and reads the label with the tracking code, of carrier when it is not
// empty, and its account.
func (db *DB) lockTrackedLabel(ctx context.Context, tx *sql.Tx, carrier, trackingCode string) (account string, l *shipping.Label, err error) {
	// Events of one label apply one after the other: lock its row first, after its
	// shipment's, the order of every change to both (a buy, a cancel, a PATCH: rerender),
	// so that on PostgreSQL they wait for each other instead of deadlocking. A label's
	// shipment never changes, so it is read before the locks.
	var shipmentID, labelCarrier string
	err = tx.QueryRowContext(ctx, `SELECT account_id, shipment_id, carrier FROM shipping_labels WHERE tracking_code = $1`,
		trackingCode).Scan(&account, &shipmentID, &labelCarrier)
	if errors.Is(err, sql.ErrNoRows) || err == nil && carrier != "" && labelCarrier != carrier {
		return "", nil, ErrNotFound
	}
	if err != nil {
		return "", nil, err
	}
	if err := db.lock(ctx, tx, `SELECT id FROM shipments WHERE account_id = $1 AND id = $2`, account, shipmentID); err != nil {
		return "", nil, err
	}
	if err := db.lock(ctx, tx, `SELECT id FROM shipping_labels WHERE tracking_code = $1`, trackingCode); err != nil {
		return "", nil, err
	}
	l, err = db.scanLabelAccount(tx.QueryRowContext(ctx, `SELECT `+labelColumns+` FROM shipping_labels
		WHERE tracking_code = $1`, trackingCode), &account)
	if err != nil {
		return "", nil, err
	}
	return account, l, nil
}

// insertTrackingEvent stores e, with a new ID and created at now, for the label; it reports false
// when the label already has the event (same time, status and message).
func (db *DB) insertTrackingEvent(ctx context.Context, tx *sql.Tx, account, labelID string, e *shipping.TrackingEvent, now int64) (inserted bool, err error) {
	var location sql.NullString
	if e.TrackingLocation != nil {
		b, err := json.Marshal(e.TrackingLocation)
		if err != nil {
			return false, err
		}
		location = sql.NullString{String: string(b), Valid: true}
	}
	e.ID, e.CreatedAt = db.NewID(), stamp(now)
	res, err := tx.ExecContext(ctx, `INSERT INTO tracking_events (id, account_id, label_id, status, substatus,
		status_detail, message, occurred_at, source, location, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
		ON CONFLICT (label_id, occurred_at, status, message) DO NOTHING`,
		e.ID, account, labelID, e.Status, e.Substatus, e.StatusDetail, e.Message, Micros(e.OccurredAt.Time), e.Source, location, now)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, err
	}
	return n > 0, nil
}
