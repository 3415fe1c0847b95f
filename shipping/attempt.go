package shipping

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/waybill/waybill/shipping/work"
)

// ErrPurchaseUnresolved is a buy of a shipment whose earlier purchase ended in an unknown state:
// its process died while the carrier was selling, and the carrier cannot be asked again. The
// shipment is not bought again until the operator says what the carrier did
// (Buyer.ResolveAttempt).
var ErrPurchaseUnresolved = errors.New("a purchase of this shipment ended in an unknown state; an operator must resolve it at the carrier")

// ErrPurchaseInProgress is a purchase prepared while another purchase of its shipment, or under
// its Idempotency-Key, is under way, in this process or another: the buy waits and looks again.
var ErrPurchaseInProgress = errors.New("another purchase of the shipment is in progress")

// Attempt states: PENDING while its process buys, or until recovery ends it; UNRESOLVED when it
// cannot be ended without the operator.
const (
	AttemptPending    = "PENDING"
	AttemptUnresolved = "UNRESOLVED"
)

// Attempt is a purchase from a carrier that sells outside waybill, recorded before the carrier
// is called and ended in the transaction that records its label, or queues its void.
type Attempt struct {
	LabelID, AccountID, ShipmentID, RateID, Carrier string
	InsuredCents                                    int64
	Key, Fingerprint                                string
	State                                           string
	StartedAt                                       time.Time
}

// Request is the buy the attempt was made for, to make again under its label id.
func (a Attempt) Request() BuyRequest {
	return BuyRequest{AccountID: a.AccountID, ShipmentID: a.ShipmentID, RateID: a.RateID, InsuredCents: a.InsuredCents,
		Key: a.Key, Fingerprint: a.Fingerprint, Attempt: a.LabelID}
}

// PurchaseMode says what a carrier's purchase is outside waybill.
type PurchaseMode int

const (
	// SellsOutside: the carrier sells the label, and answers a repeated Purchase with the same
	// LabelID with the same label. Every Go carrier of the host must; it is the default.
	SellsOutside PurchaseMode = iota
	// SellsNothing: the purchase only numbers the label from waybill's own records (a stored
	// carrier's serial range); nothing outside needs recovering.
	SellsNothing
	// Unrepeatable: the carrier sells the label and cannot be asked again under the same label
	// (an API without an idempotency key); a purchase whose process died is UNRESOLVED.
	Unrepeatable
)

// PurchaseModer is implemented by a carrier whose purchases are not SellsOutside.
type PurchaseModer interface {
	PurchaseMode() PurchaseMode
}

// ModeOf is c's purchase mode.
func ModeOf(c Carrier) PurchaseMode {
	if m, ok := c.(PurchaseModer); ok {
		return m.PurchaseMode()
	}
	return SellsOutside
}

// AttemptStore is what recovering and resolving purchase attempts need persisted.
type AttemptStore interface {
	// ClaimStaleAttempts claims up to n PENDING attempts started before cutoff, each until
	// lease runs out from now, so one process recovers each at a time.
	ClaimStaleAttempts(ctx context.Context, cutoff, now time.Time, lease time.Duration, n int) ([]Attempt, error)
	// UnresolveAttempt makes a PENDING attempt UNRESOLVED.
	UnresolveAttempt(ctx context.Context, labelID string) error
	// Attempt reads an attempt; ErrNotFound when there is none.
	Attempt(ctx context.Context, labelID string) (Attempt, error)
	// DropAttempt ends an UNRESOLVED attempt that sold nothing that stands: the shipment may be
	// bought again.
	DropAttempt(ctx context.Context, labelID string) error
}

// PurchaseRecovery ends the purchase attempts whose process died: each still PENDING past the
// carrier's deadline and the void lease is bought again under its label id where the carrier
// allows (and recorded, or voided if the shipment no longer takes it), else made UNRESOLVED.
type PurchaseRecovery struct {
	Store AttemptStore
	Buyer *Buyer
	Every time.Duration
	Now   func() time.Time
	Log   *slog.Logger
}

// Run recovers at once, then every Every, until ctx ends.
func (p *PurchaseRecovery) Run(ctx context.Context) {
	work.Loop{Every: p.Every, Log: p.Log, Name: "purchase recovery"}.Run(ctx, p.Drain)
}

// attemptGrace is how long after its carrier's deadline an attempt's own process still has to
// record it. An attempt older than both has lost its process; should the process be alive after
// all, the two record one label (the carrier answers the same one), and the void of the one that
// loses spares a label recorded (QueueVoid).
const attemptGrace = 5 * time.Second

