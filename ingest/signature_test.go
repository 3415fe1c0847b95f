package ingest

import (
	"flag"
	"strings"
	"testing"
)

var _ = flag.Bool("update", false, "rewrite golden files (used by httpapi)")

// Known answers computed independently with OpenSSL:
//
//	printf '%s' "$BODY" | openssl dgst -sha256 -hmac "$SECRET"
const (
	katSecret = "c2VjcmV0LWtleS1vZi0zMi1ieXRlcy1leGFjdGx5IQ=="
	katBody   = `{"id":"gid://shopify/Order/1001","fulfillmentOrders":[]}`
	katSig    = "07f7b1b1cc3542bcaf7043ab5ca46b5afc42a634c7efc7f79b89a8ee64994f5c"
	katEmpty  = "70d4cc438d7bac7375df00f1aaef66dc1c5f5ef432c74c78372f068acc0013bd"
	// The same body keyed with the bytes the secret's base64 encodes (… -macopt hexkey:…): the
	// wrong reading of the key, which must not verify.
	katDecodedKeySig = "eda2c5841c47bba0abb9708edd0140c4db399cdab01d655987e180f1106e2053"
)

func TestSignKnownAnswer(t *testing.T) {
	tests := []struct{ body, want string }{
		{katBody, katSig},
		{"", katEmpty},
	}
	for _, tt := range tests {
		if got := Sign(katSecret, []byte(tt.body)); got != tt.want {
			t.Errorf("Sign(%q, %q) = %s; want %s", katSecret, tt.body, got, tt.want)
		}
	}
}

func TestVerify(t *testing.T) {
	tests := []struct {
		name, secret, body, sig string
		want                    bool
	}{
		{"known answer", katSecret, katBody, katSig, true},
		{"upper-case hex", katSecret, katBody, strings.ToUpper(katSig), true},
		{"key decoded from base64", katSecret, katBody, katDecodedKeySig, false},
		{"one more space in the body", katSecret, katBody + " ", katSig, false},
		{"fields reordered", katSecret, `{"fulfillmentOrders":[],"id":"gid://shopify/Order/1001"}`, katSig, false},
		{"other secret", "c2VjcmV0", katBody, katSig, false},
		{"empty signature", katSecret, katBody, "", false},
		{"truncated signature", katSecret, katBody, katSig[:62], false},
		{"extended signature", katSecret, katBody, katSig + "00", false},
		{"not hex", katSecret, katBody, strings.Repeat("zz", 32), false},
		{"sha256= prefix", katSecret, katBody, "sha256=" + katSig, false},
		{"empty secret", "", katBody, Sign("", []byte(katBody)), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Verify(tt.secret, []byte(tt.body), tt.sig); got != tt.want {
				t.Errorf("Verify(%q, %q, %q) = %v; want %v", tt.secret, tt.body, tt.sig, got, tt.want)
			}
		})
	}
}

// FuzzVerify: only the signature Sign makes verifies, and Verify never panics.
func FuzzVerify(f *testing.F) {
	f.Add(katSecret, []byte(katBody), katSig)
	f.Add("", []byte{}, "")
	f.Add("k", []byte("\xff\x00"), "zz")
	f.Fuzz(func(t *testing.T, secret string, body []byte, sig string) {
		good := Sign(secret, body)
		if !Verify(secret, body, good) {
			t.Fatalf("Verify(%q, %q, Sign(…)) = false", secret, body)
		}
		if Verify(secret, body, sig) && !strings.EqualFold(sig, good) {
			t.Fatalf("Verify(%q, %q, %q) = true for a signature other than %s", secret, body, sig, good)
		}
	})
}
