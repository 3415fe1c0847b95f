package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/waybill/waybill/shipping"
)

// Serials hands out stored carriers' tracking serials (shipping.SerialSource) from the blocks
// this process reserved, reserving the next block when it has none.
func (db *DB) Serials() shipping.SerialSource { return blockSerials{db} }

type blockSerials struct{ db *DB }

func (s blockSerials) NextSerial(ctx context.Context, carrier string, from, to int64) (int64, error) {
	for {
		if n, ok := s.db.serials.take(carrier, from, to); ok {
			return n, nil
		}
		if err := s.db.reserveSerials(ctx, &serialNeed{carrier, from, to}); err != nil {
			return 0, err
		}
	}
}

// serialNeed is a block a purchase lacks.
type serialNeed struct {
	carrier  string
	from, to int64
}

// serialBlocks are the tracking serials this process reserved ahead, by carrier: each block is
// taken from the carrier's row in a short transaction of its own, never past the range's end,
// so serials stay unique across processes and increase within one; a crash loses at most a
// block's unused serials (gaps are allowed, reuse never is).
type serialBlocks struct {
	// reserving is held while a block is reserved: reservations go one at a time. It is never
	// taken inside a purchase's transaction, and mu never across a query: a buy holding a
	// connection of the pool must not wait for a reservation that waits for a connection.
	reserving sync.Mutex
	mu        sync.Mutex // guards m
	m         map[string]*serialBlock
}

// serialBlock is one carrier's reserved serials, next to last, and how the next block is sized.
type serialBlock struct {
	next, last int64
	size       int64     // the size of the last block reserved
	at         time.Time // when it was reserved
}

// Block sizes follow the buy rate: a block used up within blockFast of its reservation makes
// the next one twice as large, up to maxBlock; one that lasted over blockSlow, half as large.
// At most a second's buys are lost in a crash.
const (
	maxBlock  = 1024
	blockFast = time.Second
	blockSlow = 10 * time.Second
)

// take hands out the next reserved serial of carrier from from to to.
func (b *serialBlocks) take(carrier string, from, to int64) (int64, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	blk := b.m[carrier]
	if blk == nil || blk.next > blk.last || blk.next < from || blk.next > to {
		return 0, false
	}
	blk.next++
	return blk.next - 1, true
}

// peek returns the serial this process hands out next for carrier, if it holds one.
func (b *serialBlocks) peek(carrier string) (int64, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if blk := b.m[carrier]; blk != nil && blk.next <= blk.last {
		return blk.next, true
	}
	return 0, false
}

// reserveSerials reserves the next block of need's carrier, from need.from, never past need.to,
// in a transaction of its own; shipping.ErrTrackingNumbersExhausted when no serial is left.
// One reservation at a time per process: buys that lack serials meanwhile find the new block.
func (db *DB) reserveSerials(ctx context.Context, need *serialNeed) error {
	b := &db.serials
	b.reserving.Lock()
	defer b.reserving.Unlock()
	b.mu.Lock()
	if b.m == nil {
		b.m = map[string]*serialBlock{}
	}
	blk := b.m[need.carrier]
	if blk == nil {
		blk = &serialBlock{next: 1}
		b.m[need.carrier] = blk
	}
	fresh := blk.next <= blk.last && blk.next >= need.from && blk.next <= need.to
	b.mu.Unlock()
	if fresh {
		return nil // another buy reserved one meanwhile
	}
	size := int64(1)
	if !blk.at.IsZero() {
		switch since := time.Since(blk.at); {
		case since < blockFast:
			size = min(2*blk.size, maxBlock)
		case since > blockSlow:
			size = max(1, blk.size/2)
		default:
			size = blk.size
		}
	}
	var first, last int64
	err := db.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		var next int64
		err := tx.QueryRowContext(ctx, `SELECT next_serial FROM carriers WHERE code = $1`+db.forUpdate(), need.carrier).Scan(&next)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("carrier %s is not stored: it has no tracking serials", need.carrier)
		}
		if err != nil {
			return err
		}
		first = max(next, need.from)
		last = min(first+size-1, need.to)
		if last < first {
			return shipping.ErrTrackingNumbersExhausted
		}
		_, err = tx.ExecContext(ctx, `UPDATE carriers SET next_serial = $1 WHERE code = $2`, last+1, need.carrier)
		return err
	})
	if err != nil {
		return err
	}
	b.mu.Lock()
	blk.next, blk.last, blk.size, blk.at = first, last, size, time.Now()
	b.mu.Unlock()
	return nil
}