// Drain recovers every attempt that is stale now.
func (p *PurchaseRecovery) Drain(ctx context.Context) error {
	lease := p.Buyer.VoidLease()
	for {
		now := p.Now()
		attempts, err := p.Store.ClaimStaleAttempts(ctx, now.Add(-p.Buyer.timeout()-attemptGrace), now, lease, 16)
		if err != nil || len(attempts) == 0 {
			return err
		}
		for _, a := range attempts {
			if err := p.Buyer.Recover(ctx, p.Store, a); err != nil {
				p.Buyer.log().Error("purchase recovery: attempt left for a later pass", "label", a.LabelID, "shipment", a.ShipmentID,
					"carrier", a.Carrier, "err", err)
			}
		}
		if len(attempts) < 16 {
			return nil
		}
	}
}

// Recover ends attempt a, whose process died while the carrier sold: a carrier that may be
// asked again is, under the attempt's label id, and its label recorded, or voided if the
// shipment no longer takes it; any other attempt becomes UNRESOLVED. A failed call leaves the
// attempt PENDING for a later pass. A label this process still holds a void for is left to it.
func (b *Buyer) Recover(ctx context.Context, st AttemptStore, a Attempt) error {
	if b.unqueued.holds(a.LabelID) {
		return nil
	}
	c, ok, err := b.Carrier(ctx, a.Carrier)
	if err != nil {
		return err
	}
	if !ok || ModeOf(c) != SellsOutside {
		b.log().Error("purchase recovery: a purchase whose process died cannot be asked of its carrier again; it is UNRESOLVED",
			"label", a.LabelID, "shipment", a.ShipmentID, "carrier", a.Carrier)
		return st.UnresolveAttempt(ctx, a.LabelID)
	}
	r := a.Request()
	res, err := b.Store.ReserveBuy(ctx, r)
	if err != nil {
		return err
	}
	s, rate := res.Held()
	if rate == nil { // nothing left to ask the carrier for
		res.Release(ctx)
		return st.UnresolveAttempt(ctx, a.LabelID)
	}
	replay, refused := r.Check(res)
	p := r.PurchaseOf(res, b.Now())
	p.Durable = true
	if err := res.Prepare(ctx, p); err != nil {
		res.Release(ctx)
		return err
	}
	sold := SoldLabel{AccountID: a.AccountID, ShipmentID: a.ShipmentID, LabelID: a.LabelID, Carrier: a.Carrier, durable: true}
	sold.TrackingCode, err = b.purchase(ctx, c, sold, PurchaseRequest{LabelID: a.LabelID, ShipmentID: s.ID,
		Service: rate.Service, ShipDate: s.ShipDate, Serials: b.Serials})
	if err == nil && (refused != nil || replay != nil) {
		res.Release(ctx)
		b.voidSold(ctx, sold, cmp.Or(refused, ErrReservationLost))
		return nil
	}
	if err == nil {
		_, _, err = b.record(ctx, res, r, sold)
	}
	if err != nil {
		res.Release(ctx)
		return err
	}
	b.log().Warn("purchase recovery: a purchase whose process died was bought again and recorded", "label", a.LabelID,
		"shipment", a.ShipmentID, "carrier", a.Carrier, "tracking_code", sold.TrackingCode)
	return nil
}

// ResolveAttempt ends an UNRESOLVED attempt with the operator's finding at the carrier: voided
// (nothing it sold stands; the shipment may be bought again) or sold under trackingCode, which
// is recorded as the shipment's label.
func (b *Buyer) ResolveAttempt(ctx context.Context, st AttemptStore, labelID string, voided bool, trackingCode string) (*Shipment, error) {
	a, err := st.Attempt(ctx, labelID)
	if err != nil {
		return nil, err
	}
	if a.State != AttemptUnresolved {
		return nil, fmt.Errorf("%w: the purchase attempt is %s, not UNRESOLVED", ErrInvalidState, a.State)
	}
	if voided {
		return nil, st.DropAttempt(ctx, labelID)
	}
	if !ValidTrackingCode(trackingCode) {
		var v ValidationError
		v.Add("tracking", "invalid", "must be 4 to 64 letters, digits and dashes")
		return nil, v.Err()
	}
	r := a.Request()
	res, err := b.Store.ReserveBuy(ctx, r)
	if err != nil {
		return nil, err
	}
	if err := r.Recheck(res); err != nil {
		res.Release(ctx)
		return nil, err
	}
	p := r.PurchaseOf(res, b.Now())
	p.Durable = true
	if err := res.Prepare(ctx, p); err != nil {
		res.Release(ctx)
		return nil, err
	}
	s, _, err := res.Record(ctx, trackingCode, r.Recheck)
	if err != nil {
		res.Release(ctx)
	}
	return s, err
}
