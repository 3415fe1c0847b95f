package store

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/store/internal/codec"
	"github.com/waybill/waybill/webhook"
)

// ReserveBuy reserves a shipment for one purchase (shipping.BuyStore). In this process the
// Idempotency-Key, the shipment and the order it ships (unless it is an additional parcel) are
// held until the purchase is recorded or released: a second buy of any of them waits, then
// finds what the first did. Nothing is written: recording (Record) checks again, in its
// transaction, that the shipment is still OPEN and its order not shipped, and claims the key
// with its answer; a purchase of another process that recorded first wins, and the label the
// carrier sold to the one that lost is voided (shipping.Buyer). A process that dies between
// reserving and recording leaves nothing behind.
//
// The shipment is read, and rendered bought, before the carrier is called; Record then only
// checks that it is still as read (by its packed value, which every change rewrites) and splices
// in the tracking code. If it changed meanwhile, it is read again and rendered when recorded.
func (db *DB) ReserveBuy(ctx context.Context, r shipping.BuyRequest) (shipping.Reservation, error) {
	if err := db.checkFile(); err != nil { // a label bought now could not be recorded
		return nil, err
	}
	for {
		b, attempted, err := db.reserveBuy(ctx, r)
		if err != nil || !attempted {
			return b, err
		}
		// Another purchase of the shipment or the key has an attempt under way (in another
		// process): it is waited for holding nothing in memory, since its recovery, should its
		// process have died, takes the same holds; then the reservation starts again.
		if err := db.awaitAttempts(ctx, r); err != nil {
			return nil, err
		}
	}
}

// reserveBuy is one try of ReserveBuy: attempted, holding nothing, when another purchase of the
// shipment or the key has an attempt.
func (db *DB) reserveBuy(ctx context.Context, r shipping.BuyRequest) (b *labelBuy, attempted bool, err error) {
	b = &labelBuy{db: db, r: r, now: db.now(), labelID: r.Attempt}
	if r.Key != "" {
		if err := b.hold(ctx, "key "+r.AccountID+"/"+r.Key); err != nil {
			return nil, false, err
		}
	}
	err = b.hold(ctx, "shipment "+r.AccountID+"/"+r.ShipmentID)
	if err == nil {
		b.read, b.stored, b.rendering, attempted = db.shipmentToBuy(ctx, r)
		b.onlyRate = b.read != nil
		if b.read == nil { // not read: the attempts are looked at alone
			attempted, err = db.attempted(ctx, r)
		}
	}
	if err == nil && attempted {
		b.unhold()
		return nil, true, nil
	}
	if err == nil && b.read != nil && b.read.OrderID != "" && !b.read.Additional {
		err = b.hold(ctx, "order "+r.AccountID+"/"+b.read.OrderID)
	}
	if err == nil {
		err = b.reserve(ctx)
	}
	if err != nil {
		b.unhold()
		return nil, false, err
	}
	return b, false, nil
}

// labelBuy is one purchase: what it asks for, what was prepared before its reservation, and
// what the reservation holds (shipping.Reservation).
type labelBuy struct {
	db   *DB
	r    shipping.BuyRequest
	p    shipping.Purchase // as prepared
	now  int64             // when the purchase is dated (Prepare)
	held []string          // the keys of db.holds this purchase holds

	read      *shipping.Shipment // the shipment as read before the reservation; nil if unreadable
	onlyRate  bool               // read's ShippingRates hold the bought rate alone (wholeRates)
	stored    []byte             // read's packed value, which every change to the shipment rewrites
	rendering []byte             // read's stored rendering
	pre       *prebought         // read bought with the mark; nil unless prepared from read
	labelID   string
	begun     bool // this purchase wrote its attempt (Prepare), which Release ends

	key      *shipping.StoredKey // the Idempotency-Key as recorded before; nil if it was not
	s        *shipping.Shipment  // the shipment to buy
	orders   []shipping.OrderShipment
	asRead   bool   // s is read, and pre its purchase
	rendered string // the bought shipment's rendering, when rendered in Record
	codeJSON []byte // the tracking code, when the purchase was made as prebought
	notify   bool   // whether the account has a LABEL_PURCHASED subscription, as update read it
}

