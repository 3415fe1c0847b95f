package carrier

import (
	"context"

	"github.com/waybill/waybill/shipping"
)

// View is a stored carrier as the admin API shows it: the card of one version, that
// version and the one in force today (null before any is), every version, and the tracking
// serials left.
type View struct {
	Card
	Version        int64              `json:"version"`
	InForceVersion *int64             `json:"in_force_version"`
	Tracking       TrackingView       `json:"tracking"`
	Versions       []VersionView      `json:"versions"`
	CreatedAt      shipping.Timestamp `json:"created_at"`
	UpdatedAt      shipping.Timestamp `json:"updated_at"`
	Changes        []PriceChange      `json:"changes,omitzero"` // a dry run's ([] when none; absent otherwise)
}

// TrackingView is a version's tracking scheme with the next serial it issues and how many are
// left in its range.
type TrackingView struct {
	TrackingScheme
	NextSerial int64 `json:"next_serial"`
	Remaining  int64 `json:"remaining"`
}

// VersionView is one version in a carrier's list of versions.
type VersionView struct {
	Version       int64              `json:"version"`
	EffectiveFrom string             `json:"effective_from"`
	CreatedAt     shipping.Timestamp `json:"created_at"`
}

// View shows c at version v, whose card is whole, beside the version in force today. Serials
// start at the range start in force when the carrier's next serial is below it.
func (c *Stored) View(v *Version, today string) View {
	t := v.Card.Tracking
	next := max(c.NextSerial, t.RangeStart)
	out := View{Card: *v.Card, Version: v.Version, CreatedAt: shipping.Timestamp{Time: c.CreatedAt},
		UpdatedAt: shipping.Timestamp{Time: c.UpdatedAt},
		Tracking:  TrackingView{TrackingScheme: t, NextSerial: next, Remaining: max(0, t.RangeEnd-next+1)}}
	if f := InForce(c.Versions, today); f != nil {
		out.InForceVersion = &f.Version
	}
	for _, o := range c.Versions {
		out.Versions = append(out.Versions, VersionView{o.Version, o.Card.EffectiveFrom, shipping.Timestamp{Time: o.CreatedAt}})
	}
	return out
}

// View shows the stored carrier c at version v (an outline; the one shown today when nil),
// reading that version's whole card alone.
func (r *Registry) View(ctx context.Context, c *Stored, v *Version) (View, error) {
	today := r.today()
	if v == nil {
		v = Shown(c.Versions, today)
	}
	card, err := r.Store.CarrierCard(ctx, c.Code, v.Version)
	if err != nil {
		return View{}, err
	}
	return c.View(&Version{Version: v.Version, CreatedAt: v.CreatedAt, Card: card}, today), nil
}
