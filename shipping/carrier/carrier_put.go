package carrier

import (
	"context"
	"errors"
	"time"

	"github.com/waybill/waybill/shipping"
)

// Writer is what storing a carrier version needs of the store.
type Writer interface {
	// PutCarrierVersion runs fn in one transaction that holds carrier code's row, so that its
	// versions are numbered one after the other and each is compared with the one before; an
	// error from fn rolls the transaction back and is returned.
	PutCarrierVersion(ctx context.Context, code string, fn func(VersionTx) error) error
}

// VersionTx is a carrier version being stored.
type VersionTx interface {
	// Stored is the carrier as stored, deleted or not, with its versions' outlines; nil when it
	// never was.
	Stored() *Stored
	// Card reads the whole card of one of its versions.
	Card(ctx context.Context, version int64) (*Card, error)
	// Others reads every other carrier, deleted ones too, with its versions' outlines. It first
	// takes the one row every put of any carrier updates, so two carriers stored at once are
	// compared with each other, one after the other.
	Others(ctx context.Context) ([]*Stored, error)
	// Add stores card as the carrier's next version, creating the carrier or bringing a deleted
	// one back, and returns the carrier after it.
	Add(ctx context.Context, card *Card) (*Stored, error)
}

// Put is what storing a version answered: the carrier after it (for a dry run, as it
// would be), whether the version created the carrier (or brought a deleted one back), and the
// prices it changed against the version in force on its effective date.
type Put struct {
	Carrier *Stored
	Created bool
	Changes []PriceChange
}

// PutCard validates the card, normalized for carrier code on the date of now, and stores it
// as the carrier's next version; with dryRun it only validates and reports.
func PutCard(ctx context.Context, st Writer, code string, card *Card, dryRun bool, now time.Time) (Put, error) {
	card.Normalize(code, now)
	if err := card.Validate(code); err != nil {
		return Put{}, err
	}
	return putVersion(ctx, st, code, card.EffectiveFrom, dryRun, now, func(bool, *Card) (*Card, error) { return card, nil })
}

// PutPriceGrid stores a version, effective from effectiveFrom (the date of now when empty),
// equal to the version in force on that date but for service's grid. The carrier (not deleted)
// and the service must exist, else shipping.ErrNotFound.
func PutPriceGrid(ctx context.Context, st Writer, code, service, effectiveFrom string, breaks []int64, prices [][]int64,
	dryRun bool, now time.Time) (Put, error) {
	if effectiveFrom == "" {
		effectiveFrom = now.UTC().Format(time.DateOnly)
	}
	return putVersion(ctx, st, code, effectiveFrom, dryRun, now, func(live bool, inForce *Card) (*Card, error) {
		if !live {
			return nil, shipping.ErrNotFound
		}
		if inForce == nil {
			var v shipping.ValidationError
			v.Add("effective_from", "invalid", "no version of carrier "+code+" is in force on "+effectiveFrom)
			return nil, v.Err()
		}
		if inForce.Service(service) == nil {
			return nil, shipping.ErrNotFound
		}
		if err := inForce.CheckGrid(service, prices); err != nil {
			return nil, err
		}
		card := inForce.WithGrid(service, breaks, prices, effectiveFrom)
		return card, card.Validate(code)
	})
}

// Put stores card as carrier code's next version (PutCard), unless code names one of the
// host's Go carriers (refused: a stored carrier never shadows them), and has the registry load
// it at once.
func (r *Registry) Put(ctx context.Context, code string, card *Card, dryRun bool) (Put, error) {
	for _, c := range r.Host {
		if c.Name() == code {
			var v shipping.ValidationError
			v.Add("code", "taken", "is the name of a carrier the host application provides in Go")
			return Put{}, v.Err()
		}
	}
	return r.stored(PutCard(ctx, r.Store, code, card, dryRun, r.Now()))
}

// PutPriceGrid stores a version of carrier code with service's grid replaced (PutPriceGrid),
// and has the registry load it at once.
func (r *Registry) PutPriceGrid(ctx context.Context, code, service, effectiveFrom string, breaks []int64, prices [][]int64,
	dryRun bool) (Put, error) {
	return r.stored(PutPriceGrid(ctx, r.Store, code, service, effectiveFrom, breaks, prices, dryRun, r.Now()))
}

// stored has the registry load the carriers again after a put that stored a version.
func (r *Registry) stored(put Put, err error) (Put, error) {
	if err == nil {
		r.Refresh()
	}
	return put, err
}

// errDryRun rolls back a dry run's transaction.
var errDryRun = errors.New("dry run")

// putVersion stores the card that next makes of the version in force on effectiveFrom (nil for
// a new or deleted carrier, which is not live), once its tracking range overlaps no version of
// another carrier's. Only the version compared with is read whole, so a put
// costs the same at the 1st version and the 100th.
func putVersion(ctx context.Context, st Writer, code, effectiveFrom string, dryRun bool, now time.Time,
	next func(live bool, inForce *Card) (*Card, error)) (Put, error) {
	var put Put
	err := st.PutCarrierVersion(ctx, code, func(tx VersionTx) error {
		c := tx.Stored()
		live := c != nil && !c.Deleted
		var inForce *Card
		if live {
			if v := InForce(c.Versions, effectiveFrom); v != nil {
				var err error
				if inForce, err = tx.Card(ctx, v.Version); err != nil {
					return err
				}
			}
		}
		card, err := next(live, inForce)
		if err != nil {
			return err
		}
		others, err := tx.Others(ctx)
		if err != nil {
			return err
		}
		if err := card.CheckTrackingOverlap(trackingOf(others)); err != nil {
			return err
		}
		put = Put{Changes: PriceChanges(inForce, card), Created: !live}
		if dryRun {
			put.Carrier = withVersion(c, card, now)
			return errDryRun
		}
		if put.Carrier, err = tx.Add(ctx, card); err != nil {
			return err
		}
		put.Carrier.Versions[len(put.Carrier.Versions)-1].Card = card // the answer shows it whole
		return nil
	})
	if errors.Is(err, errDryRun) {
		err = nil
	}
	return put, err
}

// trackingOf is the tracking schemes of every version of the carriers, a deleted carrier's
// too: a version in force or to come can issue numbers, and one replaced has issued some that
// labels still carry, so none may be issued again.
func trackingOf(carriers []*Stored) []Tracking {
	var out []Tracking
	for _, c := range carriers {
		for _, v := range c.Versions {
			out = append(out, Tracking{Carrier: c.Code, Version: v.Version, Tracking: v.Card.Tracking})
		}
	}
	return out
}

// withVersion is the carrier c (nil for one never stored) as it would be with card stored as
// its next version.
func withVersion(c *Stored, card *Card, now time.Time) *Stored {
	out := &Stored{Code: card.Code, CreatedAt: now}
	if c != nil {
		*out = *c
	}
	n := int64(len(out.Versions)) + 1
	out.Versions = append(out.Versions[:len(out.Versions):len(out.Versions)], &Version{Version: n, CreatedAt: now, Card: card})
	out.Deleted, out.UpdatedAt = false, now
	return out
}
