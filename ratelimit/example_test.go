package ratelimit_test

import (
	"context"
	"fmt"
	"time"

	"github.com/addrclean/addrclean/ratelimit"
)

func ExampleLimiter() {
	lim := ratelimit.New(20, 1) // --rate 20 --burst 1
	ctx := context.Background()

	// Before every attempt, retries included:
	sent, err := lim.Acquire(ctx)
	if err != nil {
		return // ctx is done
	}
	// ... send the request; on a 429 answer:
	sent.RateLimited(2 * time.Second) // every worker pauses 2s; the first cut halves the limit
	fmt.Println(lim.Rate())
	// Output: 10
}
