package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/waybill/waybill/shipping"
)

// ErrIdempotencyKeyReused reports an Idempotency-Key already used for a different request.
var ErrIdempotencyKeyReused = errors.New("idempotency key reused for a different request")

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
	return attachRates(ctx, q, accountID, missing)
}

// attachRates sets the ShippingRate of labels, in one query: the rate as bought, its
// insurance included.
func attachRates(ctx context.Context, q querier, accountID string, labels []*shipping.Label) error {
	if len(labels) == 0 {
		return nil
	}
	byRate := make(map[string][]*shipping.Label, len(labels))
	var ids []string
	for _, l := range labels {
		if _, seen := byRate[l.ShippingRateID]; !seen {
			ids = append(ids, l.ShippingRateID)
		}
		byRate[l.ShippingRateID] = append(byRate[l.ShippingRateID], l)
	}
	args := []any{accountID}
	rows, err := q.QueryContext(ctx, `SELECT `+rateColumns+` FROM shipping_rates
		WHERE account_id = $1 AND id IN (`+placeholders(&args, ids)+`)`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		r, err := ScanRate(rows)
		if err != nil {
			return err
		}
		for _, l := range byRate[r.ID] {
			rc := r.Insured(l.InsuranceCents)
			l.ShippingRate = &rc
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

// Idempotency identifies a request that may be retried: its key and a fingerprint of what it
// asked for.
type Idempotency struct {
	Key, Fingerprint string
}

// Purchase is what a label purchase asks for besides the rate.
type Purchase struct {
	// InsuredCents is the declared value to insure (insurance_amount); 0 for none. Its cost
	// (shipping.InsuranceCents) is an INSURANCE surcharge of the purchased rate.
	InsuredCents int64
}

// PurchaseFunc buys the label from the carrier inside the purchase transaction, after the
// shipment has been claimed, and returns the tracking code. serials hands out stored
// carriers' tracking serials in that transaction.
type PurchaseFunc func(ctx context.Context, s *shipping.Shipment, rate shipping.Rate, labelID string, serials shipping.SerialSource) (trackingCode string, err error)

// labelPayload is the payload of the LABEL_* webhook events (DESIGN §6).
type labelPayload struct {
	ShipmentID      string                   `json:"shipment_id"`
	ShippingLabelID string                   `json:"shipping_label_id"`
	TrackingCode    string                   `json:"tracking_code"`
	Status          string                   `json:"status"`
	Substatus       *string                  `json:"substatus"`
	TrackingEvents  []shipping.TrackingEvent `json:"tracking_events"`
}

func payloadOf(l *shipping.Label, events []shipping.TrackingEvent) labelPayload {
	if events == nil {
		events = []shipping.TrackingEvent{}
	}
	return labelPayload{ShipmentID: l.ShipmentID, ShippingLabelID: l.ID, TrackingCode: l.TrackingCode,
		Status: l.Status, Substatus: l.Substatus, TrackingEvents: events}
}

// BuyLabel buys rateID for the shipment in one transaction: the shipment becomes
// SHIPPING_LABEL_PURCHASED with the rate's carrier, the PRE_TRANSIT label is stored, and a
// LABEL_PURCHASED event is written. The rate must be the shipment's (else ErrNotFound) and the
// shipment OPEN (else shipping.ErrInvalidState). With idem, the first request under the key is
// executed and its answer stored in the same transaction; a later one with the same
// fingerprint gets that answer back (replayed true) and buys nothing, one with another
// fingerprint gets ErrIdempotencyKeyReused. Any failure leaves nothing written. p's insurance is
// stored on the label. rendered is the bought shipment's stored rendering (ShipmentJSON), empty
// for a replay.
func (db *DB) BuyLabel(ctx context.Context, accountID, shipmentID, rateID string, p Purchase, idem *Idempotency, buy PurchaseFunc) (s *shipping.Shipment, rendered string, replayed bool, err error) {
	b, err := db.prepareBuy(ctx, accountID, shipmentID, rateID, p, idem, buy)
	if err != nil {
		return nil, "", false, err
	}
	if err := b.run(ctx); err != nil {
		return nil, "", false, err
	}
	rendered = b.rendered
	if b.codeJSON != nil && !b.replayed {
		rendered = b.pre.shipment.with(b.codeJSON)
	}
	return b.s, rendered, b.replayed, nil
}

// labelBuy is one BuyLabel call: what it asks for, what was prepared before its transaction,
// and what the last attempt of that transaction found.
type labelBuy struct {
	db                            *DB
	accountID, shipmentID, rateID string
	p                             Purchase
	idem                          *Idempotency
	buy                           PurchaseFunc
	now, insurance                int64

	read    *shipping.Shipment // the shipment as read before the transaction; nil if unreadable
	stored  []byte             // read's packed value, which every change to the shipment rewrites
	pre     *prebought         // read bought with the mark; nil unless read was OPEN with the rate
	labelID string             // chosen with pre, else in the first attempt that buys
	serials *txSerials
	blocks  *serialBlocks // nil on SQLite

	s        *shipping.Shipment
	rendered string // the bought shipment's rendering, when rendered in the transaction
	codeJSON []byte // the tracking code, when the purchase was made as prebought
	replayed bool
}

// prepareBuy reads the shipment, and renders it bought, before the transaction, off the single
// writer, which then only checks that the shipment is still as read (by its stored rendering,
// which every change rewrites) and splices in the tracking code the carrier gives. If it changed
// meanwhile, it is read and rendered again in the transaction.
func (db *DB) prepareBuy(ctx context.Context, accountID, shipmentID, rateID string, p Purchase, idem *Idempotency, buy PurchaseFunc) (*labelBuy, error) {
	read, stored, open := db.shipmentToBuy(ctx, accountID, shipmentID)
	b := &labelBuy{db: db, accountID: accountID, shipmentID: shipmentID, rateID: rateID, p: p, idem: idem, buy: buy,
		read: read, stored: stored, serials: &txSerials{}}
	b.now = db.now()
	b.insurance = shipping.InsuranceCents(p.InsuredCents)
	if read != nil && read.Status == shipping.StatusOpen && b.rateOf(read) != nil {
		bought := *read
		b.labelID = db.NewID()
		purchased(&bought, *b.rateOf(&bought), b.labelID, trackingCodeMark, b.now, p.InsuredCents, b.insurance)
		var err error
		if b.pre, err = prebuy(&bought, open, read.UpdatedAt); err != nil {
			return nil, err
		}
	}
	if db.dialect == PostgreSQL {
		b.blocks = &db.serials
	}
	return b, nil
}

// rateOf returns the rate bought in s, nil if s has none of that ID.
func (b *labelBuy) rateOf(s *shipping.Shipment) *shipping.Rate {
	for i := range s.ShippingRates {
		if s.ShippingRates[i].ID == b.rateID {
			return &s.ShippingRates[i]
		}
	}
	return nil
}

// run runs the purchase transaction, again after reserving serials when it found none reserved,
// and passes over a serial whose tracking number another label already has.
func (b *labelBuy) run(ctx context.Context) error {
	var err error
	for {
		err = b.db.Tx(ctx, b.attempt)
		if !errors.Is(err, ErrNoSerialsReserved) || b.serials.need == nil {
			break
		}
		// A purchase that found no reserved serial reserves a block outside its transaction,
		// which would otherwise hold a connection of the pool while asking for another, and
		// runs again.
		if err = b.db.reserveSerials(ctx, b.serials.need); err != nil {
			break
		}
	}
	if errors.Is(err, shipping.ErrTrackingNumberTaken) && b.serials.carrier != "" {
		if perr := b.db.passOver(ctx, b.serials.carrier, b.serials.serial); perr != nil {
			return perr
		}
	}
	return err
}

// attempt is the purchase transaction: claim the idempotency key and the shipment, buy the label
// from the carrier, record the purchase.
func (b *labelBuy) attempt(ctx context.Context, tx *sql.Tx) error {
	b.rendered, b.codeJSON = "", nil
	*b.serials = txSerials{tx: tx, blocks: b.blocks}
	if b.idem != nil {
		if claimed, err := b.claimKey(ctx, tx); err != nil || !claimed {
			return err
		}
	}
	asRead, err := b.claim(ctx, tx)
	if err != nil {
		return err
	}
	rate := b.rateOf(b.s)
	if b.labelID == "" {
		b.labelID = b.db.NewID()
	}
	code, err := b.buy(ctx, b.s, *rate, b.labelID, b.serials)
	if err != nil {
		return err
	}
	return b.record(ctx, tx, rate, code, asRead)
}

// claimKey claims the idempotency key first, which serializes retries: on PostgreSQL a
// concurrent insert of the same key waits for this transaction and then finds the stored answer.
// It reports false when the key was claimed before; the answer is then the stored one.
func (b *labelBuy) claimKey(ctx context.Context, tx *sql.Tx) (claimed bool, err error) {
	res, err := tx.ExecContext(ctx, `INSERT INTO idempotency_keys (account_id, idempotency_key, fingerprint,
		shipment_id, response, created_at) VALUES ($1, $2, $3, $4, '', $5)
		ON CONFLICT (account_id, idempotency_key) DO NOTHING`, b.accountID, b.idem.Key, b.idem.Fingerprint, b.shipmentID, b.now)
	if err != nil {
		return false, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		if err != nil {
			return false, err
		}
		b.s, err = replay(ctx, tx, b.accountID, b.idem)
		b.replayed = err == nil
		return false, err
	}
	return true, nil
}

// claim checks that the shipment is still OPEN and its order may ship, and sets b.s to the
// shipment to buy: the one read before, when it is still as read (asRead), else the one read
// again in tx. On PostgreSQL its row stays locked until the commit, so of two concurrent buyers
// the second waits, then finds it no longer OPEN.
func (b *labelBuy) claim(ctx context.Context, tx *sql.Tx) (asRead bool, err error) {
	var current []byte
	var orderID sql.NullString
	var additional bool
	err = tx.QueryRowContext(ctx, `SELECT packed, order_id, order_additional FROM shipments
		WHERE account_id = $1 AND id = $2 AND status = $3`+b.db.forUpdate(),
		b.accountID, b.shipmentID, shipping.StatusOpen).Scan(&current, &orderID, &additional)
	open := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return false, err
	}
	if open && orderID.Valid {
		if err := b.db.checkOrderShips(ctx, tx, b.accountID, orderID.String, additional); err != nil {
			return false, err
		}
	}
	asRead = open && b.pre != nil && bytes.Equal(current, b.stored)
	if b.s = b.read; asRead {
		return true, nil
	}
	if b.s, err = b.db.shipmentIn(ctx, tx, b.accountID, b.shipmentID); err != nil {
		return false, err
	}
	if b.rateOf(b.s) == nil {
		return false, ErrNotFound
	}
	if err := shipping.CanBuy(b.s.Status); err != nil {
		return false, err
	}
	if !open { // OPEN now, but not when claimed: created after the claim looked
		return false, fmt.Errorf("%w: shipment is no longer OPEN", shipping.ErrInvalidState)
	}
	return false, nil
}

// record writes the purchase of rate under code: the bought rate, the label, the shipment, the
// LABEL_PURCHASED event and the idempotency key's answer.
func (b *labelBuy) record(ctx context.Context, tx *sql.Tx, rate *shipping.Rate, code string, asRead bool) error {
	s := b.s
	var row boughtRate
	var err error
	if asRead {
		row = b.pre.rate
	} else if row, err = boughtRateOf(s, rate.ID); err != nil {
		return err
	}
	if err := row.insert(ctx, tx); err != nil {
		return err
	}
	// The answer is what is written here; no need to read it back.
	purchased(s, *rate, b.labelID, code, b.now, b.p.InsuredCents, b.insurance)
	s.AccountID = b.accountID
	packedShipment, packedLabel, err := b.packings(s, code, asRead)
	if err != nil {
		return err
	}
	insured := sql.NullInt64{Int64: b.p.InsuredCents, Valid: b.p.InsuredCents > 0}
	_, err = tx.ExecContext(ctx, `INSERT INTO shipping_labels (id, account_id, shipment_id, shipping_rate_id, carrier,
		service, tracking_code, status, substatus, label_format, created_at, updated_at, insured_cents, insurance_cents,
		packed, commercial_invoice)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULL, $9, $10, $10, $11, $12, $13, $14)`,
		b.labelID, b.accountID, b.shipmentID, rate.ID, rate.Carrier, rate.Service, code, shipping.LabelPreTransit, s.LabelFormat, b.now,
		insured, b.insurance, packedLabel, s.ShippingLabel.CommercialInvoice)
	if trackingCodeTaken(err) {
		return shipping.ErrTrackingNumberTaken
	}
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE shipments SET status = $1, carrier = $2, updated_at = $3, packed = $4,
		rendered = NULL WHERE account_id = $5 AND id = $6`,
		shipping.StatusPurchased, rate.Carrier, b.now, packedShipment, b.accountID, b.shipmentID)
	if err != nil {
		return err
	}
	if err := b.db.emitEvent(ctx, tx, b.accountID, "LABEL_PURCHASED", payloadOf(s.ShippingLabel, nil)); err != nil {
		return err
	}
	if b.idem != nil {
		answer, err := json.Marshal(s)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE idempotency_keys SET response = $1 WHERE account_id = $2 AND idempotency_key = $3`,
			string(answer), b.accountID, b.idem.Key)
		return err
	}
	return nil
}

