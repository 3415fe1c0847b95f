// Package ingest is waybill's signed order import: it verifies the sender's signature, commits
// the raw payload to a durable inbox before answering, and processes the inbox asynchronously
// into normalized orders.
package ingest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
)

// The order import request headers.
const (
	OrganizationHeader = "X-Service-Organization-Id"
	SignatureHeader    = "X-CustomOrderSource-Signature"
)

// Sign returns the hex HMAC-SHA256 of body keyed with the ingest secret string as displayed:
// its base64 text is the key, not the bytes it encodes.
func Sign(secret string, body []byte) string {
	return hex.EncodeToString(mac(secret, body))
}

// Verify reports whether signature is body's signature under secret. The comparison takes
// the same time wherever the signatures differ.
func Verify(secret string, body []byte, signature string) bool {
	got, err := hex.DecodeString(signature)
	want := mac(secret, body)
	if err != nil || len(got) != len(want) {
		return false
	}
	return hmac.Equal(got, want)
}

func mac(secret string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return m.Sum(nil)
}
