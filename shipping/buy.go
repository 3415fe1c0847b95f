package shipping

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/waybill/waybill/shipping/work"
)

// BuyRequest is one purchase of a shipment's rate.
type BuyRequest struct {
	AccountID, ShipmentID, RateID string
	// InsuredCents is the declared value to insure (insurance_amount); 0 for none.
	InsuredCents int64
	// Key is the request's Idempotency-Key ("" for none), Fingerprint what the request asked
	// for: the same key must ask the same.
	Key, Fingerprint string
	// WholeShipment asks that Bought.Shipment carry every quote of the shipment, for a caller
	// that answers with it rather than with Bought.Rendered (a label document inlined, say).
	// Without it a store may give the bought rate alone when it gives the rendering.
	WholeShipment bool
	// Attempt is the label id of the purchase attempt this buy makes again (its recovery or
	// resolution); "" for a new purchase.
	Attempt string
}

// MaxIdempotencyKey bounds an Idempotency-Key.
const MaxIdempotencyKey = 255

// ValidIdempotencyKey reports whether k can be an Idempotency-Key: 1 to 255 printable ASCII
// characters.
func ValidIdempotencyKey(k string) bool {
	if k == "" || len(k) > MaxIdempotencyKey {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

// Keyed is the request under the Idempotency-Key key ("" for none), fingerprinted with what it
// asks for: the shipment, the rate, the insurance and whether the label document is inlined.
func (r BuyRequest) Keyed(key string, inlineLabel bool) BuyRequest {
	if key == "" {
		return r
	}
	fields := "buy\x00" + r.ShipmentID + "\x00" + r.RateID + "\x00" + strconv.FormatBool(inlineLabel)
	if r.InsuredCents > 0 {
		// Without insurance the fingerprint is the one keys recorded before insurance have.
		fields += "\x00insured=" + strconv.FormatInt(r.InsuredCents, 10)
	}
	sum := sha256.Sum256([]byte(fields))
	r.Key, r.Fingerprint = key, hex.EncodeToString(sum[:])
	return r
}

// Bought is a purchase's answer: the bought shipment, its stored rendering when the store kept
// one (empty for a replay), and whether it is an Idempotency-Key's stored answer. With a
// rendering and without BuyRequest.WholeShipment, Shipment.ShippingRates may hold the bought
// rate alone: the rendering is the answer.
type Bought struct {
	Shipment *Shipment
	Rendered string
	Replayed bool
}

// ErrIdempotencyKeyTaken is what Reservation.Record answers when a purchase of another process
// recorded under the same Idempotency-Key first: Buy voids its own label and answers as a
// replay under the key would (the stored answer, or ErrIdempotencyKeyReused).
var ErrIdempotencyKeyTaken = fmt.Errorf("%w: another purchase under this Idempotency-Key was recorded first", ErrInvalidState)

// ErrReservationLost is what Reservation.Record answers when the shipment no longer is as
// reserved (cancelled, or held by another purchase after the hold ran out).
var ErrReservationLost = fmt.Errorf("%w: the shipment changed while its label was bought", ErrInvalidState)

// CarrierError is a carrier that could not buy or void a label, timed out, is not configured, or
// answered an unusable tracking code. Its Err goes to the log only.
type CarrierError struct {
	Carrier, Action string // Action: "buy" or "void"
	Err             error
}

func (e *CarrierError) Error() string {
	return "carrier " + e.Carrier + " could not " + e.Action + " the label: " + e.Err.Error()
}

func (e *CarrierError) Unwrap() error { return e.Err }

// errCarrierTimeout is a carrier call that did not return within Buyer.Timeout.
var errCarrierTimeout = errors.New("the carrier did not answer in time")

// A Reservation is a shipment (and its Idempotency-Key, when given) held for one purchase: what
// was read when it was reserved decides whether the purchase may go on (BuyRequest.Check); the
// carrier is called while no transaction is open, then the label is recorded, or the
// reservation released.
type Reservation interface {
	// Key is the purchase's Idempotency-Key as recorded before it; false when it was not.
	Key() (StoredKey, bool)
	// Held is what was reserved: the shipment as it stands (nil when the account has none of
	// its id) and the rate to buy (nil when the shipment has none of its id).
	Held() (s *Shipment, rate *Rate)
	// LabelID is the new label's ID.
	LabelID() string
	// OrderShipments are the shipments made for the shipment's order, nil when it has none or is
	// an additional parcel.
	OrderShipments() []OrderShipment
	// Prepare readies the purchase before the carrier is called, so that recording it has only
	// the tracking code to fill in. A Durable purchase is first written as a PENDING attempt,
	// in its own transaction (ErrPurchaseInProgress when another purchase of the shipment or
	// the key has one); one made again for its attempt (BuyRequest.Attempt) takes that one.
	Prepare(ctx context.Context, p Purchase) error
	// Record writes the prepared purchase under trackingCode in one transaction: the shipment
	// as Purchase.Apply makes it, its label, PurchasedEvent, the Idempotency-Key with its
	// answer, and the end of its attempt (ErrReservationLost if it was ended meanwhile)
	// (ErrIdempotencyKeyTaken when another purchase recorded under the key first). In that
	// transaction the shipment is written only if it is still OPEN as held (else
	// ErrReservationLost), and check decides again with the order's shipments read anew, the
	// order locked (BuyRequest.Recheck): of two buys for one order that race, the second sees
	// the first's label. s is the bought shipment as Bought.Shipment holds it.
	Record(ctx context.Context, trackingCode string, check func(Reservation) error) (s *Shipment, rendered string, err error)
	// Release gives the shipment and the key up, and ends the attempt Prepare wrote, if any:
	// nothing was sold.
	Release(ctx context.Context) error
}

// StoredKey is an Idempotency-Key as recorded: what it was used for and the answer recorded
// with it (nil for a key claimed by a purchase that recorded no answer, which older versions
// did).
type StoredKey struct {
	Fingerprint string
	Answer      *Shipment
}

// Check decides what a reservation allows r: the answer recorded under its Idempotency-Key (a
// replay), ErrIdempotencyKeyReused when the key was used for another request, whatever the
// request names; else the purchase, if the shipment exists with the rate (ErrNotFound), is OPEN
// (CanBuy) and its order is not shipped by another label (ShipOrder).
func (r BuyRequest) Check(res Reservation) (replay *Shipment, err error) {
	if k, ok := res.Key(); ok {
		if k.Fingerprint != r.Fingerprint {
			return nil, ErrIdempotencyKeyReused
		}
		if k.Answer != nil {
			return k.Answer, nil
		}
	}
	s, rate := res.Held()
	if rate == nil {
		return nil, ErrNotFound
	}
	if err := CanBuy(s.Status); err != nil {
		return nil, err
	}
	if s.OrderID != "" && !s.Additional {
		return nil, ShipOrder(res.OrderShipments(), false)
	}
	return nil, nil
}

// BuyStore is what buying and voiding labels need persisted.
type BuyStore interface {
	// ReserveBuy holds the shipment, its order and the Idempotency-Key (when given) from other
	// purchases, and reads them.
	ReserveBuy(ctx context.Context, r BuyRequest) (Reservation, error)
	// QueueVoid records a sold label that must be voided at its carrier (VoidWorker), and ends
	// its purchase attempt, in one transaction; a label recorded meanwhile (its attempt bought
	// again and recorded) is left alone.
	QueueVoid(ctx context.Context, v SoldLabel) error
	// ShipmentToCancel reads the shipment with its label, and whether the label was billed.
	ShipmentToCancel(ctx context.Context, accountID, shipmentID string) (*Shipment, error)
	// RecordCancel writes what cancelling s (as read) with action did, in one transaction that
	// checks s is still as read: the shipment CANCELLED and, for CancelAndVoid, its label VOIDED
	// with a LABEL_VOIDED event. A shipment already CANCELLED meanwhile is answered as it is.
	RecordCancel(ctx context.Context, s *Shipment, action CancelAction) (*Shipment, error)
}

// SoldLabel is a label a carrier sold that waybill did not record, to be voided.
type SoldLabel struct {
	AccountID, ShipmentID, LabelID string
	Carrier, TrackingCode          string
	durable                        bool // bought under a purchase attempt
}

// Buyer buys and voids labels: the carrier is called under a deadline and never inside a
// database transaction. A label the carrier sold whose recording failed is voided at the
// carrier, durably (QueueVoid, then VoidWorker): never lost, never bought twice.
type Buyer struct {
	Store BuyStore
	// Carrier finds a carrier by its code; false when none is configured.
	Carrier func(ctx context.Context, code string) (Carrier, bool, error)
	// Serials hands out stored carriers' tracking serials.
	Serials SerialSource
	// Timeout bounds each carrier call; 0 is DefaultCarrierTimeout.
	Timeout time.Duration
	// unqueued are sold labels to void that the queue could not take yet (VoidWorker retries).
	unqueued unqueuedVoids
	// Now is the clock purchases are dated by.
	Now func() time.Time
	Log *slog.Logger
}

// DefaultCarrierTimeout bounds a carrier call unless configured.
const DefaultCarrierTimeout = 30 * time.Second

func (b *Buyer) timeout() time.Duration {
	if b.Timeout > 0 {
		return b.Timeout
	}
	return DefaultCarrierTimeout
}

// VoidLease is how long a claim on a queued void lasts: past the carrier's deadline, so that
// only a void whose process died is tried again meanwhile.
func (b *Buyer) VoidLease() time.Duration { return 2*b.timeout() + 10*time.Second }

func (b *Buyer) log() *slog.Logger {
	if b.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return b.Log
}

// Buy buys r's rate: reserve, buy from the carrier, record. Another purchase in progress of the
// shipment, its order or the key is waited for, also in another process. Once the carrier is
// called the purchase goes on even if ctx ends (the client left): what the carrier sold is
// recorded, or voided.
func (b *Buyer) Buy(ctx context.Context, r BuyRequest) (Bought, error) {
	for {
		bought, err := b.buy(ctx, r)
		if !errors.Is(err, ErrPurchaseInProgress) || ctx.Err() != nil {
			return bought, err
		}
	}
}

// buy is one try of Buy: ErrPurchaseInProgress when another process began a purchase of the
// shipment or the key between the reservation and its attempt.
func (b *Buyer) buy(ctx context.Context, r BuyRequest) (Bought, error) {
	res, replay, err := b.Reserve(ctx, r)
	if err != nil || replay != nil {
		return Bought{Shipment: replay, Replayed: replay != nil}, err
	}
	s, rate := res.Held()
	release := func() {
		if err := res.Release(context.WithoutCancel(ctx)); err != nil {
			b.log().Error("buy: release the shipment", "shipment", s.ID, "err", err)
		}
	}
	c, err := b.carrier(ctx, rate.Carrier)
	if err != nil {
		release()
		return Bought{}, err
	}
	p := r.PurchaseOf(res, b.Now())
	p.Durable = ModeOf(c) != SellsNothing
	if err := res.Prepare(ctx, p); err != nil {
		release()
		return Bought{}, err
	}
	ctx = context.WithoutCancel(ctx)
	sold := SoldLabel{AccountID: r.AccountID, ShipmentID: s.ID, LabelID: p.LabelID, Carrier: rate.Carrier, durable: p.Durable}
	sold.TrackingCode, err = b.purchase(ctx, c, sold, PurchaseRequest{LabelID: p.LabelID, ShipmentID: s.ID,
		Service: rate.Service, ShipDate: s.ShipDate, Serials: b.Serials})
	if err != nil {
		release()
		return Bought{}, err
	}
	bought, rendered, err := b.record(ctx, res, r, sold)
	if err != nil {
		release()
	}
	// Under a key, another process's purchase recorded first answers for it, as a replay: its
	// Record finds the key taken, or the shipment bought, whichever it checks first.
	if errors.Is(err, ErrIdempotencyKeyTaken) || r.Key != "" && errors.Is(err, ErrReservationLost) {
		return b.replay(ctx, r, err)
	}
	if err != nil {
		return Bought{}, err
	}
	return Bought{Shipment: bought, Rendered: rendered}, nil
}

// record records what the carrier sold under the reservation; a sale it cannot record is
// voided.
func (b *Buyer) record(ctx context.Context, res Reservation, r BuyRequest, sold SoldLabel) (*Shipment, string, error) {
	bought, rendered, err := res.Record(ctx, sold.TrackingCode, r.Recheck)
	switch {
	case errors.Is(err, ErrTrackingNumberTaken):
		// Another label holds the number: voiding it would void that label. A stored carrier's
		// number voids nothing; a host carrier that sold one number twice has the log line.
		b.log().Error("buy: the carrier sold a tracking number another label has", "carrier", sold.Carrier,
			"shipment", sold.ShipmentID, "tracking_code", sold.TrackingCode)
	case err != nil:
		b.voidSold(ctx, sold, err)
	}
	return bought, rendered, err
}

// carrier finds the carrier of the code; a *CarrierError when none is configured.
func (b *Buyer) carrier(ctx context.Context, code string) (Carrier, error) {
	c, ok, err := b.Carrier(ctx, code)
	if err == nil && !ok {
		b.log().Error("buy: carrier failed", "carrier", code, "err", "carrier not configured")
		err = &CarrierError{Carrier: code, Action: "buy", Err: errors.New("carrier not configured")}
	}
	return c, err
}

// PurchaseOf is the purchase r makes, at at, of the rate its reservation holds.
func (r BuyRequest) PurchaseOf(res Reservation, at time.Time) Purchase {
	_, rate := res.Held()
	return Purchase{LabelID: res.LabelID(), RateID: rate.ID, At: at, InsuredCents: r.InsuredCents}
}

// Recheck is Check inside the transaction that records the purchase.
func (r BuyRequest) Recheck(res Reservation) error {
	_, err := r.Check(res)
	return err
}

// Reserve reserves r's shipment and checks what the reservation allows (BuyRequest.Check): a
// reservation to buy, or a replay or a refusal, the reservation then released.
func (b *Buyer) Reserve(ctx context.Context, r BuyRequest) (Reservation, *Shipment, error) {
	res, err := b.Store.ReserveBuy(ctx, r)
	if err != nil {
		return nil, nil, err
	}
	replay, err := r.Check(res)
	if err != nil || replay != nil {
		if rerr := res.Release(ctx); rerr != nil {
			b.log().Error("buy: release the shipment", "shipment", r.ShipmentID, "err", rerr)
		}
		return nil, replay, err
	}
	return res, nil, nil
}

// replay answers r as the purchase that recorded under its Idempotency-Key first: its stored
// answer, or ErrIdempotencyKeyReused if it asked for another purchase. lost is the error of the
// purchase that lost, the answer if the key shows nothing.
func (b *Buyer) replay(ctx context.Context, r BuyRequest, lost error) (Bought, error) {
	res, replay, err := b.Reserve(ctx, r)
	if res != nil {
		res.Release(ctx)
		err = lost
	}
	return Bought{Shipment: replay, Replayed: replay != nil}, err
}

// purchase buys the label from its carrier under the deadline, and checks the tracking code it
// answers. A carrier that answers after the deadline is not waited for; if it then sold the
// label, the label is voided.
func (b *Buyer) purchase(ctx context.Context, c Carrier, sold SoldLabel, req PurchaseRequest) (string, error) {
	fail := func(err error) (string, error) {
		b.log().Error("buy: carrier failed", "carrier", sold.Carrier, "shipment", sold.ShipmentID, "err", err)
		return "", &CarrierError{Carrier: sold.Carrier, Action: "buy", Err: err}
	}
	type answer struct {
		code string
		err  error
	}
	done := make(chan answer, 1)
	callCtx, cancel := context.WithTimeout(ctx, b.timeout())
	defer cancel()
	serials := &watchedSerials{src: req.Serials}
	if req.Serials != nil {
		req.Serials = serials
	}
	go func() {
		code, err := c.Purchase(callCtx, req)
		done <- answer{code, err}
	}()
	var ans answer
	select {
	case ans = <-done:
	case <-callCtx.Done():
		go func() {
			if late := <-done; late.err == nil {
				sold.TrackingCode = late.code
				b.voidSold(ctx, sold, errCarrierTimeout)
			}
		}()
		return fail(errCarrierTimeout)
	}
	switch {
	case errors.Is(ans.err, ErrTrackingNumbersExhausted), ans.err != nil && serials.failed():
		return "", ans.err // the range is used up, or the store failed: not the carrier's doing
	case ans.err != nil:
		return fail(ans.err)
	case !ValidTrackingCode(ans.code):
		return fail(fmt.Errorf("unusable tracking code of %d bytes", len(ans.code)))
	}
	return ans.code, nil
}

// watchedSerials is a purchase's serial source that remembers whether it failed.
type watchedSerials struct {
	src SerialSource
	mu  sync.Mutex
	err error
}

func (w *watchedSerials) NextSerial(ctx context.Context, carrier string, from, to int64) (int64, error) {
	n, err := w.src.NextSerial(ctx, carrier, from, to)
	if err != nil {
		w.mu.Lock()
		w.err = err
		w.mu.Unlock()
	}
	return n, err
}

func (w *watchedSerials) failed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err != nil
}

// voidSold has a label the carrier sold, but waybill did not record (why), voided at the
// carrier: queued for VoidWorker, which retries until the carrier agrees. If even the queue
// cannot be written, a label bought without an attempt is voided once here; one bought under an
// attempt is kept in memory and queued by VoidWorker once the database takes writes again (the
// attempt's recovery covers a crash meanwhile).
func (b *Buyer) voidSold(ctx context.Context, sold SoldLabel, why error) {
	log := b.log().With("carrier", sold.Carrier, "shipment", sold.ShipmentID, "label", sold.LabelID, "tracking_code", sold.TrackingCode)
	if sold.TrackingCode == "" {
		return
	}
	err := b.Store.QueueVoid(ctx, sold)
	if err == nil {
		log.Warn("buy: the carrier sold a label that was not recorded; it is queued to be voided", "why", why)
		return
	}
	if sold.durable {
		b.unqueued.add(sold)
		log.Error("buy: the carrier sold a label that was not recorded, and the void queue cannot be written; retrying", "why", why, "queue", err)
		return
	}
	if verr := b.void(ctx, sold.Carrier, sold.TrackingCode); verr != nil {
		log.Error("buy: a label the carrier sold was neither recorded nor voided", "why", why, "queue", err, "void", verr)
		return
	}
	log.Warn("buy: the carrier sold a label that was not recorded; it was voided", "why", why, "queue", err)
}

// QueueUnqueued writes to the void queue the sold labels it could not take before; those it
// still cannot take stay for the next call.
func (b *Buyer) QueueUnqueued(ctx context.Context) error {
	var failed error
	for _, v := range b.unqueued.take() {
		if err := b.Store.QueueVoid(ctx, v); err != nil {
			b.unqueued.add(v)
			failed = err
			continue
		}
		b.log().Warn("buy: a sold label that was not recorded is queued to be voided at last", "label", v.LabelID,
			"carrier", v.Carrier, "tracking_code", v.TrackingCode)
	}
	return failed
}

// unqueuedVoids are sold labels to void that the queue could not take yet.
type unqueuedVoids struct {
	mu sync.Mutex
	v  []SoldLabel
}

func (u *unqueuedVoids) add(v SoldLabel) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.v = append(u.v, v)
}

