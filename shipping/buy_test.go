package shipping

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"time"
)

func TestValidTrackingCode(t *testing.T) {
	for _, tt := range []struct {
		code string
		want bool
	}{
		{"1Z999AA10123456784", true},
		{"PL00000000000000018", true},
		{"AB-1234", true},
		{"ABC", false},                    // too short
		{string(make([]byte, 65)), false}, // too long
		{"AB 1234", false},                // a space
		{"AB/1234", false},                // a slash would break the URL
		{"ÄB1234", false},                 // not ASCII
		{"AB1234\n", false},               // a control character
	} {
		if got := ValidTrackingCode(tt.code); got != tt.want {
			t.Errorf("ValidTrackingCode(%q) = %v; want %v", tt.code, got, tt.want)
		}
	}
}

func TestVoidRetryAfter(t *testing.T) {
	for _, tt := range []struct {
		attempts int
		want     time.Duration
	}{
		{1, time.Minute}, {2, 2 * time.Minute}, {3, 4 * time.Minute}, {6, 32 * time.Minute},
		{7, time.Hour}, {50, time.Hour},
	} {
		if got := VoidRetryAfter(tt.attempts); got != tt.want {
			t.Errorf("VoidRetryAfter(%d) = %v; want %v", tt.attempts, got, tt.want)
		}
	}
}

func TestVoidLease(t *testing.T) {
	for _, tt := range []struct {
		timeout, want time.Duration
	}{
		{0, 70 * time.Second}, // the default deadline, 30 s
		{time.Second, 12 * time.Second},
	} {
		if got := (&Buyer{Timeout: tt.timeout}).VoidLease(); got != tt.want {
			t.Errorf("VoidLease with timeout %v = %v; want %v", tt.timeout, got, tt.want)
		}
	}
}

// TestBuyRequestKeyed: the fingerprint names what a buy asks for, so a key reused for another
// shipment, rate, insurance or inlining is told apart; a buy without insurance keeps the
// fingerprint keys recorded before insurance existed (pinned); no key, no fingerprint.
func TestBuyRequestKeyed(t *testing.T) {
	base := BuyRequest{AccountID: "a", ShipmentID: "shp_1", RateID: "rate_1"}
	plain := base.Keyed("k", false)
	if plain.Key != "k" || plain.AccountID != "a" {
		t.Fatalf("Keyed = %+v", plain)
	}
	sum := sha256.Sum256([]byte("buy\x00shp_1\x00rate_1\x00false"))
	if plain.Fingerprint != hex.EncodeToString(sum[:]) {
		t.Errorf("fingerprint without insurance = %s, not the one keys recorded before insurance have", plain.Fingerprint)
	}
	other := func(f func(*BuyRequest)) BuyRequest { r := base; f(&r); return r }
	differ := map[string]BuyRequest{
		"another shipment":  other(func(r *BuyRequest) { r.ShipmentID = "shp_2" }).Keyed("k", false),
		"another rate":      other(func(r *BuyRequest) { r.RateID = "rate_2" }).Keyed("k", false),
		"insured":           other(func(r *BuyRequest) { r.InsuredCents = 10000 }).Keyed("k", false),
		"inlined":           base.Keyed("k", true),
		"insured otherwise": other(func(r *BuyRequest) { r.InsuredCents = 20000 }).Keyed("k", false),
	}
	seen := map[string]string{plain.Fingerprint: "plain"}
	for name, r := range differ {
		if prev, ok := seen[r.Fingerprint]; ok {
			t.Errorf("%s has the fingerprint of %s", name, prev)
		}
		seen[r.Fingerprint] = name
	}
	if r := base.Keyed("", true); r.Key != "" || r.Fingerprint != "" {
		t.Errorf("Keyed without a key = %+v, want no key and no fingerprint", r)
	}
}

func TestValidIdempotencyKey(t *testing.T) {
	for _, tt := range []struct {
		key  string
		want bool
	}{
		{"", false}, {"a", true}, {strings.Repeat("k", 255), true}, {strings.Repeat("k", 256), false},
		{"order-1 retry #2", true}, {"tab\there", false}, {"del\x7f", false}, {"caf\u00e9", false}, {"~ !", true},
	} {
		if got := ValidIdempotencyKey(tt.key); got != tt.want {
			t.Errorf("ValidIdempotencyKey(%q) = %v, want %v", tt.key, got, tt.want)
		}
	}
}