// hold takes one of db.holds for the purchase, waiting while another purchase of this process
// has it.
func (b *labelBuy) hold(ctx context.Context, key string) error {
	if err := b.db.holds.take(ctx, key); err != nil {
		return err
	}
	b.held = append(b.held, key)
	return nil
}

// unhold gives the purchase's holds back; it may be called more than once.
func (b *labelBuy) unhold() {
	for _, key := range b.held {
		b.db.holds.give(key)
	}
	b.held = nil
}

// readOpen reports whether the shipment read before the reservation was OPEN with the rate:
// then it is the one the purchase checks and prepares, with no second read.
func (b *labelBuy) readOpen() bool {
	return b.read != nil && b.read.Status == shipping.StatusOpen && b.rateOf(b.read) != nil
}

// Prepare takes the purchase to record (shipping.Reservation) and, if the shipment was read
// OPEN with the rate, renders it bought with the mark for the tracking code.
func (b *labelBuy) Prepare(ctx context.Context, p shipping.Purchase) error {
	b.p, b.now = p, Micros(p.At)
	if p.Durable && b.r.Attempt == "" {
		if err := b.db.beginAttempt(ctx, b.r, p, b.rateOf(b.s).Carrier); err != nil {
			return err
		}
		b.begun = true
	}
	if !b.asRead {
		return nil
	}
	bought := *b.read
	p.Apply(&bought, trackingCodeMark)
	var err error
	b.pre, err = prebuy(&bought, b.rendering, b.read.UpdatedAt, func() error {
		err := b.wholeRates(ctx, b.db.r)
		bought.ShippingRates = b.read.ShippingRates
		return err
	})
	b.asRead = b.pre != nil
	return err
}

// wholeRates reads, once, the quotes of the shipment read before the reservation that
// shipmentToBuy left out: the answer is the stored rendering, which has them, except where the
// shipment itself is (BuyRequest.WholeShipment, an Idempotency-Key's stored answer) or is
// rendered whole (a stored rendering that cannot be spliced: prebuy).
func (b *labelBuy) wholeRates(ctx context.Context, q querier) error {
	if !b.onlyRate {
		return nil
	}
	b.read.ShippingRates = nil
	if err := loadQuotes(ctx, q, []*shipping.Shipment{b.read}); err != nil {
		return err
	}
	b.onlyRate = false
	return nil
}

// rateOf returns the rate bought in s, nil if s has none of that ID.
func (b *labelBuy) rateOf(s *shipping.Shipment) *shipping.Rate {
	if s == nil {
		return nil
	}
	for i := range s.ShippingRates {
		if s.ShippingRates[i].ID == b.r.RateID {
			return &s.ShippingRates[i]
		}
	}
	return nil
}