func (u *unqueuedVoids) take() []SoldLabel {
	u.mu.Lock()
	defer u.mu.Unlock()
	v := u.v
	u.v = nil
	return v
}

// holds reports whether the label is among them.
func (u *unqueuedVoids) holds(labelID string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, v := range u.v {
		if v.LabelID == labelID {
			return true
		}
	}
	return false
}

// void voids a label at its carrier under the deadline.
func (b *Buyer) void(ctx context.Context, carrier, trackingCode string) error {
	c, ok, err := b.Carrier(ctx, carrier)
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("carrier not configured")
	}
	ctx, cancel := context.WithTimeout(ctx, b.timeout())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- c.Void(ctx, trackingCode) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return errCarrierTimeout
	}
}

// CancelShipment cancels a shipment (Cancel decides what it takes). A label to void is voided at
// its carrier, outside any transaction, before the cancel is recorded.
func (b *Buyer) CancelShipment(ctx context.Context, accountID, shipmentID string) (*Shipment, error) {
	s, err := b.Store.ShipmentToCancel(ctx, accountID, shipmentID)
	if err != nil {
		return nil, err
	}
	action, err := Cancel(s.Status, s.ShippingLabel)
	if err != nil || action == CancelNothing {
		return s, err
	}
	if action == CancelAndVoid {
		l := s.ShippingLabel
		if err := b.void(ctx, l.Carrier, l.TrackingCode); err != nil {
			b.log().Error("void: carrier failed", "carrier", l.Carrier, "label", l.ID, "err", err)
			return nil, &CarrierError{Carrier: l.Carrier, Action: "void", Err: err}
		}
	}
	cancelled, err := b.Store.RecordCancel(context.WithoutCancel(ctx), s, action)
	if err != nil && action == CancelAndVoid {
		b.log().Error("void: the carrier voided a label whose cancel was not recorded", "label", s.ShippingLabel.ID, "err", err)
	}
	return cancelled, err
}

