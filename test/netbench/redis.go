package netbench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// barrierPoll is how often a client at a Redis barrier looks whether the
// others have come: Redis has no call that waits for a counter.
const barrierPoll = 20 * time.Millisecond

// keyPrefix is where the workload's keys live on a Redis server.
const keyPrefix = "netbench:"

// redisService is a Redis server holding the objects: a fetch is a GET,
// a small call a PING, a barrier an INCR'd counter.
type redisService struct {
	addr           string
	objects, pings *redis.Client
}

// NewRedis is the Redis server at addr (host:port).
func NewRedis(addr string) Service {
	opts := func(conns int) *redis.Options {
		// As the HTTP client has: one connection for the fetches, which
		// go one at a time, and PingConnections for the small calls,
		// which never wait behind an object or each other. No retries:
		// a failed call is measured. The calls' contexts bound them, as
		// the HTTP client's do: the run's end stops a fetch in flight, a
		// small call has its limit.
		return &redis.Options{Addr: addr, PoolSize: conns, MaxRetries: -1, Protocol: 2, DisableIdentity: true,
			ContextTimeoutEnabled: true, ReadTimeout: -1, WriteTimeout: -1, DialTimeout: 5 * time.Second}
	}
	return &redisService{addr: addr, objects: redis.NewClient(opts(1)), pings: redis.NewClient(opts(PingConnections))}
}

func objectKey(bytes int) string { return fmt.Sprintf("%sobject:%d", keyPrefix, bytes) }

// Prepare stores the object of bytes, unless a client before did: every
// client of a run fetches the same one.
func (s *redisService) Prepare(ctx context.Context, bytes int) error {
	if err := s.objects.SetNX(ctx, objectKey(bytes), strings.Repeat("\x00", bytes), 0).Err(); err != nil {
		return fmt.Errorf("storing the %d-byte object: %w", bytes, err)
	}
	return nil
}

func (s *redisService) Await(ctx context.Context, name string, size int) error {
	key := keyPrefix + "barrier:" + name
	n, err := s.objects.Incr(ctx, key).Result()
	if err != nil {
		return err
	}
	// The counter goes once its run is surely over.
	if err := s.objects.Expire(ctx, key, time.Hour).Err(); err != nil {
		return err
	}
	tick := time.NewTicker(barrierPoll)
	defer tick.Stop()
	for n < int64(size) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		if n, err = s.objects.Get(ctx, key).Int64(); err != nil {
			return err
		}
	}
	return nil
}

func (s *redisService) Fetch(ctx context.Context, bytes int) error {
	v, err := s.objects.Get(ctx, objectKey(bytes)).Result()
	if errors.Is(err, redis.Nil) {
		return fmt.Errorf("no %d-byte object on %s: not prepared", bytes, s.addr)
	}
	if err != nil {
		return err
	}
	if len(v) != bytes {
		return fmt.Errorf("the object on %s has %d bytes, want %d", s.addr, len(v), bytes)
	}
	return nil
}

func (s *redisService) Ping(ctx context.Context) error { return s.pings.Ping(ctx).Err() }

func (s *redisService) Close() error { return errors.Join(s.objects.Close(), s.pings.Close()) }

func (s *redisService) String() string { return "redis://" + s.addr }
