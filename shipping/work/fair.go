package work

import "sync"

// Unit is what one piece of work counts against: its account, and a narrower key within the
// account ("" for none; a webhook subscription).
type Unit struct {
	Account string
	Key     string
}

// Slots is the fair-share rule: work in flight is bounded in all (Max), for any one account
// (PerAccount) and for any one key (PerKey; zero: no bound), so that one account's backlog or
// hanging calls hold at most its share of the slots and the rest stay free for the others.
// Offered work is taken in the order given, which RoundRobin makes fair between accounts.
// Its methods may be called from several goroutines.
type Slots struct {
	Max, PerAccount, PerKey int

	mu       sync.Mutex
	total    int
	accounts map[string]int
	keys     map[string]int
}

// Free is how many more units fit in all.
func (s *Slots) Free() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.Max - s.total
}

// Full lists the accounts and keys at their bound: work of theirs need not be offered.
func (s *Slots) Full() (accounts, keys []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for a, n := range s.accounts {
		if n >= s.PerAccount {
			accounts = append(accounts, a)
		}
	}
	for k, n := range s.keys {
		if s.PerKey > 0 && n >= s.PerKey {
			keys = append(keys, k)
		}
	}
	return accounts, keys
}

// Pick returns the indexes, in order, of the offered units that fit: each only while the
// slots in all, its account's and its key's stay within their bounds, counting the work in
// flight and the units picked before it. It holds nothing; Hold holds what is started.
func (s *Slots) Pick(offered []Unit) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var pick []int
	accounts, keys := map[string]int{}, map[string]int{}
	for i, u := range offered {
		if s.total+len(pick) >= s.Max {
			break
		}
		if s.accounts[u.Account]+accounts[u.Account] >= s.PerAccount ||
			s.PerKey > 0 && s.keys[u.Key]+keys[u.Key] >= s.PerKey {
			continue
		}
		pick = append(pick, i)
		accounts[u.Account]++
		keys[u.Key]++
	}
	return pick
}

// Hold counts u in flight until Release.
func (s *Slots) Hold(u Unit) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.accounts == nil {
		s.accounts, s.keys = map[string]int{}, map[string]int{}
	}
	s.total++
	s.accounts[u.Account]++
	s.keys[u.Key]++
}

// Release ends u's time in flight.
func (s *Slots) Release(u Unit) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total--
	if s.accounts[u.Account]--; s.accounts[u.Account] <= 0 {
		delete(s.accounts, u.Account)
	}
	if s.keys[u.Key]--; s.keys[u.Key] <= 0 {
		delete(s.keys, u.Key)
	}
}

// RoundRobin orders work fairly between accounts: every account's first item, then every
// account's second, and so on, the accounts in the order their first items come. Given each
// account's work oldest first and the accounts longest waiting first, no account's backlog
// holds back another account's next item.
func RoundRobin[T any](items []T, account func(T) string) []T {
	var order []string
	byAccount := map[string][]T{}
	for _, it := range items {
		a := account(it)
		if _, ok := byAccount[a]; !ok {
			order = append(order, a)
		}
		byAccount[a] = append(byAccount[a], it)
	}
	out := make([]T, 0, len(items))
	for round := 0; len(out) < len(items); round++ {
		for _, a := range order {
			if its := byAccount[a]; round < len(its) {
				out = append(out, its[round])
			}
		}
	}
	return out
}

// Share is each account's equal part of n when accounts have work: at least one, and rounded up,
// so that n is used even when it does not divide evenly (the bound in all still holds).
func Share(n, accounts int) int {
	if accounts <= 0 {
		return n
	}
	return max(1, (n+accounts-1)/accounts)
}

// Room is how many more units of account fit when its bound is share instead of PerAccount:
// the rule of a worker whose share is an equal part of Max among the accounts with work.
func (s *Slots) Room(account string, share int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return min(share-s.accounts[account], s.Max-s.total)
}
