package httpapi

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/waybill/waybill/webhook"
)

// TestWebhookStandardLibraryVerifies captures real deliveries from the worker and has the
// official Standard Webhooks JavaScript library (npm standardwebhooks, installed by .ci/run
// into testdata/webhook_verify/node_modules) verify them with whsec_<secret>.
func TestWebhookStandardLibraryVerifies(t *testing.T) {
	dir := filepath.Join("..", "testdata", "webhook_verify")
	node, err := exec.LookPath("node")
	_, modErr := os.Stat(filepath.Join(dir, "node_modules", "standardwebhooks"))
	if err != nil || modErr != nil {
		msg := "node or testdata/webhook_verify/node_modules/standardwebhooks missing (run npm ci there)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}

	e := newEnv(t)
	// The library checks webhook-timestamp against its own clock: deliver at the real time.
	e.setClock(time.Now())
	rc := newReceiver(t, nil)
	sub := e.subscribe("all", rc.URL, webhook.TopicLabelTrackingUpdated)
	for i, status := range []string{"IN_TRANSIT", "OUT_FOR_DELIVERY", "DELIVERED"} {
		e.emit("acme", webhook.TopicLabelTrackingUpdated, map[string]any{"tracking_code": "WB1", "status": status, "n": i, "note": "ünïcødé ✓"})
	}
	e.drain()
	got := rc.deliveries()
	if len(got) != 3 {
		t.Fatalf("receiver got %d deliveries; want 3", len(got))
	}
	type captured struct {
		Headers map[string]string `json:"headers"`
		Body    string            `json:"body"`
	}
	in := struct {
		Secret     string     `json:"secret"`
		Deliveries []captured `json:"deliveries"`
	}{Secret: sub.Secret}
	for _, d := range got {
		h := map[string]string{}
		for _, k := range []string{"webhook-id", "webhook-timestamp", "webhook-signature"} {
			h[k] = d.Header.Get(k)
		}
		in.Deliveries = append(in.Deliveries, captured{h, string(d.Body)})
	}
	file := filepath.Join(t.TempDir(), "deliveries.json")
	b, _ := json.Marshal(in)
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(node, filepath.Join(dir, "verify.mjs"), file).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "verified 3 deliveries") {
		t.Fatalf("node verify.mjs: %v\n%s", err, out)
	}
}
