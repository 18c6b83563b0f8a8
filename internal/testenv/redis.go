package testenv

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis returns the URL of the test Redis (REDIS_URL, else
// redis://127.0.0.1:6379/0, which .ci/run starts) and a key prefix unique
// to t, whose keys are deleted when t ends. It fails t when Redis is down.
func Redis(t *testing.T) (url, prefix string) {
	t.Helper()
	url = os.Getenv("REDIS_URL")
	if url == "" {
		url = "redis://127.0.0.1:6379/0"
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("REDIS_URL: %v", err)
	}
	client := redis.NewClient(opts)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := client.Ping(ctx).Err(); err != nil {
		client.Close()
		t.Fatalf("Redis at %s is down (.ci/run starts one): %v", url, err)
	}
	prefix = fmt.Sprintf("expd-test:%s:%d:", t.Name(), time.Now().UnixNano())
	t.Cleanup(func() {
		defer client.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		// Libraries may put their own prefix before ours (redis_rate adds "rate:").
		iter := client.Scan(ctx, 0, "*"+prefix+"*", 100).Iterator()
		for iter.Next(ctx) {
			if err := client.Del(ctx, iter.Val()).Err(); err != nil {
				t.Errorf("cleaning up Redis key %s: %v", iter.Val(), err)
			}
		}
		if err := iter.Err(); err != nil {
			t.Errorf("cleaning up Redis keys %s*: %v", prefix, err)
		}
	})
	return url, prefix
}

// RedisKeys counts the keys under prefix, so tests can check they wrote
// to Redis and cleaned up.
func RedisKeys(t *testing.T, url, prefix string) int {
	t.Helper()
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	client := redis.NewClient(opts)
	defer client.Close()
	keys, err := client.Keys(context.Background(), "*"+prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	return len(keys)
}
