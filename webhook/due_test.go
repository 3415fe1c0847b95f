package webhook

import (
	"context"
	"strings"
	"testing"
	"time"
)

// dueStore answers DueWebhookEvents with its candidates, account after account, as store does.
type dueStore struct {
	Store
	cs []Candidate
}

func (s dueStore) DueWebhookEvents(context.Context, time.Time, []string, []string, int, int) ([]Candidate, error) {
	return s.cs, nil
}

// TestDueRoundRobin: the worker serves the due records round-robin across accounts, whatever
// the order the store lists them in within the accounts' order.
func TestDueRoundRobin(t *testing.T) {
	tests := []struct {
		listed, want string // account+subscription+record: "a1x" is record x of subscription a1
	}{
		{"a1x a1y a2z b1x c1x c1y", "a1x b1x c1x a1y c1y a2z"},
		{"b1x a1x a1y", "b1x a1x a1y"},
		{"", ""},
	}
	for _, tt := range tests {
		var cs []Candidate
		for _, f := range strings.Fields(tt.listed) {
			cs = append(cs, Candidate{AccountID: f[:1], SubscriptionID: f[:2], ID: f})
		}
		w := &Worker{Store: dueStore{cs: cs}}
		got, err := w.due(context.Background(), time.Now(), nil, nil, 8, 32)
		var ids []string
		for _, c := range got {
			ids = append(ids, c.ID)
		}
		if s := strings.Join(ids, " "); err != nil || s != tt.want {
			t.Errorf("due(%q) = %q, %v; want %q", tt.listed, s, err, tt.want)
		}
	}
}