// packings packs the bought shipment s and its label: as prebought, with code spliced in, when s
// is as read, else rendered afresh (the rendering kept for BuyLabel's answer).
func (b *labelBuy) packings(s *shipping.Shipment, code string, asRead bool) (packedShipment, packedLabel []byte, err error) {
	if asRead {
		if b.codeJSON, err = json.Marshal(code); err != nil {
			return nil, nil, err
		}
		return b.pre.packedShipment.fill(b.codeJSON), b.pre.packedLabel.fill(b.codeJSON), nil
	}
	shipmentJSON, labelJSON, err := renderings(s)
	if err != nil {
		return nil, nil, err
	}
	b.rendered = string(shipmentJSON)
	return pack(shipmentJSON), pack(labelJSON), nil
}

// trackingCodeTaken reports whether err is the violation of shipping_labels' UNIQUE
// tracking_code, as SQLite (by column) or PostgreSQL (by constraint name) words it: the store
// names no driver, so their messages are what it can tell the violation by.
func trackingCodeTaken(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "UNIQUE constraint failed: shipping_labels.tracking_code") ||
		strings.Contains(msg, "23505") && strings.Contains(msg, `"shipping_labels_tracking_code_key"`)
}

// checkOrderShips applies shipping.ShipOrder to a buy of a shipment made for an order, inside the
// buy's transaction, so that of two buys for one order that race the second sees the first's
// label: on PostgreSQL the order's row is locked first (the second buyer waits for the first to
// commit, and its next statement reads the committed label); SQLite runs one writer at a time.
func (db *DB) checkOrderShips(ctx context.Context, tx *sql.Tx, accountID, orderID string, additional bool) error {
	if additional {
		return nil
	}
	if err := db.lock(ctx, tx, `SELECT id FROM orders WHERE account_id = $1 AND id = $2`, accountID, orderID); err != nil {
		return err
	}
	shipments, err := orderShipments(ctx, tx, accountID, []string{orderID})
	if err != nil {
		return err
	}
	return shipping.ShipOrder(shipments[orderID], false)
}

