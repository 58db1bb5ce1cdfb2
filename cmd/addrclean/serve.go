package main

import (
	"context"
	"errors"
)

// cmdServe is not built yet.
func cmdServe(ctx context.Context, args []string, s streams) error {
	return withCode(exitFatal, errors.New("'addrclean serve' is not built yet"))
}