// ValidTrackingCode accepts what a label can print as a Code 128 barcode and a URL can carry:
// 4 to 64 letters, digits and dashes.
func ValidTrackingCode(code string) bool {
	if len(code) < 4 || len(code) > 64 {
		return false
	}
	return !strings.ContainsFunc(code, func(r rune) bool {
		return !(r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r == '-')
	})
}

// ErrIdempotencyKeyReused reports an Idempotency-Key already used for a different request.
var ErrIdempotencyKeyReused = errors.New("idempotency key reused for a different request")

// KeyPruner forgets the Idempotency-Keys older than Retention, every Every: a retry under a
// forgotten key is executed again, which cannot buy twice (its shipment is no longer OPEN).
type KeyPruner struct {
	Store interface {
		// PruneIdempotencyKeys forgets the keys recorded before cutoff, of every account.
		PruneIdempotencyKeys(ctx context.Context, cutoff time.Time) (int64, error)
	}
	Retention, Every time.Duration
	Now              func() time.Time
	Log              *slog.Logger
}

// Run prunes every Every until ctx ends.
func (p *KeyPruner) Run(ctx context.Context) {
	work.Loop{Every: p.Every, Log: p.Log, Name: "idempotency-key pruner"}.Run(ctx, p.Drain)
}

// Drain prunes once.
func (p *KeyPruner) Drain(ctx context.Context) error {
	_, err := p.Store.PruneIdempotencyKeys(ctx, p.Now().Add(-p.Retention))
	return err
}