// shipmentToBuy reads a shipment with its rates, without its label, its packed value and its
// rendering, off the writer; nil when it cannot (a missing shipment, one without a packed
// rendering, an error: the purchase's transaction reads it again). Without its label: the read
// is used only if the shipment is OPEN, and an OPEN shipment has none (a label moves its
// shipment on, and no shipment moves back).
func (db *DB) shipmentToBuy(ctx context.Context, accountID, id string) (s *shipping.Shipment, packed, rendering []byte) {
	s, err := scanShipment(db.readRow(ctx, `SELECT `+shipmentColumns+`, packed FROM `+shipmentsFrom+`
		WHERE account_id = $1 AND id = $2`, accountID, id), &packed)
	if err != nil || packed == nil {
		return nil, nil, nil
	}
	if rendering, err = appendRendering(nil, packed, 1); err != nil {
		return nil, nil, nil
	}
	if err := loadQuotes(ctx, db.r, []*shipping.Shipment{s}); err != nil {
		return nil, nil, nil
	}
	return s, packed, rendering
}

// trackingCodeMark stands for the tracking code in a rendering made before the carrier gave it;
// no tracking code holds a NUL. trackingCodeMarkJSON is the mark as it is rendered.
const trackingCodeMark = "\x00tracking code\x00"