// reserve reads what decides whether the purchase may go on (shipping.BuyRequest.Check): the
// idempotency key as recorded, if there is one (it is written with its answer when the purchase
// is recorded); the shipment (the one read before, when it was OPEN with the rate); and the
// shipments of its order.
func (b *labelBuy) reserve(ctx context.Context) error {
	if b.r.Key != "" {
		var fingerprint, answer string
		err := b.db.r.QueryRowContext(ctx, `SELECT fingerprint, response FROM idempotency_keys
			WHERE account_id = $1 AND idempotency_key = $2`, b.r.AccountID, b.r.Key).Scan(&fingerprint, &answer)
		switch {
		case err == nil:
			b.key = &shipping.StoredKey{Fingerprint: fingerprint}
			if b.key.Answer, err = storedAnswer(answer, b.r); err != nil {
				return err
			}
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
	}
	b.s, b.asRead = b.read, b.readOpen()
	if !b.asRead {
		s, err := b.db.shipmentIn(ctx, b.db.r, b.r.AccountID, b.r.ShipmentID)
		if errors.Is(err, ErrNotFound) {
			b.s = nil // the account has no such shipment: Check says so, after the key
			return nil
		}
		if err != nil {
			return err
		}
		if b.s = s; b.read != nil { // a shipment's order never changes
			s.OrderID, s.Additional = b.read.OrderID, b.read.Additional
		} else if err := b.db.r.QueryRowContext(ctx, `SELECT COALESCE(order_id, ''), order_additional FROM shipments
			WHERE account_id = $1 AND id = $2`, b.r.AccountID, b.r.ShipmentID).Scan(&s.OrderID, &s.Additional); err != nil {
			return err
		}
	}
	if b.s.OrderID == "" || b.s.Additional {
		return nil
	}
	shipments, err := orderShipments(ctx, b.db.r, b.r.AccountID, []string{b.s.OrderID})
	b.orders = shipments[b.s.OrderID]
	return err
}

// storedAnswer reads the answer stored under r's idempotency key.
func storedAnswer(answer string, r shipping.BuyRequest) (*shipping.Shipment, error) {
	var s shipping.Shipment
	if err := json.Unmarshal([]byte(answer), &s); err != nil {
		return nil, fmt.Errorf("idempotency key %s: stored answer: %w", r.Key, err)
	}
	s.AccountID = r.AccountID
	if s.ShippingLabel != nil { // the stored answer does not show what is not JSON
		s.ShippingLabel.CommercialInvoice = s.HasCustomsDocuments()
	}
	return &s, nil
}

// Key is the idempotency key as recorded before the purchase (shipping.Reservation).
func (b *labelBuy) Key() (shipping.StoredKey, bool) {
	if b.key == nil {
		return shipping.StoredKey{}, false
	}
	return *b.key, true
}

// OrderShipments are the shipments of the shipment's order (shipping.Reservation).
func (b *labelBuy) OrderShipments() []shipping.OrderShipment { return b.orders }

// Held is the shipment to buy and the rate (shipping.Reservation).
func (b *labelBuy) Held() (*shipping.Shipment, *shipping.Rate) { return b.s, b.rateOf(b.s) }

// LabelID is the new label's ID (shipping.Reservation).
func (b *labelBuy) LabelID() string {
	if b.labelID == "" {
		b.labelID = b.db.NewID()
	}
	return b.labelID
}

// Release gives the shipment up, and ends the attempt Prepare wrote (shipping.Reservation).
func (b *labelBuy) Release(ctx context.Context) error {
	b.unhold()
	if !b.begun {
		return nil
	}
	b.begun = false
	return b.db.dropPendingAttempt(ctx, b.labelID)
}

// Record writes the purchase under code (shipping.Reservation), and returns the bought shipment
// with its stored rendering.
func (b *labelBuy) Record(ctx context.Context, code string, check func(shipping.Reservation) error) (*shipping.Shipment, string, error) {
	defer b.unhold()
	done, err := b.recordAtOnce(ctx, code, check)
	if err == nil && !done {
		err = b.db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error { return b.record(ctx, tx, code, check) })
	}
	if err != nil {
		return nil, "", err
	}
	if b.r.WholeShipment && b.s == b.read {
		if err := b.wholeRates(ctx, b.db.r); err != nil { // quotes never change: read after the commit
			return nil, "", err
		}
	}
	if b.codeJSON != nil {
		return b.s, b.pre.shipment.with(b.codeJSON), nil
	}
	return b.s, b.rendered, nil
}

