package shipping

import (
	"slices"
	"time"
)

// MaxPollBackoff bounds how long a label whose carrier keeps failing waits between polls.
const MaxPollBackoff = 24 * time.Hour

// Polled reports whether a label in status s is still polled from its carrier's Tracker: until
// it is in one of Unpolled, after which nothing a carrier reports changes it.
func Polled(status string) bool { return !slices.Contains(Unpolled, status) }

// Unpolled are the label statuses no longer polled: finished (DELIVERED, RETURN_TO_SENDER) or
// VOIDED.
var Unpolled = []string{LabelDelivered, LabelReturnToSender, LabelVoided}

// PolledStatuses are the other label statuses, those of the labels still polled: a poll round
// looks among these labels, which are in flight, rather than every label the carrier has had.
var PolledStatuses = slices.DeleteFunc(slices.Clone(LabelStatuses), func(s string) bool { return !Polled(s) })

// NextPoll is when a label is polled next, after a poll at now that was the failures-th failure
// in a row (0: the poll succeeded). A success waits interval; each failure in a row doubles the
// wait, up to MaxPollBackoff (or interval, if that is longer), so a carrier that is down is
// asked less and less often and a label is never given up.
func NextPoll(now time.Time, interval time.Duration, failures int) time.Time {
	wait := interval
	for range min(failures, 32) {
		if wait >= MaxPollBackoff {
			break
		}
		wait *= 2
	}
	if failures > 0 && wait > MaxPollBackoff {
		wait = max(MaxPollBackoff, interval)
	}
	return now.Add(wait)
}