var trackingCodeMarkJSON = []byte(`"\u0000tracking code\u0000"`)

// marked is a rendering made before the carrier gave the tracking code, split around the mark:
// cut once, outside the transaction, it is joined with the code inside it without a search.
type marked struct{ before, after []byte }

// prebought is a purchase made before its transaction, which fills in the tracking code: the
// bought shipment's rendering, and its packed value and its label's with a hole for the code.
type prebought struct {
	shipment                    marked
	packedShipment, packedLabel holed
	rate                        boughtRate
}

// prebuy makes the prebought of s, bought with trackingCodeMark for its tracking code, from
// open, its rendering before (when its updated_at was then); nil when a rendering does not
// hold the mark.
func prebuy(s *shipping.Shipment, open []byte, then shipping.Timestamp) (*prebought, error) {
	labelJSON, err := renderLabel(s.ShippingLabel)
	if err != nil {
		return nil, err
	}
	shipmentJSON := boughtRendering(open, s, then, labelJSON)
	if shipmentJSON == nil {
		if shipmentJSON, err = renderShipment(s); err != nil {
			return nil, err
		}
	}
	ms, ok1 := markedAt(shipmentJSON)
	ml, ok2 := markedAt(labelJSON)
	if !ok1 || !ok2 {
		return nil, nil
	}
	rate, err := boughtRateOf(s, s.ShippingLabel.ShippingRateID)
	if err != nil {
		return nil, err
	}
	return &prebought{ms, packHole(len(ms.before), ms.join()), packHole(len(ml.before), ml.join()), rate}, nil
}

