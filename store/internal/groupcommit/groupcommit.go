// Package groupcommit gives a database's single writer one committer (SQLite's, in waybill):
// the write transactions of concurrent callers share one database transaction and one COMMIT.
package groupcommit

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"sync/atomic"
)

// Committer gives SQLite's single writer one committer: the write transactions of concurrent
// callers run one after another inside one database transaction, each in its own savepoint, and
// one COMMIT (one fsync under synchronous=FULL) makes the whole batch durable. A caller whose
// function fails is rolled back to its savepoint and gets its error; the others still commit.
// Every caller is answered only after the COMMIT that holds its writes, and a failed COMMIT fails
// every caller in the batch.
type Committer struct {
	w     *sql.DB
	queue chan *txCall
	// pause, in tests, holds the committer after it takes a batch's first call, so calls pile up
	// (Pause).
	pause sync.Mutex
	// closing guards the queue against Close: a call is queued under its read lock only while
	// closed is false, so every queued call is still in the queue when stop closes, and the
	// committer answers it.
	closing sync.RWMutex
	closed  bool
	stop    chan struct{}
	stopped chan struct{}
	// calls counts the calls the committer has taken, commits the transactions it has ended.
	calls, commits atomic.Int64
}

// txCall is one caller's transaction function waiting for the committer.
type txCall struct {
	ctx  context.Context
	fn   func(ctx context.Context, tx *sql.Tx) error
	err  error
	done chan struct{}
}

// maxBatch bounds how many callers share one transaction, so one batch's latency stays short.
const maxBatch = 64

// New starts the committer of w, whose one connection it then owns for writes.
func New(w *sql.DB) *Committer {
	g := &Committer{w: w, queue: make(chan *txCall, maxBatch), stop: make(chan struct{}), stopped: make(chan struct{})}
	go g.loop()
	return g
}

// ErrClosed answers calls made after Close.
var ErrClosed = errors.New("store: database is closed")

// Run runs fn in a write transaction, committing when fn returns nil, and returns only after the
// COMMIT that holds fn's writes. fn's ctx is the caller's without its cancellation, so a caller
// that goes away never breaks a transaction it shares with others; a caller that leaves before
// its turn runs nothing and gets the context's error. fn must not call Run.
func (g *Committer) Run(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	c := &txCall{ctx: ctx, fn: fn, done: make(chan struct{})}
	g.closing.RLock()
	if g.closed {
		g.closing.RUnlock()
		return ErrClosed
	}
	select {
	case g.queue <- c:
	case <-ctx.Done():
		g.closing.RUnlock()
		return ctx.Err()
	}
	g.closing.RUnlock()
	// Once taken, the call is always answered: its writes may already be committed.
	<-c.done
	return c.err
}

// Close stops the committer after the batch in progress; later calls get ErrClosed.
func (g *Committer) Close() {
	g.closing.Lock()
	if !g.closed {
		g.closed = true
		close(g.stop)
	}
	g.closing.Unlock()
	<-g.stopped
}

// Stats reports how many calls the committer has taken and how many transactions it has ended.
func (g *Committer) Stats() (calls, commits int64) { return g.calls.Load(), g.commits.Load() }

// Pause holds the committer once it takes its next call, and Resume lets it go on: a test's calls
// made in between pile up and share one transaction.
func (g *Committer) Pause()  { g.pause.Lock() }
func (g *Committer) Resume() { g.pause.Unlock() }

// Arrived is how many calls have reached the committer: taken, or waiting to be.
func (g *Committer) Arrived() int64 { return g.calls.Load() + int64(len(g.queue)) }

func (g *Committer) loop() {
	defer close(g.stopped)
	for {
		var first *txCall
		select {
		case first = <-g.queue:
		case <-g.stop:
			for {
				select {
				case c := <-g.queue:
					c.err = ErrClosed
					close(c.done)
				default:
					return
				}
			}
		}
		g.calls.Add(1)
		g.pause.Lock()
		batch := []*txCall{first}
	gather:
		for len(batch) < maxBatch {
			select {
			case c := <-g.queue:
				g.calls.Add(1)
				batch = append(batch, c)
			default:
				break gather
			}
		}
		g.commit(batch)
		g.commits.Add(1)
		g.pause.Unlock()
		for _, c := range batch {
			close(c.done)
		}
	}
}

// commit runs one batch. A lone call runs as a plain transaction. A call whose caller left
// before its turn runs nothing and gets the context's error.
func (g *Committer) commit(batch []*txCall) {
	if len(batch) == 1 {
		c := batch[0]
		if c.err = c.ctx.Err(); c.err == nil {
			c.err = RunTx(context.WithoutCancel(c.ctx), g.w, c.fn)
		}
		return
	}
	tx, err := g.w.BeginTx(context.Background(), nil)
	if err != nil {
		for _, c := range batch {
			c.err = err
		}
		return
	}
	// The savepoint statements are prepared once a batch: executed as plain text, each call's
	// SAVEPOINT and RELEASE were parsed afresh, as much work as a call's own INSERT.
	sp, err := prepareSavepoints(tx)
	for _, c := range batch {
		if err != nil {
			break // the transaction itself failed: the whole batch fails below
		}
		if c.err = c.ctx.Err(); c.err != nil {
			continue // the caller left before its turn: nothing of it runs
		}
		err = sp.run(tx, c)
	}
	if err == nil {
		err = tx.Commit()
	} else {
		tx.Rollback()
	}
	if err != nil {
		for _, c := range batch {
			if c.err == nil {
				c.err = err
			}
		}
	}
}

// savepoints are the statements that wrap each call of a batch in its own savepoint.
type savepoints struct{ begin, release *sql.Stmt }

func prepareSavepoints(tx *sql.Tx) (savepoints, error) {
	ctx := context.Background()
	begin, err := tx.PrepareContext(ctx, "SAVEPOINT call")
	if err != nil {
		return savepoints{}, err
	}
	release, err := tx.PrepareContext(ctx, "RELEASE SAVEPOINT call")
	return savepoints{begin, release}, err
}

// run runs c's function in a savepoint of tx, setting c.err to its error; the returned error
// is one of the savepoint statements themselves, which leaves tx unusable. (The statements
// are closed with tx.)
func (s savepoints) run(tx *sql.Tx, c *txCall) error {
	ctx := context.Background()
	if _, err := s.begin.ExecContext(ctx); err != nil {
		return err
	}
	if c.err = c.fn(context.WithoutCancel(c.ctx), tx); c.err != nil {
		if _, err := tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT call"); err != nil {
			return err
		}
	}
	_, err := s.release.ExecContext(ctx)
	return err
}

// RunTx runs fn alone in its own transaction of w.
func RunTx(ctx context.Context, w *sql.DB, fn func(ctx context.Context, tx *sql.Tx) error) error {
	tx, err := w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(ctx, tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}
