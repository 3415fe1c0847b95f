package metrics

import (
	"bufio"
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/waybill/waybill/store"
)

func TestLabelEscaping(t *testing.T) {
	m := New()
	m.Delivery("a\"b\\c\nd", false)
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	m.WriteTo(w, store.QueueStats{}, time.Time{})
	w.Flush()
	if want := `waybill_webhook_delivery_attempts_total{topic="a\"b\\c\nd"} 1`; !strings.Contains(b.String(), want+"\n") {
		t.Errorf("output lacks %s:\n%s", want, b.String())
	}
}