// join is the rendering without the mark.
func (m marked) join() []byte { return slices.Concat(m.before, m.after) }

func markedAt(b []byte) (marked, bool) {
	before, after, ok := bytes.Cut(b, trackingCodeMarkJSON)
	return marked{before, after}, ok
}

// with is the rendering with codeJSON, the code as JSON, in place of the mark.
func (m marked) with(codeJSON []byte) string {
	var b strings.Builder
	b.Grow(len(m.before) + len(codeJSON) + len(m.after))
	b.Write(m.before)
	b.Write(codeJSON)
	b.Write(m.after)
	return b.String()
}

// purchased makes s, as read before its purchase, what the purchase of rate wrote: the
// shipment bought from the rate's carrier, with its PRE_TRANSIT label.
func purchased(s *shipping.Shipment, rate shipping.Rate, labelID, code string, now, insuredCents, insuranceCents int64) {
	at, r := Time(now), rate.Insured(insuranceCents)
	s.Status, s.Carrier, s.UpdatedAt = shipping.StatusPurchased, rate.Carrier, shipping.Timestamp{Time: at}
	s.ShippingLabel = &shipping.Label{ID: labelID, ShipmentID: s.ID, Status: shipping.LabelPreTransit,
		LabelFormat: s.LabelFormat, TrackingCode: code,
		Carrier: rate.Carrier, Service: rate.Service, ShippingRateID: rate.ID, ShippingRate: &r, CreatedAt: shipping.Timestamp{Time: at}, UpdatedAt: shipping.Timestamp{Time: at},
		CommercialInvoice: s.HasCustomsDocuments()}
	s.ShippingLabel.Insure(insuredCents, insuranceCents)
}