// record writes the purchase under code: the shipment bought, if it is still held for this
// purchase, the label, the LABEL_PURCHASED event and the idempotency key's
// answer.
func (b *labelBuy) record(ctx context.Context, tx *sql.Tx, code string, check func(shipping.Reservation) error) error {
	b.rendered, b.codeJSON = "", nil
	if b.s.OrderID != "" && !b.s.Additional {
		var err error
		if b.orders, err = b.db.lockOrderShipments(ctx, tx, b.r.AccountID, b.s.OrderID); err != nil {
			return err
		}
	}
	if err := check(b); err != nil {
		return err
	}
	if b.p.Durable {
		if ended, err := endAttempt(ctx, tx, b.labelID); err != nil || !ended {
			return cmp.Or(err, shipping.ErrReservationLost)
		}
	}
	packedLabel, err := b.markBought(ctx, tx, code)
	if err != nil {
		return err
	}
	s := b.s
	_, err = tx.ExecContext(ctx, `INSERT INTO shipping_labels (`+labelInsertColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`, b.labelValues(s, code, packedLabel)...)
	if trackingCodeTaken(err) {
		return shipping.ErrTrackingNumberTaken
	}
	if err != nil {
		return err
	}
	if b.notify {
		e := shipping.PurchasedEvent(s.ShippingLabel)
		if err := b.db.insertEvents(ctx, tx, &b.r.AccountID, e.Topic, e.Payload); err != nil {
			return err
		}
	}
	if b.r.Key == "" {
		return nil
	}
	if s == b.read {
		if err := b.wholeRates(ctx, tx); err != nil {
			return err
		}
	}
	answer, err := json.Marshal(s)
	if err != nil {
		return err
	}
	// The key is claimed here, with its answer: a purchase of another process that recorded
	// under it first wins, and this one is rolled back (its label is voided).
	res, err := tx.ExecContext(ctx, `INSERT INTO idempotency_keys (account_id, idempotency_key, fingerprint,
		shipment_id, response, created_at) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (account_id, idempotency_key) DO NOTHING`,
		b.r.AccountID, b.r.Key, b.r.Fingerprint, b.r.ShipmentID, string(answer), b.now)
	if err := rowsOrNotFound(res, err); errors.Is(err, ErrNotFound) {
		return shipping.ErrIdempotencyKeyTaken
	}
	return err
}

// boughtUpdate writes the shipment bought from rate, with boughtValues, if it is still OPEN;
// a statement adds its own conditions.
const boughtUpdate = `UPDATE shipments SET status = $1, carrier = $2, updated_at = $3, packed = $4
	WHERE account_id = $5 AND id = $6 AND status = $7`

// boughtValues are boughtUpdate's values, with the bought shipment's packed value.
func (b *labelBuy) boughtValues(rate *shipping.Rate, packedShipment []byte) []any {
	return []any{shipping.StatusPurchased, rate.Carrier, b.now, packedShipment, b.r.AccountID, b.r.ShipmentID, shipping.StatusOpen}
}

// labelInsertColumns are the columns of a new label's row, in labelValues' order.
const labelInsertColumns = `id, account_id, shipment_id, shipping_rate_id, carrier, service, tracking_code, status,
	label_format, created_at, updated_at, insured_cents, insurance_cents, packed, commercial_invoice`

// labelValues are the values of the new label's row of s, bought under code, with its packed
// value.
func (b *labelBuy) labelValues(s *shipping.Shipment, code string, packedLabel []byte) []any {
	rate := b.rateOf(s)
	insured := sql.NullInt64{Int64: b.p.InsuredCents, Valid: b.p.InsuredCents > 0}
	return []any{b.labelID, b.r.AccountID, b.r.ShipmentID, rate.ID, rate.Carrier, rate.Service, code, shipping.LabelPreTransit,
		s.LabelFormat, b.now, b.now, insured, b.p.InsuranceCents(), packedLabel, s.ShippingLabel.CommercialInvoice}
}

// recordAtOnce records the purchase in one statement on PostgreSQL, when the shipment is still
// as read and the purchase writes only its row and the label's: no order to lock, no
// idempotency key and no subscription to LABEL_PURCHASED to tell (the statement's UPDATE finds
// no row otherwise). A statement outside a transaction commits on its own, which spares BEGIN
// and COMMIT and a statement their round trips: a third of the buy's. done is false when the
// purchase is left to record's transaction.
func (b *labelBuy) recordAtOnce(ctx context.Context, code string, check func(shipping.Reservation) error) (done bool, err error) {
	if b.db.dialect != PostgreSQL || !b.asRead || b.p.Durable || b.r.Key != "" || b.s.OrderID != "" && !b.s.Additional {
		return false, nil
	}
	if err := check(b); err != nil {
		return false, err
	}
	s := *b.s // bought only if the statement writes it: else record checks the shipment as read
	rate := b.rateOf(&s)
	b.p.Apply(&s, code)
	s.AccountID = b.r.AccountID
	packedShipment, packedLabel, err := b.packings(&s, code)
	if err != nil {
		return false, err
	}
	args := append(b.boughtValues(rate, packedShipment), b.stored)
	notify := subscribed("shipments", &args, webhook.TopicLabelPurchased)
	// The select list's parameters are cast: PostgreSQL would read them as text.
	res, err := b.db.w.ExecContext(ctx, `WITH bought AS (`+boughtUpdate+` AND packed = $8 AND NOT `+notify+`
			RETURNING id)
		INSERT INTO shipping_labels (`+labelInsertColumns+`)
		SELECT $11, $12, $13, $14, $15, $16, $17, $18, $19, CAST($20 AS BIGINT), CAST($21 AS BIGINT),
			CAST($22 AS BIGINT), CAST($23 AS BIGINT), CAST($24 AS BYTEA), CAST($25 AS BOOLEAN) FROM bought`,
		append(args, b.labelValues(&s, code, packedLabel)...)...)
	if trackingCodeTaken(err) {
		return false, shipping.ErrTrackingNumberTaken
	}
	if err = rowsOrNotFound(res, err); errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err == nil {
		*b.s = s
	}
	return err == nil, err
}

// markBought writes the held shipment bought under code and returns its label packed: as
// prebought while its row is still as read, else read again in tx (a PATCH of its references
// may have come between) and rendered afresh.
func (b *labelBuy) markBought(ctx context.Context, tx *sql.Tx, code string) (packedLabel []byte, err error) {
	if b.asRead {
		packedLabel, ok, err := b.update(ctx, tx, code, b.stored)
		if err != nil || ok {
			return packedLabel, err
		}
		b.asRead = false
	}
	if b.s, err = b.db.shipmentIn(ctx, tx, b.r.AccountID, b.r.ShipmentID); err != nil {
		return nil, err
	}
	if b.rateOf(b.s) == nil {
		return nil, shipping.ErrReservationLost
	}
	packedLabel, ok, err := b.update(ctx, tx, code, nil)
	if err == nil && !ok {
		err = shipping.ErrReservationLost
	}
	return packedLabel, err
}

// update writes b.s bought under code over its row, if it is still OPEN and, with stored, still
// has that packed value; ok reports whether it was. It reads b.notify in the same statement,
// which spares the purchase emit's own query.
func (b *labelBuy) update(ctx context.Context, tx *sql.Tx, code string, stored []byte) (packedLabel []byte, ok bool, err error) {
	s, rate := b.s, b.rateOf(b.s)
	b.p.Apply(s, code)
	s.AccountID = b.r.AccountID
	packedShipment, packedLabel, err := b.packings(s, code)
	if err != nil {
		return nil, false, err
	}
	query, args := boughtUpdate, b.boughtValues(rate, packedShipment)
	if stored != nil {
		query += ` AND packed = $8`
		args = append(args, stored)
	}
	query += ` RETURNING ` + subscribed("shipments", &args, webhook.TopicLabelPurchased)
	err = tx.QueryRowContext(ctx, query, args...).Scan(&b.notify)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	return packedLabel, err == nil, err
}

// packings packs the bought shipment s and its label: as prebought, with code spliced in, when s
// is as read, else rendered afresh (the rendering kept for Record's answer).
func (b *labelBuy) packings(s *shipping.Shipment, code string) (packedShipment, packedLabel []byte, err error) {
	if b.asRead {
		if b.codeJSON, err = json.Marshal(code); err != nil {
			return nil, nil, err
		}
		return b.pre.packedShipment.Fill(b.codeJSON), b.pre.packedLabel.Fill(b.codeJSON), nil
	}
	shipmentJSON, labelJSON, err := renderings(s)
	if err != nil {
		return nil, nil, err
	}
	b.rendered = string(shipmentJSON)
	return codec.Pack(shipmentJSON), codec.Pack(labelJSON), nil
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

// lockOrderShipments reads the shipments of an order in the transaction that records a buy of
// one of them, so that of two buys for one order that race (in two processes) the second sees
// the first's label: on PostgreSQL the order's row is locked first (the second waits for the
// first to commit, and its next statement reads the committed label); SQLite runs one writer at
// a time.
func (db *DB) lockOrderShipments(ctx context.Context, tx *sql.Tx, accountID, orderID string) ([]shipping.OrderShipment, error) {
	if err := db.lock(ctx, tx, `SELECT id FROM orders WHERE account_id = $1 AND id = $2`, accountID, orderID); err != nil {
		return nil, err
	}
	shipments, err := orderShipments(ctx, tx, accountID, []string{orderID})
	return shipments[orderID], err
}

// shipmentToBuy reads a shipment with the rate rateID alone among its quotes (none if it has no
// such rate), without its label, its packed value and its rendering, off the writer; nil when
// it cannot (a missing shipment, one without a packed rendering, an error: the purchase's
// transaction reads it again). Without its label: the read is used only if the shipment is
// OPEN, and an OPEN shipment has none (a label moves its shipment on, and no shipment moves
// back).
func (db *DB) shipmentToBuy(ctx context.Context, r shipping.BuyRequest) (s *shipping.Shipment, packed, rendering []byte, attempted bool) {
	accountID, id, rateID := r.AccountID, r.ShipmentID, r.RateID
	var orderID sql.NullString
	var additional bool
	s, err := scanShipment(db.readRow(ctx, `SELECT `+shipmentColumns+`, packed, order_id, order_additional, `+attemptedExists+`
		FROM `+shipmentsFrom+` WHERE account_id = $1 AND id = $2`, accountID, id, r.Attempt, r.Key),
		&packed, &orderID, &additional, &attempted)
	if err != nil || packed == nil {
		return nil, nil, nil, false
	}
	s.OrderID, s.Additional = orderID.String, additional
	if rendering, err = codec.AppendRendering(nil, packed); err != nil {
		return nil, nil, nil, false
	}
	// The bought rate alone: the stored rendering has the others (labelBuy.wholeRates).
	s.ShippingRates = []shipping.Rate{}
	rate, err := scanQuote(db.readRow(ctx, `SELECT `+quoteColumns+` FROM shipment_quotes WHERE shipment_id = $1 AND id = $2`, id, rateID))
	if err == nil {
		s.ShippingRates = append(s.ShippingRates, rate)
	} else if !errors.Is(err, sql.ErrNoRows) {
		return nil, nil, nil, false
	}
	return s, packed, rendering, attempted
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
	packedShipment, packedLabel codec.Holed
}

// prebuy makes the prebought of s, bought with trackingCodeMark for its tracking code, from
// open, its rendering before (when its updated_at was then); nil when a rendering does not
// hold the mark. When open cannot be spliced, s is rendered whole, its every quote read first
// (wholeRates).
func prebuy(s *shipping.Shipment, open []byte, then shipping.Timestamp, wholeRates func() error) (*prebought, error) {
	labelJSON, err := renderLabel(s.ShippingLabel)
	if err != nil {
		return nil, err
	}
	shipmentJSON := boughtRendering(open, s, then, labelJSON)
	if shipmentJSON == nil {
		if err := wholeRates(); err != nil {
			return nil, err
		}
		if shipmentJSON, err = renderShipment(s); err != nil {
			return nil, err
		}
	}
	ms, ok1 := markedAt(shipmentJSON)
	ml, ok2 := markedAt(labelJSON)
	if !ok1 || !ok2 {
		return nil, nil
	}
	return &prebought{ms, codec.PackHole(len(ms.before), ms.join()), codec.PackHole(len(ml.before), ml.join())}, nil
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

// PruneIdempotencyKeys forgets the idempotency keys recorded before cutoff, of every account
// (a maintenance pass). A retry under a forgotten key is executed again, which cannot buy twice:
// its shipment is no longer OPEN.
func (db *DB) PruneIdempotencyKeys(ctx context.Context, cutoff time.Time) (int64, error) {
	var n int64
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE created_at < $1`, Micros(cutoff))
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}

