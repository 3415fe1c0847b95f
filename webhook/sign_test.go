package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"strings"
	"testing"
	"time"
)

var _ = flag.Bool("update", false, "rewrite golden files (used by httpapi)")

// The Standard Webhooks specification's own test vector, as its libraries' tests use it.
const (
	vectorSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vectorID        = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vectorTimestamp = 1614265330
	vectorBody      = `{"test": 2432232314}`
	vectorSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestStandardSignatureVector(t *testing.T) {
	for _, secret := range []string{vectorSecret, vectorSecret[len("whsec_"):]} {
		got, err := StandardSignature(secret, vectorID, vectorTimestamp, []byte(vectorBody))
		if err != nil || got != vectorSignature {
			t.Errorf("StandardSignature(%q, …) = %q, %v; want %q", secret, got, err, vectorSignature)
		}
	}
}

func TestVerifyStandard(t *testing.T) {
	tests := []struct {
		name, secret, id string
		ts               int64
		body, header     string
		want             bool
	}{
		{"vector", vectorSecret, vectorID, vectorTimestamp, vectorBody, vectorSignature, true},
		{"one of several", vectorSecret, vectorID, vectorTimestamp, vectorBody, "v1,bm90IGl0 " + vectorSignature, true},
		{"body changed", vectorSecret, vectorID, vectorTimestamp, `{"test": 2432232315}`, vectorSignature, false},
		{"id changed", vectorSecret, "msg_other", vectorTimestamp, vectorBody, vectorSignature, false},
		{"timestamp changed", vectorSecret, vectorID, vectorTimestamp + 1, vectorBody, vectorSignature, false},
		{"other secret", "whsec_c2VjcmV0LW9mLWFub3RoZXItZW5kcG9pbnQ=", vectorID, vectorTimestamp, vectorBody, vectorSignature, false},
		{"secret not base64", "whsec_!!", vectorID, vectorTimestamp, vectorBody, vectorSignature, false},
		{"empty header", vectorSecret, vectorID, vectorTimestamp, vectorBody, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := VerifyStandard(tt.secret, tt.id, tt.ts, []byte(tt.body), tt.header); got != tt.want {
				t.Errorf("VerifyStandard(%q) = %v; want %v", tt.header, got, tt.want)
			}
		})
	}
}

func TestSignature(t *testing.T) {
	// The compat signature is keyed with the secret text itself, not its decoded bytes.
	secret := "c2VjcmV0LXRleHQtYXMtc2hvd24tdG8tdGhlLXVzZXI="
	body := []byte(`{"id":"e1"}`)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	want := hex.EncodeToString(mac.Sum(nil))
	if got := Signature(secret, body); got != want {
		t.Errorf("Signature(%q, %q) = %q; want %q", secret, body, got, want)
	}
	if got := Signature(secret, []byte(`{"id":"e2"}`)); got == want {
		t.Errorf("Signature of a different body = %q; want a different signature", got)
	}
}

func TestBody(t *testing.T) {
	e := Event{ID: "e1", SubscriptionID: "s1", Topic: TopicLabelVoided, Status: StatusPending,
		HappenedAt: time.Date(2026, 11, 22, 3, 42, 3, 0, time.UTC), Payload: []byte(`{"tracking_code":"T1"}`)}
	want := `{"id":"e1","topic":"LABEL_VOIDED","webhook_subscription_id":"s1","happened_at":"2026-11-22T03:42:03.000000Z","status":"PENDING","payload":{"tracking_code":"T1"}}`
	if got := string(Body(e)); got != want {
		t.Errorf("Body() = %s; want %s", got, want)
	}
	// The body is what is signed: both signatures of it verify, and not of the body without status.
	secret := "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	sig, err := StandardSignature(secret, e.ID, vectorTimestamp, Body(e))
	if err != nil || !VerifyStandard("whsec_"+secret, e.ID, vectorTimestamp, []byte(want), sig) {
		t.Errorf("the signature of Body() does not verify: %v", err)
	}
	without := `{"id":"e1","topic":"LABEL_VOIDED","webhook_subscription_id":"s1","happened_at":"2026-11-22T03:42:03.000000Z","payload":{"tracking_code":"T1"}}`
	if VerifyStandard("whsec_"+secret, e.ID, vectorTimestamp, []byte(without), sig) {
		t.Errorf("the signature of Body() verifies a body without status")
	}
}

func FuzzVerifyStandard(f *testing.F) {
	f.Add(vectorID, int64(vectorTimestamp), vectorBody, vectorSignature)
	f.Fuzz(func(t *testing.T, id string, ts int64, body, header string) {
		ok := VerifyStandard(vectorSecret, id, ts, []byte(body), header)
		sig, _ := StandardSignature(vectorSecret, id, ts, []byte(body))
		if ok && !hmac.Equal([]byte(sig), []byte(header)) && !containsField(header, sig) {
			t.Errorf("VerifyStandard accepted %q without the right signature", header)
		}
		if !VerifyStandard(vectorSecret, id, ts, []byte(body), sig) {
			t.Errorf("VerifyStandard rejected its own signature %q", sig)
		}
	})
}

func containsField(header, sig string) bool {
	for _, f := range strings.Fields(header) {
		if f == sig {
			return true
		}
	}
	return false
}
