package webhook_test

import (
	"fmt"

	"github.com/waybill/waybill/webhook"
)

// A receiver checks a delivery's Standard Webhooks signature with the subscription's secret
// (with or without the whsec_ prefix), the webhook-id and webhook-timestamp headers and the
// exact body bytes. Receivers should also refuse timestamps far from their own clock.
func ExampleVerifyStandard() {
	secret := "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	body := []byte(`{"test": 2432232314}`)
	header := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
	fmt.Println(webhook.VerifyStandard(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body, header))
	fmt.Println(webhook.VerifyStandard(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, []byte(`{"test": 1}`), header))
	// Output:
	// true
	// false
}
