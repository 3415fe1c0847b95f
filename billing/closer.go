package billing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/waybill/waybill/shipping/work"
)

// Closer finalizes every DRAFT invoice whose period has ended, exactly once (a move is
// conditional on the status read), also after downtime: it looks for every ended period, not
// just the last one.
type Closer struct {
	Service *Service
	// Every is how often it looks for ended periods (default 1 min).
	Every time.Duration
	Log   *slog.Logger
}

// Run closes ended periods until ctx ends.
func (c *Closer) Run(ctx context.Context) error {
	every := c.Every
	if every <= 0 {
		every = time.Minute
	}
	work.Loop{Every: every, Log: c.log(), Name: "billing closer"}.Run(ctx, c.Drain)
	return nil
}

// Drain finalizes every DRAFT invoice whose period ended before today, then returns.
func (c *Closer) Drain(ctx context.Context) error {
	for {
		due, err := c.Service.Books.EndedDrafts(ctx, Day(c.Service.Now()), 100)
		if err != nil || len(due) == 0 {
			return err
		}
		for _, ref := range due {
			_, err := c.Service.Transition(ctx, ref.AccountID, ref.ID, Finalize)
			// Another closer (or an operator) finalizing it first is fine: it happened once.
			if err != nil && !errors.Is(err, ErrInvalidState) {
				return fmt.Errorf("finalizing invoice %s: %w", ref.ID, err)
			}
		}
	}
}

func (c *Closer) log() *slog.Logger {
	if c.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Log
}