// ShipmentToCancel reads the shipment with its label, and whether the label was billed
// (shipping.BuyStore).
func (db *DB) ShipmentToCancel(ctx context.Context, accountID, shipmentID string) (*shipping.Shipment, error) {
	s, err := db.shipmentIn(ctx, db.r, accountID, shipmentID)
	if err != nil || s.ShippingLabel == nil {
		return s, err
	}
	var billed int
	err = db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM billing_line_items WHERE account_id = $1 AND label_id = $2`,
		accountID, s.ShippingLabel.ID).Scan(&billed)
	s.ShippingLabel.Billed = billed > 0
	return s, err
}

// RecordCancel writes the cancel of s, as read, in one transaction (shipping.BuyStore): the
// shipment CANCELLED if it is still in its status and, for shipping.CancelAndVoid, its label VOIDED
// if it is still PRE_TRANSIT, never scanned, billed nor manifested, with a LABEL_VOIDED event. A
// shipment cancelled meanwhile is answered as it is.
func (db *DB) RecordCancel(ctx context.Context, s *shipping.Shipment, action shipping.CancelAction) (*shipping.Shipment, error) {
	accountID := s.AccountID
	var out *shipping.Shipment
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		now := db.now()
		res, err := tx.ExecContext(ctx, `UPDATE shipments SET status = $1, updated_at = $2
			WHERE account_id = $3 AND id = $4 AND status = $5`, shipping.StatusCancelled, now, accountID, s.ID, s.Status)
		if err := rowsOrNotFound(res, err); errors.Is(err, ErrNotFound) {
			if out, err = db.shipmentIn(ctx, tx, accountID, s.ID); err == nil && out.Status != shipping.StatusCancelled {
				err = fmt.Errorf("%w: the shipment changed while it was cancelled", shipping.ErrInvalidState)
			}
			return err
		} else if err != nil {
			return err
		}
		if action == shipping.CancelAndVoid {
			if err := db.voidLabel(ctx, tx, accountID, s.ShippingLabel, now); err != nil {
				return err
			}
		}
		out, err = db.rerender(ctx, tx, accountID, s.ID)
		return err
	})
	return out, err
}

// voidLabel makes l VOIDED, if it is still PRE_TRANSIT and was never scanned, billed nor
// manifested, with a LABEL_VOIDED event.
func (db *DB) voidLabel(ctx context.Context, tx *sql.Tx, accountID string, l *shipping.Label, now int64) error {
	res, err := tx.ExecContext(ctx, `UPDATE shipping_labels SET status = $1, substatus = NULL, updated_at = $2
		WHERE account_id = $3 AND id = $4 AND status = $5 AND first_carrier_scan_at IS NULL AND finished_at IS NULL
		AND manifest_id IS NULL AND NOT EXISTS (SELECT 1 FROM billing_line_items WHERE account_id = $3 AND label_id = $4)`,
		shipping.LabelVoided, now, accountID, l.ID, shipping.LabelPreTransit)
	if err := rowsOrNotFound(res, err); errors.Is(err, ErrNotFound) {
		return fmt.Errorf("%w: the label is no longer PRE_TRANSIT", shipping.ErrInvalidState)
	} else if err != nil {
		return err
	}
	events, err := trackingEvents(ctx, tx, accountID, l.ID)
	if err != nil {
		return err
	}
	e := shipping.VoidedEvent(l, events)
	return db.emitEvent(ctx, tx, accountID, e.Topic, e.Payload)
}

// QueueVoid records a sold label to be voided at its carrier and ends its attempt
// (shipping.BuyStore); a label recorded meanwhile is left alone.
func (db *DB) QueueVoid(ctx context.Context, v shipping.SoldLabel) error {
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		now := db.now()
		var recorded int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM shipping_labels WHERE id = $1`, v.LabelID).Scan(&recorded); err != nil || recorded > 0 {
			return err
		}
		if _, err := endAttempt(ctx, tx, v.LabelID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO label_voids (id, account_id, shipment_id, label_id, carrier, tracking_code,
			due_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $7)`,
			db.NewID(), v.AccountID, v.ShipmentID, v.LabelID, v.Carrier, v.TrackingCode, now)
		return err
	})
}

// ClaimVoids claims up to n queued voids due at now until lease runs out (shipping.VoidQueue).
// A claimed void is due again when its lease runs out: the void worker sets the next attempt
// when it fails, and forgets the void when it succeeds.
func (db *DB) ClaimVoids(ctx context.Context, now time.Time, lease time.Duration, n int) ([]shipping.QueuedVoid, error) {
	var due []shipping.QueuedVoid
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var err error
		due, err = claim(ctx, db, tx, voidQueue(Micros(now), Micros(now.Add(lease))), n, scanQueuedVoid)
		return err
	})
	return due, err
}

// voidQueue leases the voids due at now until leaseEnd, the longest due first.
func voidQueue(now, leaseEnd int64) queue {
	return queue{table: "label_voids", key: []string{"id"}, where: "due_at <= $1", args: []any{now}, order: "due_at",
		set: "due_at = $1", setArgs: []any{leaseEnd}, returning: "id, account_id, shipment_id, label_id, carrier, tracking_code, attempts"}
}

func scanQueuedVoid(row rowScanner) (shipping.QueuedVoid, error) {
	var v shipping.QueuedVoid
	err := row.Scan(&v.ID, &v.AccountID, &v.ShipmentID, &v.LabelID, &v.Carrier, &v.TrackingCode, &v.Attempts)
	return v, err
}

// VoidDone forgets a void the carrier agreed to (shipping.VoidQueue).
func (db *DB) VoidDone(ctx context.Context, id string) error {
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM label_voids WHERE id = $1`, id)
		return err
	})
}

// VoidFailed counts a failed void and sets when it is due again (shipping.VoidQueue).
func (db *DB) VoidFailed(ctx context.Context, id string, next time.Time) error {
	return db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE label_voids SET attempts = attempts + 1, due_at = $1 WHERE id = $2`, Micros(next), id)
		return err
	})
}

// holds are the keys (a shipment, an order) purchases of this process hold: a purchase takes
// its keys before it reads and gives them back once recorded or released, so a second purchase
// of the same shipment or order waits and then finds what the first did.
type holds struct {
	mu sync.Mutex
	m  map[string]chan struct{} // closed when given back
}

// take takes key, waiting while another purchase has it, or until ctx ends.
func (h *holds) take(ctx context.Context, key string) error {
	for {
		h.mu.Lock()
		if h.m == nil {
			h.m = map[string]chan struct{}{}
		}
		busy, ok := h.m[key]
		if !ok {
			h.m[key] = make(chan struct{})
			h.mu.Unlock()
			return nil
		}
		h.mu.Unlock()
		select {
		case <-busy:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// give gives key back.
func (h *holds) give(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	close(h.m[key])
	delete(h.m, key)
}
