package main

import (
	"context"
	"errors"
)

// cmdVerify is not built yet.
func cmdVerify(ctx context.Context, args []string, s streams) error {
	return withCode(exitFatal, errors.New("'addrclean verify' is not built yet"))
}