// PruneIdempotencyKeys forgets the idempotency keys recorded before cutoff, of every account
// (a maintenance pass). A retry under a forgotten key is executed again, which cannot buy twice:
// its shipment is no longer OPEN.
func (db *DB) PruneIdempotencyKeys(ctx context.Context, cutoff time.Time) (int64, error) {
	var n int64
	err := db.Tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE created_at < $1`, Micros(cutoff))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}

// replay returns the answer stored under an idempotency key.
func replay(ctx context.Context, tx *sql.Tx, accountID string, idem *Idempotency) (*shipping.Shipment, error) {
	var fingerprint, answer string
	err := tx.QueryRowContext(ctx, `SELECT fingerprint, response FROM idempotency_keys
		WHERE account_id = $1 AND idempotency_key = $2`, accountID, idem.Key).Scan(&fingerprint, &answer)
	if err != nil {
		return nil, err
	}
	if fingerprint != idem.Fingerprint {
		return nil, ErrIdempotencyKeyReused
	}
	var s shipping.Shipment
	if err := json.Unmarshal([]byte(answer), &s); err != nil {
		return nil, fmt.Errorf("idempotency key %s: stored answer: %w", idem.Key, err)
	}
	s.AccountID = accountID
	if s.ShippingLabel != nil { // the stored answer does not show what is not JSON
		s.ShippingLabel.CommercialInvoice = s.HasCustomsDocuments()
	}
	return &s, nil
}

// VoidFunc voids a label with its carrier inside the cancel transaction.
type VoidFunc func(ctx context.Context, l *shipping.Label) error

// CancelShipment cancels the shipment in one transaction (shipping.Cancel decides): an OPEN
// shipment becomes CANCELLED; a purchased one whose label was never scanned nor billed too, its label voided
// with the carrier (void) and VOIDED, with a LABEL_VOIDED event; a CANCELLED one stays as it is.
func (db *DB) CancelShipment(ctx context.Context, accountID, shipmentID string, void VoidFunc) (*shipping.Shipment, error) {
	var s *shipping.Shipment
	err := db.Tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		// Lock the shipment and its label before reading them, so that a tracking event
		// cannot move the label between the check and the void.
		if err := db.lock(ctx, tx, `SELECT id FROM shipments WHERE account_id = $1 AND id = $2`, accountID, shipmentID); err != nil {
			return err
		}
		if err := db.lock(ctx, tx, `SELECT id FROM shipping_labels WHERE account_id = $1 AND shipment_id = $2`, accountID, shipmentID); err != nil {
			return err
		}
		var err error
		if s, err = db.shipmentIn(ctx, tx, accountID, shipmentID); err != nil {
			return err
		}
		if l := s.ShippingLabel; l != nil {
			var billed int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM billing_line_items WHERE account_id = $1 AND label_id = $2`,
				accountID, l.ID).Scan(&billed); err != nil {
				return err
			}
			l.Billed = billed > 0
		}
		action, err := shipping.Cancel(s.Status, s.ShippingLabel)
		if err != nil || action == shipping.CancelNothing {
			return err
		}
		now := db.now()
		res, err := tx.ExecContext(ctx, `UPDATE shipments SET status = $1, updated_at = $2
			WHERE account_id = $3 AND id = $4 AND status = $5`, shipping.StatusCancelled, now, accountID, shipmentID, s.Status)
		if err := rowsOrNotFound(res, err); err != nil {
			return err
		}
		if action == shipping.CancelAndVoid {
			l := s.ShippingLabel
			if err := void(ctx, l); err != nil {
				return err
			}
			res, err := tx.ExecContext(ctx, `UPDATE shipping_labels SET status = $1, substatus = NULL, updated_at = $2
				WHERE account_id = $3 AND id = $4 AND status = $5 AND first_carrier_scan_at IS NULL AND finished_at IS NULL
				AND manifest_id IS NULL`,
				shipping.LabelVoided, now, accountID, l.ID, shipping.LabelPreTransit)
			if err := rowsOrNotFound(res, err); errors.Is(err, ErrNotFound) {
				return fmt.Errorf("%w: the label is no longer PRE_TRANSIT", shipping.ErrInvalidState)
			} else if err != nil {
				return err
			}
			l.Status, l.Substatus = shipping.LabelVoided, nil
			events, err := trackingEvents(ctx, tx, accountID, l.ID)
			if err != nil {
				return err
			}
			if err := db.emitEvent(ctx, tx, accountID, "LABEL_VOIDED", payloadOf(l, events)); err != nil {
				return err
			}
		}
		s, err = db.rerender(ctx, tx, accountID, shipmentID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return s, nil
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
	return l, attachRates(ctx, db.r, accountID, []*shipping.Label{l})
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
		args = append(args, f.Status)
		where += " AND status = $" + strconv.Itoa(len(args))
	}
	if f.TrackingCode != "" {
		args = append(args, f.TrackingCode)
		where += " AND tracking_code = $" + strconv.Itoa(len(args))
	}
	l, err := OffsetList(ctx, db.r, Query[*shipping.Label]{
		Columns: labelColumns,
		From:    where,
		Args:    args,
		Scan:    func(rows *sql.Rows) (*shipping.Label, error) { return db.scanLabel(rows) },
	}, "created_at DESC, id DESC", p)
	if err != nil {
		return l, err
	}
	return l, attachRates(ctx, db.r, accountID, l.Items)
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
	rows, err := q.QueryContext(ctx, `SELECT `+trackingEventColumns+` FROM tracking_events
		WHERE account_id = $1 AND label_id = $2 ORDER BY occurred_at, id`, accountID, labelID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	events := []shipping.TrackingEvent{}
	for rows.Next() {
		e, err := scanTrackingEvent(rows)
		if err != nil {
			return nil, err
		}
		events = append(events, e)
	}
	return events, rows.Err()
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
	return OffsetList(ctx, db.r, Query[shipping.TrackingEvent]{
		Columns: trackingEventColumns,
		From:    "tracking_events WHERE account_id = $1 AND label_id = $2",
		Args:    []any{accountID, labelID},
		Scan:    func(rows *sql.Rows) (shipping.TrackingEvent, error) { return scanTrackingEvent(rows) },
	}, "occurred_at ASC, id ASC", p)
}

