package rating

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/carrier"
	"github.com/waybill/waybill/webhook"
)

// ProfileStore is what Profiles reads and writes.
type ProfileStore interface {
	// Profile reads the profile with the key; shipping.ErrNotFound when there is none.
	Profile(ctx context.Context, key string) (*Profile, error)
	// ProfileVersion is when the profile last changed; shipping.ErrNotFound when there is none.
	ProfileVersion(ctx context.Context, key string) (time.Time, error)
	// PutProfile stores p, replacing the profile with its key (created when there was none),
	// and in the same transaction emits ZIP_COVERAGE_UPDATED when coverageChanged says p's
	// zip_coverage differs from the replaced profile's (nil when there was none).
	PutProfile(ctx context.Context, p *Profile, coverageEvent func(prev *ProfileInput) *shipping.Event) (created bool, err error)
}

// profileRecheck is how long a cached profile is used without checking its stored version: a
// profile replaced through this process is dropped at once (Put), one replaced through another
// process sharing the database is seen within this.
const profileRecheck = time.Second

// Profiles owns the compiled rate shopping profiles: it is their only cache, checked against
// the stored version at most once every profileRecheck.
type Profiles struct {
	Store    ProfileStore
	Carriers *carrier.Registry // the carriers a profile may name
	Now      func() time.Time

	mu     sync.Mutex
	cached map[string]cachedProfile
	// gen counts replacements made through this process: a read that began before one is not
	// cached, so it cannot bring the replaced profile back.
	gen uint64
}

// cachedProfile is a compiled profile and when its stored version was last checked.
type cachedProfile struct {
	p       *Profile
	checked time.Time
}

// Get returns the compiled profile with the key, reusing the cached copy while the stored one
// is unchanged; shipping.ErrNotFound when there is none.
func (ps *Profiles) Get(ctx context.Context, key string) (*Profile, error) {
	ps.mu.Lock()
	c, gen := ps.cached[key], ps.gen
	ps.mu.Unlock()
	if c.p != nil && time.Since(c.checked) < profileRecheck {
		return c.p, nil
	}
	checked := time.Now()
	version, err := ps.Store.ProfileVersion(ctx, key)
	if err != nil {
		return nil, err
	}
	if c.p == nil || !c.p.UpdatedAt.Equal(version) {
		if c.p, err = ps.Store.Profile(ctx, key); err != nil {
			return nil, err
		}
	}
	ps.mu.Lock()
	if cur := ps.cached[key]; gen == ps.gen && !cur.checked.After(checked) {
		if ps.cached == nil {
			ps.cached = map[string]cachedProfile{}
		}
		ps.cached[key] = cachedProfile{c.p, checked}
	}
	ps.mu.Unlock()
	return c.p, nil
}

// CoverageChanged reports whether p changes the zip_coverage of the profile it replaces, prev
// (nil: a new profile, whose coverage is news).
func (p *Profile) CoverageChanged(prev *ProfileInput) bool {
	return prev == nil || !SameCoverage(prev.ZipCoverage, p.Input().ZipCoverage)
}

// CoverageEvent is the ZIP_COVERAGE_UPDATED event storing p causes, as stored (its UpdatedAt
// set), over prev (nil: none replaced); nil when its coverage did not change.
func (p *Profile) CoverageEvent(prev *ProfileInput) *shipping.Event {
	if !p.CoverageChanged(prev) {
		return nil
	}
	return &shipping.Event{Topic: webhook.TopicZIPCoverageUpdated, Payload: struct {
		ProfileKey  string              `json:"profile_key"`
		UpdatedAt   shipping.Timestamp  `json:"updated_at"`
		ZipCoverage map[string][]string `json:"zip_coverage"`
	}{p.Key, p.UpdatedAt, p.ZipCoverage}}
}

// Put validates the profile in against the carriers as they are now (a carrier just stored
// through another process included) and stores it under key, replacing any; created when there
// was none.
func (ps *Profiles) Put(ctx context.Context, key string, in ProfileInput) (*Profile, bool, error) {
	ps.Carriers.Refresh()
	carriers, err := ps.Carriers.Current(ctx)
	if err != nil {
		return nil, false, err
	}
	p, err := NewProfile(key, in, carriers.Names, ps.Now())
	if err != nil {
		return nil, false, err
	}
	created, err := ps.Store.PutProfile(ctx, p, p.CoverageEvent)
	if err != nil {
		return nil, false, err
	}
	ps.mu.Lock()
	delete(ps.cached, p.Key)
	ps.gen++
	ps.mu.Unlock()
	return p, created, nil
}

// Shop quotes sr under the profile named key with the carriers as they are now (it is the
// shipping.RateShopper a shipment's creation quotes through). No profile of that name is a rate
// error, unknown_rate_shopping_profile.
func (ps *Profiles) Shop(ctx context.Context, key string, sr *shipping.ShipmentRequest, shipDate time.Time) ([]shipping.Rate, []shipping.Reason, error) {
	p, err := ps.Get(ctx, key)
	if errors.Is(err, shipping.ErrNotFound) {
		return nil, nil, &shipping.RateError{Code: shipping.CodeUnknownProfile, Message: "no rate shopping profile " + key}
	}
	if err != nil {
		return nil, nil, err
	}
	carriers, err := ps.Carriers.Current(ctx)
	if err != nil {
		return nil, nil, err
	}
	shopper := Shopper{carriers: carriers.Quotable}
	return shopper.Shop(ctx, p, sr, shipDate)
}
