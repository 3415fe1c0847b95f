package webhook

import (
	"context"
	"errors"
	"testing"
)

func TestChangeApply(t *testing.T) {
	str := func(s string) *string { return &s }
	yes, no := true, false
	tests := []struct {
		name       string
		active     bool
		change     Change
		wantURL    string
		wantActive bool
		wantTarget *string // the pending records' new URL; nil: unchanged
		wantDue    bool
	}{
		{"nothing", true, Change{}, "https://old/", true, nil, true},
		{"nothing, inactive", false, Change{}, "https://old/", false, nil, false},
		{"new URL retargets the pending records", true, Change{URL: str("https://new/")}, "https://new/", true, str("https://new/"), true},
		{"same URL still retargets", true, Change{URL: str("https://old/")}, "https://old/", true, str("https://old/"), true},
		{"deactivating parks", true, Change{Active: &no}, "https://old/", false, nil, false},
		{"reactivating makes them due", false, Change{Active: &yes}, "https://old/", true, nil, true},
		{"new URL while inactive stays parked", false, Change{URL: str("https://new/")}, "https://new/", false, str("https://new/"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, r := tt.change.Apply(Subscription{ID: "s1", URL: "https://old/", IsActive: tt.active})
			if s.ID != "s1" || s.URL != tt.wantURL || s.IsActive != tt.wantActive {
				t.Errorf("Apply = %+v; want url %q, active %v", s, tt.wantURL, tt.wantActive)
			}
			if (r.URL == nil) != (tt.wantTarget == nil) || r.URL != nil && *r.URL != *tt.wantTarget {
				t.Errorf("Apply retarget URL = %v; want %v", r.URL, tt.wantTarget)
			}
			if r.Due != tt.wantDue {
				t.Errorf("Apply retarget Due = %v; want %v", r.Due, tt.wantDue)
			}
		})
	}
}

// allowStore stands for the store: it asks allow about a subscription that is active or not.
type allowStore struct {
	Subscriptions
	active bool
}

func (s allowStore) RedeliverWebhookEvent(_ context.Context, _, _, eventID string, allow func(Subscription) error) (Event, error) {
	return Event{ID: eventID}, allow(Subscription{IsActive: s.active})
}

func TestRedeliver(t *testing.T) {
	tests := []struct {
		active bool
		want   error
	}{
		{true, nil},
		{false, ErrInactive},
	}
	for _, tt := range tests {
		_, err := Redeliver(context.Background(), allowStore{active: tt.active}, "a", "s", "e")
		if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
			t.Errorf("Redeliver(active %v) = %v; want %v", tt.active, err, tt.want)
		}
	}
}