// AddTrackingEvent records an event for the label with the tracking code, whichever account
// it belongs to (the operator feed), in one transaction with its effects: the label follows
// the latest event (shipping.ApplyTrackingEvent), LABEL_TRACKING_UPDATED is emitted, and
// LABEL_IN_TRANSIT on the first in-network event; a label that finishes is billed. An event
// already recorded (same occurred_at, status and message) changes nothing and is returned
// with created false. An unknown code is ErrNotFound; a VOIDED label shipping.ErrInvalidState;
// an event dated before the purchase a *shipping.ValidationError.
func (db *DB) AddTrackingEvent(ctx context.Context, trackingCode string, e shipping.TrackingEvent) (ev shipping.TrackingEvent, created bool, err error) {
	return db.addTrackingEvent(ctx, "", trackingCode, e)
}

// AddCarrierTrackingEvent is AddTrackingEvent for an event a carrier reports (a signed push, a
// poll): the same rules in the same code, except that a tracking code of another carrier's
// label is unknown (ErrNotFound), like one of no label.
func (db *DB) AddCarrierTrackingEvent(ctx context.Context, carrier, trackingCode string, e shipping.TrackingEvent) (ev shipping.TrackingEvent, created bool, err error) {
	return db.addTrackingEvent(ctx, carrier, trackingCode, e)
}

// addTrackingEvent records the event for the label with the tracking code, of carrier when it
// is not empty.
func (db *DB) addTrackingEvent(ctx context.Context, carrier, trackingCode string, e shipping.TrackingEvent) (ev shipping.TrackingEvent, created bool, err error) {
	err = db.Tx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		account, l, err := db.lockTrackedLabel(ctx, tx, carrier, trackingCode)
		if err != nil {
			return err
		}
		// Refused events (a VOIDED label, a date before the purchase) are not recorded either.
		if err := shipping.CheckTrackingEvent(l, e); err != nil {
			return err
		}
		now := db.now()
		inserted, err := db.insertTrackingEvent(ctx, tx, account, l.ID, &e, now)
		if err != nil {
			return err
		}
		if !inserted {
			ev, err = scanTrackingEvent(tx.QueryRowContext(ctx, `SELECT `+trackingEventColumns+` FROM tracking_events
				WHERE account_id = $1 AND label_id = $2 AND occurred_at = $3 AND status = $4 AND message = $5`,
				account, l.ID, Micros(e.OccurredAt.Time), e.Status, e.Message))
			return err
		}
		ev, created = e, true
		return db.applyTrackingEvent(ctx, tx, account, l, e, now)
	})
	return ev, created, err
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

// applyTrackingEvent applies the recorded event e to the label l: it stores the label's new
// status, rerenders its shipment, emits the LABEL_* events and bills a label it finished.
func (db *DB) applyTrackingEvent(ctx context.Context, tx *sql.Tx, account string, l *shipping.Label, e shipping.TrackingEvent, now int64) error {
	effect, err := shipping.ApplyTrackingEvent(l, e)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE shipping_labels SET status = $1, substatus = $2, last_event_at = $3,
		first_carrier_scan_at = $4, delivered_at = $5, finished_at = $6, updated_at = $7
		WHERE account_id = $8 AND id = $9`,
		l.Status, l.Substatus, nullMicros(l.LastEventAt), nullStampMicros(l.FirstCarrierScanAt), nullStampMicros(l.DeliveredAt),
		nullMicros(l.FinishedAt), now, account, l.ID)
	if err != nil {
		return err
	}
	if _, err := db.rerender(ctx, tx, account, l.ShipmentID); err != nil {
		return err
	}
	events, err := trackingEvents(ctx, tx, account, l.ID)
	if err != nil {
		return err
	}
	payload := payloadOf(l, events)
	if effect.EnteredNetwork {
		if err := db.emitEvent(ctx, tx, account, "LABEL_IN_TRANSIT", payload); err != nil {
			return err
		}
	}
	if err := db.emitEvent(ctx, tx, account, "LABEL_TRACKING_UPDATED", payload); err != nil {
		return err
	}
	if effect.Finished {
		// The label row already shows its final status, which billing records.
		return db.billFinishedLabel(ctx, tx, l.ID, Micros(*l.FinishedAt))
	}
	return nil
}
