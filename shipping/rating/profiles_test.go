package rating

import (
	"context"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
	"github.com/waybill/waybill/shipping/carrier"
)

// profileStore is a ProfileStore of one profile per key that counts its reads; its hook, when
// set, runs inside Profile before the read answers.
type profileStore struct {
	profiles map[string]*Profile
	reads    int
	hook     func()
}

func (s *profileStore) Profile(ctx context.Context, key string) (*Profile, error) {
	s.reads++
	p := s.profiles[key]
	if s.hook != nil {
		h := s.hook
		s.hook = nil
		h()
	}
	if p == nil {
		return nil, shipping.ErrNotFound
	}
	return p, nil
}

func (s *profileStore) ProfileVersion(ctx context.Context, key string) (time.Time, error) {
	if p := s.profiles[key]; p != nil {
		return p.UpdatedAt.Time, nil
	}
	return time.Time{}, shipping.ErrNotFound
}

func (s *profileStore) PutProfile(ctx context.Context, p *Profile, coverageEvent func(*ProfileInput) *shipping.Event) (bool, error) {
	created := s.profiles[p.Key] == nil
	s.profiles[p.Key] = p
	return created, nil
}

// noStoredCarriers is a carrier.Store without any stored carrier.
type noStoredCarriers struct{}

func (noStoredCarriers) CarrierChanges(context.Context) (int64, error) { return 0, nil }
func (noStoredCarriers) Carriers(context.Context) ([]*carrier.Stored, int64, error) {
	return nil, 0, nil
}
func (noStoredCarriers) CarrierCard(context.Context, string, int64) (*carrier.Card, error) {
	return nil, shipping.ErrNotFound
}
func (noStoredCarriers) PutCarrierVersion(context.Context, string, func(carrier.VersionTx) error) error {
	return shipping.ErrNotFound
}

// TestProfiles: the cache of compiled profiles is never stale through its own process (a Put
// drops the copy at once, and a read that began before the Put does not cache what it read) and
// sees a replacement through another process within profileRecheck; a profile naming an unknown
// carrier is refused and nothing is stored.
func TestProfiles(t *testing.T) {
	ctx := context.Background()
	card := carrier.SampleCards()[0]
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { now = now.Add(time.Second); return now }
	store := &profileStore{profiles: map[string]*Profile{}}
	ps := &Profiles{Store: store, Now: clock, Carriers: &carrier.Registry{Store: noStoredCarriers{}, Now: clock,
		Host: []shipping.Carrier{carrier.NewTable(card.Code, []*carrier.Version{{Version: 1, Card: &card}})}}}
	named := func(name string) ProfileInput { return ProfileInput{Name: name, Carriers: []string{card.Code}} }
	get := func(want string) {
		t.Helper()
		p, err := ps.Get(ctx, "k")
		if err != nil || p.Name != want {
			t.Fatalf("Get = %v, %v; want the profile named %q", p, err, want)
		}
	}

	if _, err := ps.Get(ctx, "k"); err != shipping.ErrNotFound {
		t.Fatalf("Get of no profile = %v, want ErrNotFound", err)
	}
	if _, created, err := ps.Put(ctx, "k", named("first")); err != nil || !created {
		t.Fatalf("Put = %v, %v; want created", created, err)
	}
	get("first")
	reads := store.reads
	get("first")
	if store.reads != reads {
		t.Errorf("a second Get within profileRecheck read the store again")
	}

	// Through this process: seen at once.
	if _, created, err := ps.Put(ctx, "k", named("second")); err != nil || created {
		t.Fatalf("Put = %v, %v; want replaced", created, err)
	}
	get("second")

	// A read that began before a Put must not cache the profile it read.
	ps.mu.Lock()
	delete(ps.cached, "k")
	ps.mu.Unlock()
	store.hook = func() {
		if _, _, err := ps.Put(ctx, "k", named("third")); err != nil {
			t.Fatal(err)
		}
	}
	if p, err := ps.Get(ctx, "k"); err != nil || p.Name != "second" {
		t.Fatalf("the racing Get = %v, %v; want what it read, second", p, err)
	}
	get("third")

	// Through another process (the store alone): seen once profileRecheck has passed.
	other, err := NewProfile("k", named("fourth"), []string{card.Code}, clock())
	if err != nil {
		t.Fatal(err)
	}
	store.profiles["k"] = other
	ps.mu.Lock()
	c := ps.cached["k"]
	c.checked = c.checked.Add(-profileRecheck)
	ps.cached["k"] = c
	ps.mu.Unlock()
	get("fourth")

	// Refused: nothing stored, the cached copy kept.
	if _, _, err := ps.Put(ctx, "k", ProfileInput{Name: "x", Carriers: []string{"NOPE"}}); err == nil {
		t.Fatal("a profile naming an unknown carrier was accepted")
	}
	get("fourth")
}

// TestCoverageChanged: a new profile's coverage is news; a replacement's is when any carrier's
// ranges differ, or a carrier is added or dropped; the rest of a profile does not count.
func TestCoverageChanged(t *testing.T) {
	cover := map[string][]string{"POSTLINE": {"000-499"}}
	tests := []struct {
		name string
		prev *ProfileInput
		next map[string][]string
		want bool
	}{
		{"new profile", nil, cover, true},
		{"same coverage, another name", &ProfileInput{Name: "old", ZipCoverage: map[string][]string{"POSTLINE": {"000-499"}}}, cover, false},
		{"ranges changed", &ProfileInput{ZipCoverage: map[string][]string{"POSTLINE": {"000-999"}}}, cover, true},
		{"carrier added", &ProfileInput{ZipCoverage: map[string][]string{}}, cover, true},
		{"carrier dropped", &ProfileInput{ZipCoverage: map[string][]string{"POSTLINE": {"000-499"}, "PARCELCO": {"100-199"}}}, cover, true},
		{"none before or after", &ProfileInput{}, nil, false},
	}
	for _, tt := range tests {
		p := LoadProfile("k", ProfileInput{Name: "new", Carriers: []string{"POSTLINE"}, ZipCoverage: tt.next}, time.Time{})
		if got := p.CoverageChanged(tt.prev); got != tt.want {
			t.Errorf("%s: CoverageChanged = %v, want %v", tt.name, got, tt.want)
		}
	}
}
