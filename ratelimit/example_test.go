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
	if err := lim.Wait(ctx); err != nil {
		return // ctx is done
	}
	// ... send the request; on a 429 answer:
	lim.OnRateLimited(2 * time.Second) // every worker pauses 2s; the limit halves
	fmt.Println(lim.Rate())
	// ... and on each success:
	lim.OnSuccess()
	// Output: 10
}
