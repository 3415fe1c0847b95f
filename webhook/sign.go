package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
)

// Signature is the compat X-Webhook-Signature: hex HMAC-SHA256 of the exact body, keyed with
// the secret string as shown (its base64 text, not decoded) — the order import's scheme.
func Signature(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return hex.EncodeToString(mac.Sum(nil))
}

// StandardSignature is the Standard Webhooks webhook-signature value "v1,<base64 HMAC>", keyed
// with the base64-decoded secret (an optional "whsec_" prefix is ignored) over
// msgID + "." + timestamp + "." + body.
func StandardSignature(secret, msgID string, timestamp int64, body []byte) (string, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return "", errors.New("webhook secret is not base64")
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(msgID + "." + strconv.FormatInt(timestamp, 10) + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// VerifyStandard reports whether header (a space-separated list of "v1,<sig>" entries, as
// the webhook-signature header carries) holds a valid signature of the message. It is what a
// receiver runs; waybill uses it in tests and documents it for Go receivers.
func VerifyStandard(secret, msgID string, timestamp int64, body []byte, header string) bool {
	want, err := StandardSignature(secret, msgID, timestamp, body)
	if err != nil {
		return false
	}
	for _, sig := range strings.Fields(header) {
		if hmac.Equal([]byte(sig), []byte(want)) {
			return true
		}
	}
	return false
}
