package carrier

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/waybill/waybill/shipping"
)

// TestTrackingOf: a new version's tracking range is checked against every version of the other
// carriers, a deleted carrier's too: a version replaced before today issued numbers that labels
// carry (a reviewer stored a carrier whose range reused another's issued numbers).
func TestTrackingOf(t *testing.T) {
	version := func(n int64, from string) *Version {
		return &Version{Version: n, Card: &Card{EffectiveFrom: from}}
	}
	tests := []struct {
		name     string
		carriers []*Stored
		want     []string // carrier:version
	}{
		{"none", nil, nil},
		{"one in force", []*Stored{{Code: "A", Versions: []*Version{version(1, "2026-01-01")}}}, []string{"A:1"}},
		{"replaced before today", []*Stored{{Code: "A", Versions: []*Version{version(1, "2026-01-01"), version(2, "2026-06-01")}}},
			[]string{"A:1", "A:2"}},
		{"in force and to come", []*Stored{{Code: "A", Versions: []*Version{version(1, "2026-01-01"), version(2, "2027-01-01")}}},
			[]string{"A:1", "A:2"}},
		{"deleted still counts", []*Stored{{Code: "D", Deleted: true, Versions: []*Version{version(1, "2026-01-01")}}},
			[]string{"D:1"}},
		{"only to come", []*Stored{{Code: "F", Versions: []*Version{version(1, "2027-03-01")}}}, []string{"F:1"}},
	}
	for _, tt := range tests {
		var got []string
		for _, c := range trackingOf(tt.carriers) {
			got = append(got, c.Carrier+":"+strconv.FormatInt(c.Version, 10))
		}
		if len(got) != len(tt.want) {
			t.Errorf("%s: trackingOf = %v, want %v", tt.name, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("%s: trackingOf = %v, want %v", tt.name, got, tt.want)
				break
			}
		}
	}
}

// TestWithVersion: a dry run shows the carrier as it would be, its next version numbered after
// the last, brought back if deleted, without changing the stored carrier it was made from.
func TestWithVersion(t *testing.T) {
	now := time.Date(2026, 11, 26, 15, 0, 0, 0, time.UTC)
	card := &Card{Code: "A", EffectiveFrom: "2026-12-01"}
	fresh := withVersion(nil, card, now)
	if fresh.Code != "A" || len(fresh.Versions) != 1 || fresh.Versions[0].Version != 1 || !fresh.CreatedAt.Equal(now) {
		t.Errorf("withVersion(nil) = %+v", fresh)
	}
	stored := &Stored{Code: "A", Deleted: true, CreatedAt: now.AddDate(-1, 0, 0),
		Versions: make([]*Version, 2, 4)}
	got := withVersion(stored, card, now)
	if got.Deleted || len(got.Versions) != 3 || got.Versions[2].Version != 3 || got.Versions[2].Card != card || !got.UpdatedAt.Equal(now) {
		t.Errorf("withVersion(deleted, 2 versions) = %+v", got)
	}
	if !stored.Deleted || len(stored.Versions) != 2 || stored.Versions[:3][2] != nil {
		t.Errorf("withVersion changed the stored carrier: %+v", stored)
	}
}

// TestRegistryPutHostName: a card may not take the name of one of the host's Go carriers; the
// store is not asked.
func TestRegistryPutHostName(t *testing.T) {
	card := SampleCards()[0]
	r := &Registry{Store: noStoredCarriers{}, Now: time.Now,
		Host: []shipping.Carrier{NewTable("HOSTED", []*Version{{Version: 1, Card: &card}})}}
	var v *shipping.ValidationError
	if _, err := r.Put(context.Background(), "HOSTED", &card, false); !errors.As(err, &v) || v.Fields[0].Code != "taken" {
		t.Errorf("Put of a host carrier's name = %v; want code taken", err)
	}
	other := SampleCards()[0]
	other.Code = "OTHER"
	if _, err := r.Put(context.Background(), "OTHER", &other, false); errors.As(err, &v) || !errors.Is(err, shipping.ErrNotFound) {
		t.Errorf("Put of another name = %v; want it handed to the store (which answers ErrNotFound here)", err)
	}
}

// noStoredCarriers is a Store without any stored carrier.
type noStoredCarriers struct{}

func (noStoredCarriers) CarrierChanges(context.Context) (int64, error) { return 0, nil }

func (noStoredCarriers) Carriers(context.Context) ([]*Stored, int64, error) {
	return nil, 0, nil
}

func (noStoredCarriers) CarrierCard(context.Context, string, int64) (*Card, error) {
	return nil, shipping.ErrNotFound
}

func (noStoredCarriers) PutCarrierVersion(context.Context, string, func(VersionTx) error) error {
	return shipping.ErrNotFound
}
