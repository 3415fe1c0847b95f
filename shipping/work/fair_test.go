package work

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// units reads "a1 a1 b2" as units of account a key a1, account a key a1, account b key b2.
func units(s string) []Unit {
	var us []Unit
	for _, f := range strings.Fields(s) {
		us = append(us, Unit{Account: f[:1], Key: f})
	}
	return us
}

func TestSlotsPick(t *testing.T) {
	tests := []struct {
		name                    string
		max, perAccount, perKey int
		inFlight, offered       string
		want                    []int
	}{
		{"all fit", 4, 4, 0, "", "a1 b1 c1", []int{0, 1, 2}},
		{"bounded in all", 2, 4, 0, "", "a1 b1 c1", []int{0, 1}},
		{"in flight count in all", 3, 4, 0, "x1 x1", "a1 b1 c1", []int{0}},
		{"none free", 2, 4, 0, "x1 x1", "a1", nil},
		{"account's share", 8, 2, 0, "", "a1 a2 a3 b1", []int{0, 1, 3}},
		{"account's work in flight counts", 8, 2, 0, "a9", "a1 a2 b1 b2", []int{0, 2, 3}},
		{"key's share", 8, 8, 1, "", "a1 a1 a2 b1", []int{0, 2, 3}},
		{"key's work in flight counts", 8, 8, 2, "a1", "a1 a1 a2", []int{0, 2}},
		{"no key bound", 8, 8, 0, "a1", "a1 a1 a1", []int{0, 1, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Slots{Max: tt.max, PerAccount: tt.perAccount, PerKey: tt.perKey}
			for _, u := range units(tt.inFlight) {
				s.Hold(u)
			}
			if got := s.Pick(units(tt.offered)); !slices.Equal(got, tt.want) {
				t.Errorf("Pick(%q) with %q in flight = %v; want %v", tt.offered, tt.inFlight, got, tt.want)
			}
		})
	}
}

func TestSlotsHoldRelease(t *testing.T) {
	s := &Slots{Max: 3, PerAccount: 2, PerKey: 1}
	a1, a2, b1 := Unit{"a", "a1"}, Unit{"a", "a2"}, Unit{"b", "b1"}
	s.Hold(a1)
	s.Hold(a2)
	s.Hold(b1)
	accounts, keys := s.Full()
	slices.Sort(keys)
	if got := s.Free(); got != 0 {
		t.Errorf("Free() = %d; want 0", got)
	}
	if !slices.Equal(accounts, []string{"a"}) || !slices.Equal(keys, []string{"a1", "a2", "b1"}) {
		t.Errorf("Full() = %v, %v; want [a], [a1 a2 b1]", accounts, keys)
	}
	s.Release(a1)
	s.Release(b1)
	accounts, keys = s.Full()
	if got := s.Free(); got != 2 {
		t.Errorf("after releases Free() = %d; want 2", got)
	}
	if len(accounts) != 0 || !slices.Equal(keys, []string{"a2"}) {
		t.Errorf("after releases Full() = %v, %v; want [], [a2]", accounts, keys)
	}
}

func TestRoundRobin(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"", ""},
		{"a1", "a1"},
		{"a1 a2 a3 b1 b2 c1", "a1 b1 c1 a2 b2 a3"},
		{"b1 a1 b2 a2", "b1 a1 b2 a2"},
		{"c1 c2 c3 a1", "c1 a1 c2 c3"},
	}
	for _, tt := range tests {
		got := RoundRobin(strings.Fields(tt.in), func(s string) string { return s[:1] })
		if s := strings.Join(got, " "); s != tt.want {
			t.Errorf("RoundRobin(%q) = %q; want %q", tt.in, s, tt.want)
		}
	}
}

func ExampleRoundRobin() {
	// Account a's backlog waits behind b's and c's first items.
	fmt.Println(RoundRobin([]string{"a1", "a2", "a3", "b1", "c1"}, func(s string) string { return s[:1] }))
	// Output: [a1 b1 c1 a2 a3]
}

func TestSlotsRoom(t *testing.T) {
	s := &Slots{Max: 6}
	for _, u := range units("a1 a1 b1") {
		s.Hold(u)
	}
	for _, tt := range []struct {
		account     string
		share, want int
	}{
		{"a", 3, 1},  // its share, less its two in flight
		{"a", 2, 0},  // its share used
		{"b", 4, 3},  // bounded by the free slots
		{"c", 2, 2},  // nothing in flight
		{"a", 1, -1}, // over its share: nothing fits
	} {
		if got := s.Room(tt.account, tt.share); got != tt.want {
			t.Errorf("Room(%s, %d) = %d; want %d", tt.account, tt.share, got, tt.want)
		}
	}
}

func TestShare(t *testing.T) {
	for _, tt := range []struct{ n, accounts, want int }{
		{32, 1, 32}, {32, 2, 16}, {10, 3, 4}, {8, 3, 3}, {8, 8, 1}, {8, 20, 1}, {8, 0, 8},
	} {
		if got := Share(tt.n, tt.accounts); got != tt.want {
			t.Errorf("Share(%d, %d) = %d; want %d", tt.n, tt.accounts, got, tt.want)
		}
	}
}
